package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review r6: the worker interrupt shield (Worker.shield, Lifecycle.ended). A task running on a
 * worker ends another pool (here: {@code shutdown()} of an idle pool, whose termination runs inline
 * on the caller); that pool's {@code whenTerminated()} dependent runs on the worker, shielded, and
 * blocks. A {@code shutdownNow()} arrives meanwhile: its interrupt must wait for the shield to lift
 * (the dependent never sees it) and then reach the task (it is not lost).
 */
@Timeout(60)
class R6ShieldTest {
  private static final Duration HOUR = Duration.ofHours(1);
  @AutoClose final PoolFixture fixture = new PoolFixture();

  /** What the dependent saw, and whether the task had the interrupt after the dependent. */
  private record Seen(boolean dependentInterrupted, boolean taskInterruptedAfter) { }

  /**
   * Runs {@code onto}'s task that shuts down an idle pool with a blocking dependent, fires
   * {@code stop} while the dependent blocks, and reports what the dependent and the task saw.
   */
  private Seen run(WorkerPool onto, Runnable stop) throws Exception {
    WorkerPool other = fixture.pool("r6other", b -> b.capacity(1).maxIdle(HOUR));
    CountDownLatch inDependent = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<Boolean> dependent = new CompletableFuture<>();
    other.whenTerminated().thenRun(() -> {
      inDependent.countDown();
      try {
        dependent.complete(!release.await(30, TimeUnit.SECONDS)); // a timeout also fails
      } catch (InterruptedException e) {
        dependent.complete(true);
      }
    });
    CompletableFuture<Boolean> task = new CompletableFuture<>();
    onto.execute(() -> {
      other.shutdown(); // terminates inline: the dependent runs here, on this worker
      task.complete(Thread.currentThread().isInterrupted());
    });
    PoolFixture.await(inDependent);
    stop.run();
    release.countDown();
    return new Seen(dependent.get(30, TimeUnit.SECONDS), task.get(30, TimeUnit.SECONDS));
  }

  /** HELD: a pool's own shutdownNow is owed until the shield lifts, then reaches the task. */
  @Test
  void heldAPoolsShutdownNowWaitsForTheShieldAndThenReachesTheTask() throws Exception {
    WorkerPool pool = fixture.pool("r6shield", b -> b.capacity(2).maxIdle(HOUR));
    Seen seen = run(pool, pool::shutdownNow);
    assertThat(seen).isEqualTo(new Seen(false, true));
  }

  /**
   * The parent's shutdownNow, with the task running in a subpool: the parent first calls each
   * child's shutdownNow ({@code Lifecycle.shutdownNowLine}), whose envelope interrupt bypasses the
   * shield as below; the parent's own interruptToStop is owed correctly (the task has it after).
   */
  @Test
  void guarantee9_aParentsShutdownNowNeverReachesADependentASubpoolTaskRunsShielded()
      throws Exception {
    WorkerPool parent = fixture.pool("r6shieldp", b -> b.capacity(2).maxIdle(HOUR));
    WorkerPool sub = parent.newSubpool("s", 2);
    Seen seen = run(sub, parent::shutdownNow);
    assertThat(seen).isEqualTo(new Seen(false, true));
  }

  /**
   * A subpool's shutdownNow interrupts its running tasks through the task's envelope
   * ({@code Subpool.shutdownNow}: {@code s.interrupt()}, i.e. {@code runner.interrupt()}), not
   * through the worker's {@code interruptToStop}: the shield is bypassed, the dependent another
   * pool runs on that worker sees the interrupt (and, here, consumes it, so the task never does).
   */
  @Test
  void guarantee9_aSubpoolsShutdownNowNeverReachesADependentItsTaskRunsShielded()
      throws Exception {
    WorkerPool parent = fixture.pool("r6shields", b -> b.capacity(2).maxIdle(HOUR));
    WorkerPool sub = parent.newSubpool("s", 2);
    Seen seen = run(sub, sub::shutdownNow);
    assertThat(seen).as("(dependent saw the interrupt, task had it after)")
        .isEqualTo(new Seen(false, true));
  }
}
