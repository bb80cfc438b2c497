package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review r7: the worker interrupt shield ({@code Worker.interruptToStop}). An interrupter that finds
 * the shield INTERRUPTING returns at once ("another interrupter's interrupt is landing; one is
 * enough"). But the other interrupt may already have landed and been consumed by the task: a task
 * that handles one interrupt (a {@code cancel(true)}, which does not cancel a started task) and goes
 * on must still get the next one ({@code shutdownNow}'s), as a plain {@code Thread.interrupt()} or
 * {@code ThreadPoolExecutor} gives it. The window is from the first interrupter's CAS to its
 * {@code shield = OPEN}: a few instructions, unless the thread's {@code interrupt()} is slow (a
 * hostile or instrumented factory's thread, or the first interrupter is descheduled there).
 */
@Timeout(60)
class R7ShieldTest {
  private static final Duration HOUR = Duration.ofHours(1);
  @AutoClose final PoolFixture fixture = new PoolFixture();

  /** Threads whose first interrupt() sets the flag, then blocks until released. */
  private static final class SlowFirstInterrupt {
    final CountDownLatch inSlowInterrupt = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    final AtomicBoolean first = new AtomicBoolean(true);

    Thread make(Runnable r) {
      Thread t = new Thread(r) {
        @Override
        public void interrupt() {
          super.interrupt();
          if (first.compareAndSet(true, false)) {
            inSlowInterrupt.countDown();
            PoolFixture.awaitQuietly(release, Duration.ofSeconds(30));
          }
        }
      };
      t.setDaemon(true);
      return t;
    }
  }

  /**
   * A task that swallows its first interrupt and then waits for a second; reports whether it came
   * (false after 20 s without it).
   */
  private static Runnable twoInterrupts(CountDownLatch started, CountDownLatch sawFirst,
      CompletableFuture<Boolean> sawSecond) {
    return () -> {
      started.countDown();
      try {
        Thread.sleep(30_000);
        sawSecond.completeExceptionally(new AssertionError("first interrupt never came"));
        return;
      } catch (InterruptedException first) {
        sawFirst.countDown(); // handled: a cancel(true) of a started task does not cancel it
      }
      try {
        Thread.sleep(20_000);
        sawSecond.complete(false);
      } catch (InterruptedException second) {
        sawSecond.complete(true);
      }
    };
  }

  private void secondInterruptReachesTheTask(String name,
      Function<WorkerPool, WorkerPool> taskPool, boolean firstIsCancel) throws Exception {
    SlowFirstInterrupt factory = new SlowFirstInterrupt();
    WorkerPool pool = fixture.pool(name, b -> b.capacity(2).maxIdle(HOUR)
        .threadFactory(factory::make));
    WorkerPool where = taskPool.apply(pool);
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch sawFirst = new CountDownLatch(1);
    CompletableFuture<Boolean> sawSecond = new CompletableFuture<>();
    TaskHandle h = where.enqueue(twoInterrupts(started, sawFirst, sawSecond));
    PoolFixture.await(started);
    // the first interrupt: lands at once, then its interrupter is held inside interrupt()
    PoolFixture.Caller<Void> firstInterrupter = fixture.call("first", () -> {
      if (firstIsCancel) {
        h.cancel(true);
      } else {
        where.shutdownNow();
      }
    });
    PoolFixture.await(factory.inSlowInterrupt);
    PoolFixture.await(sawFirst); // the task handled it and waits again
    pool.shutdownNow(); // its interrupt must reach the running task
    factory.release.countDown();
    firstInterrupter.result();
    assertThat(sawSecond.get(30, TimeUnit.SECONDS))
        .as("the task got shutdownNow's interrupt after it handled an earlier one").isTrue();
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
  }

  /**
   * Was a fault (review r7): cancel(true) of a running task, then shutdownNow of its pool while the first
   * interrupter is still inside the thread's interrupt(): shutdownNow's interrupt is dropped; the
   * task runs on as if the pool had never been stopped.
   */
  @Test
  void guarantee9_shutdownNowsInterruptIsNeverLostBehindAnEarlierCancelInterrupt()
      throws Exception {
    secondInterruptReachesTheTask("r7cancel", p -> p, true);
  }

  /** Was a fault (review r7): the same with a subpool's shutdownNow first and the parent's second. */
  @Test
  void guarantee9_aParentsShutdownNowIsNeverLostBehindItsSubpoolsShutdownNow() throws Exception {
    secondInterruptReachesTheTask("r7sub", p -> p.newSubpool("s", 1), false);
  }

  /**
   * Was a fault (review r7): r6's hostile-factory test with an {@link Error} from {@code interrupt()} instead of a
   * {@code SecurityException}: {@code Worker.interrupt(Thread)} catches only RuntimeException, so
   * the Error leaves {@code interruptAll} and shutdownNow throws it after it took the line's tasks
   * out (HANDED_BACK): the list that held them is lost, two accepted tasks neither run nor come
   * back.
   */
  @Test
  void guarantee4_shutdownNowHandsBackTheLineEvenIfAWorkersInterruptThrowsAnError()
      throws Exception {
    WorkerPool pool = fixture.pool("r7hostile", b -> b.capacity(1).maxIdle(HOUR)
        .threadFactory(r -> {
          Thread t = new Thread(r) {
            @Override
            public void interrupt() {
              throw new AssertionError("r7: interrupt refused with an Error");
            }
          };
          t.setDaemon(true);
          return t;
        }));
    PoolFixture.Gate gate = fixture.occupy(pool);
    Runnable a = () -> { };
    Runnable b = () -> { };
    TaskHandle ha = pool.enqueue(a);
    TaskHandle hb = pool.enqueue(b);
    java.util.List<Runnable> back = new java.util.ArrayList<>();
    Throwable thrown = null;
    try {
      back.addAll(pool.shutdownNow());
    } catch (RuntimeException | Error e) {
      thrown = e;
    }
    gate.open();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ha.isDone() && hb.isDone()).isTrue();
    assertThat(back).as("shutdownNow threw %s", String.valueOf(thrown)).containsExactly(a, b);
  }
}
