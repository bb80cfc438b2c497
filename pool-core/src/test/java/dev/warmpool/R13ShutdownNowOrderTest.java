package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Review r13, F2: shutdownNow halts the processing of waiting tasks across levels. A parent's
 * shutdownNow used to hand back and interrupt its subpools first and drain its own line after: a
 * subpool task that ended at that interrupt gave its worker to the parent's line, which still
 * served it, so the parent's waiting task ran during the call (and was not in the returned list).
 * Now a subpool shut down by an ancestor's shutdownNow hands back and leaves the interrupt to the
 * ancestor, which interrupts every task running under it once its own line is handed back too.
 */
class R13ShutdownNowOrderTest {
  private static final Duration HOUR = Duration.ofHours(1);

  @AutoClose final PoolFixture fixture = new PoolFixture();

  /**
   * r13's instrument: a timer that, handed back by a {@code shutdownNow} (told on its caller's
   * thread, in the middle of the call), counts in {@code cancels} and waits there, at most 1 s,
   * for a waiting task to run ({@code ran}).
   */
  static CancellationAware instrument(CountDownLatch ran, AtomicInteger cancels) {
    return new CancellationAware() {
      @Override
      public void run() {}

      @Override
      public void onCancel() {
        cancels.incrementAndGet();
        PoolFixture.awaitQuietly(ran, Duration.ofSeconds(1));
      }
    };
  }

  /** A task that waits in a line: counts its runs and opens {@code ran}. */
  static Runnable waitingTask(AtomicInteger runs, CountDownLatch ran) {
    return () -> {
      runs.incrementAndGet();
      ran.countDown();
    };
  }

  /**
   * The instrument (r13's): a due timer of the subpool, handed back by the same call, hears
   * {@code onCancel} on the caller's thread, between the subpool's hand-back and the parent's
   * drain; it waits there (bounded, 1 s) for the parent's queued task to run. Before the fix the
   * subpool's interrupt had freed the only seat by then, and the task ran: failed 4/4 (r13).
   */
  @Test
  void guarantee9_aParentsWaitingTaskIsHandedBackNotRunOnASeatItsSubpoolsInterruptFreed()
      throws InterruptedException {
    WorkerPool root = fixture.pool("r13order", b -> b.capacity(1).maxIdle(HOUR));
    WorkerPool sub = root.newSubpool("sub", 1);
    PoolFixture.Gate gate = fixture.occupy(sub); // returns when interrupted
    AtomicInteger parentRuns = new AtomicInteger();
    CountDownLatch parentTaskRan = new CountDownLatch(1);
    Runnable parentTask = waitingTask(parentRuns, parentTaskRan);
    AtomicInteger timerCancels = new AtomicInteger();
    CancellationAware timer = instrument(parentTaskRan, timerCancels);
    sub.schedule(timer, 0, TimeUnit.MILLISECONDS); // due at once: waits in the subpool's line
    PoolFixture.awaitWaiting(sub, 1);
    root.enqueue(parentTask); // waits in the parent's line: its only seat is the subpool's
    PoolFixture.awaitWaiting(root, 1);

    List<Runnable> back = root.shutdownNow();
    // The subpool's running task is still interrupted: by the root, after its line was handed back.
    PoolFixture.eventually().until(gate::wasInterrupted);

    assertThat(timerCancels).hasValue(1);
    assertThat(parentRuns).as("the parent's waiting task ran after shutdownNow began").hasValue(0);
    assertThat(back).contains(parentTask);
    assertThat(root.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }
}
