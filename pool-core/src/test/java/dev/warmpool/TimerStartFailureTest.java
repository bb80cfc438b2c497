package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Suspected items of the fault review, decided here: the shared timer and the cleaner survive a
 * timer thread that cannot be started (an {@code OutOfMemoryError: unable to create native
 * thread}), and a cleaner whose scheduling failed is scheduled again later.
 */
class TimerStartFailureTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  /** Makes timer threads, except that the first {@code failures} starts throw. */
  private static Function<Runnable, Thread> failingFirst(int failures, AtomicInteger calls) {
    return loop -> {
      if (calls.incrementAndGet() <= failures) {
        throw new OutOfMemoryError("injected: unable to create native thread");
      }
      return SharedTimer.newTimerThread(loop);
    };
  }

  private static SharedTimer.Task latchTask(CountDownLatch fired) {
    return new SharedTimer.Task() {
      @Override
      void fire() {
        fired.countDown();
      }
    };
  }

  @Test
  void aFailedTimerThreadStartLeavesNothingScheduledAndTheNextScheduleWorks() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    SharedTimer timer = new SharedTimer(failingFirst(1, calls));
    CountDownLatch lost = new CountDownLatch(1);
    assertThatThrownBy(() -> timer.schedule(latchTask(lost), System.nanoTime()))
        .isInstanceOf(OutOfMemoryError.class);
    assertThat(timer.size()).as("nothing held without a thread to fire it").isZero();
    assertThat(timer.isRunning()).isFalse();

    CountDownLatch fired = new CountDownLatch(1);
    timer.schedule(latchTask(fired), System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1));
    assertThat(fired.await(10, TimeUnit.SECONDS)).as("fires after the failed start").isTrue();
    assertThat(lost.getCount()).as("the refused task never fires").isEqualTo(1);
    assertThat(calls.get()).isEqualTo(2);
  }

  @Test
  void aCleanerWhoseTimerCannotStartDoesNotThrowAndIsScheduledByTheNextUpdate()
      throws Exception {
    WorkerPool pool = fixture.track(WorkerPool.builder().name(PoolFixture.uniqueName("cleaner"))
        .capacity(1).maxIdle(Duration.ofHours(1)).build());
    CountDownLatch ran = new CountDownLatch(1);
    pool.execute(ran::countDown); // one worker lives: the cleaner is wanted
    PoolFixture.await(ran);
    AtomicInteger calls = new AtomicInteger();
    SharedTimer timer = new SharedTimer(failingFirst(1, calls));
    Cleaner cleaner = new Cleaner(((BoundedPool) pool).engine.idleWorkers, TimeUnit.HOURS.toNanos(1), timer);

    cleaner.update(); // the caller has just started a worker: no exception may reach it
    assertThat(timer.size()).as("not scheduled after the failed start").isZero();
    cleaner.update();
    assertThat(timer.size()).as("scheduled by the next update").isEqualTo(1);
    pool.shutdown();
    cleaner.update();
    assertThat(timer.size()).as("cancelled once the pool no longer runs").isZero();
  }
}
