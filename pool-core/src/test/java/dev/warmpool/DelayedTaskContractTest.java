package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The {@code ScheduledFuture} contract of a pool's and a lane's timers, which are their own future
 * (issue 33: one object per timer, no {@code FutureTask} inside): values and exceptions through
 * {@code get}, with and without a timeout, interrupted waits, cancel before, during and after a
 * run (the interrupt reaches that run only), {@code getDelay}/{@code compareTo}, periodic tasks,
 * and how shutdown, shutdownNow, a reboot and a lane's close end them (guarantee 7).
 */
class DelayedTaskContractTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  @Test
  void guarantee7_aTimersFutureGivesTheValueTheExceptionOrNullOfItsRun() throws Exception {
    WorkerPool pool = fixture.pool("contract-value-", b -> b.capacity(2));
    ScheduledFuture<Integer> value = pool.schedule(() -> 42, 1, TimeUnit.MILLISECONDS);
    ScheduledFuture<Integer> failing = pool.schedule(() -> {
      throw new IOException("boom");
    }, 1, TimeUnit.MILLISECONDS);
    ScheduledFuture<?> runnable = pool.schedule(() -> { }, 0, TimeUnit.MILLISECONDS);

    assertThat(value.get(10, TimeUnit.SECONDS)).isEqualTo(42);
    assertThat(value.isDone()).isTrue();
    assertThat(value.isCancelled()).isFalse();
    assertThatThrownBy(() -> failing.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class).cause().isInstanceOf(IOException.class)
        .hasMessage("boom");
    assertThatThrownBy(failing::get).isInstanceOf(ExecutionException.class);
    assertThat(failing.isDone()).isTrue();
    assertThat(failing.isCancelled()).isFalse();
    assertThat(failing.cancel(true)).as("cancel after the run").isFalse();
    assertThat(runnable.get()).isNull();
    assertThat(value.cancel(false)).isFalse();
    assertThat(value.get()).as("a cancel after the run changes nothing").isEqualTo(42);
  }

  @Test
  void guarantee7_getTimesOutOnAPendingTimerAndAnInterruptedWaiterLeavesTheOthersWaiting()
      throws Exception {
    WorkerPool pool = fixture.pool("contract-get-", b -> b.capacity(1));
    ScheduledFuture<Integer> f = pool.schedule(() -> 1, 1, TimeUnit.HOURS);
    assertThatThrownBy(() -> f.get(0, TimeUnit.NANOSECONDS)).isInstanceOf(TimeoutException.class);
    assertThatThrownBy(() -> f.get(5, TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
    assertThatThrownBy(() -> f.get(-1, TimeUnit.SECONDS)).isInstanceOf(TimeoutException.class);

    // Three waiters; the middle one is interrupted and leaves; the other two hear the cancel.
    List<Thread> waiters = new ArrayList<>();
    List<Object> outcomes = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch ended = new CountDownLatch(3);
    for (int i = 0; i < 3; i++) {
      boolean timed = i == 2;
      Thread t = new Thread(() -> {
        try {
          outcomes.add(timed ? f.get(1, TimeUnit.HOURS) : f.get());
        } catch (Exception e) {
          outcomes.add(e.getClass());
        } finally {
          ended.countDown();
        }
      });
      t.start();
      waiters.add(t);
    }
    for (Thread t : waiters) {
      spinUntil(() -> t.getState() == Thread.State.WAITING
          || t.getState() == Thread.State.TIMED_WAITING);
    }
    waiters.get(1).interrupt();
    spinUntil(() -> outcomes.size() == 1);
    assertThat(outcomes).containsExactly(InterruptedException.class);
    assertThat(f.cancel(false)).isTrue();
    assertThat(ended.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(outcomes).containsExactlyInAnyOrder(InterruptedException.class,
        CancellationException.class, CancellationException.class);
    assertThatThrownBy(f::get).isInstanceOf(CancellationException.class);
    assertThat(f.isDone()).isTrue();
    assertThat(f.isCancelled()).isTrue();
  }

  @Test
  void guarantee7_cancelBeforeTheRunMeansNoRunAndCancelDuringItReachesThatRunOnly()
      throws Exception {
    WorkerPool pool = fixture.pool("contract-cancel-", b -> b.capacity(1));
    // Before: never runs.
    AtomicInteger ran = new AtomicInteger();
    ScheduledFuture<?> before = pool.schedule(ran::incrementAndGet, 1, TimeUnit.HOURS);
    assertThat(before.cancel(true)).isTrue();
    assertThat(before.cancel(true)).isFalse();
    assertThat(before.isCancelled()).isTrue();
    assertThat(((AbstractWorkerPool) pool).delayedCount()).isZero();

    // During, with interrupt: the run is interrupted; the worker's next task is not.
    CountDownLatch running = new CountDownLatch(1);
    AtomicBoolean sawInterrupt = new AtomicBoolean();
    ScheduledFuture<?> during = pool.schedule(() -> {
      running.countDown();
      try {
        Thread.sleep(30_000);
      } catch (InterruptedException e) {
        sawInterrupt.set(true);
      }
    }, 0, TimeUnit.MILLISECONDS);
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(during.cancel(true)).isTrue();
    assertThatThrownBy(during::get).isInstanceOf(CancellationException.class);
    AtomicBoolean nextInterrupted = new AtomicBoolean(true);
    pool.submit(() -> nextInterrupted.set(Thread.currentThread().isInterrupted())).get();
    assertThat(sawInterrupt).isTrue();
    assertThat(nextInterrupted).as("the interrupt reached the next task").isFalse();

    // During, without interrupt: the run finishes undisturbed, the future stays cancelled.
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch started = new CountDownLatch(1);
    AtomicBoolean finished = new AtomicBoolean();
    ScheduledFuture<Integer> gentle = pool.schedule(() -> {
      started.countDown();
      release.await();
      finished.set(true);
      return 7;
    }, 0, TimeUnit.MILLISECONDS);
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(gentle.cancel(false)).isTrue();
    release.countDown();
    pool.submit(() -> { }).get();
    assertThat(finished).isTrue();
    assertThat(gentle.isCancelled()).isTrue();
    assertThatThrownBy(gentle::get).isInstanceOf(CancellationException.class);
    assertThat(ran).hasValue(0);
  }

  /**
   * A timer is accepted work from when it is due (WorkerPool.TaskTimer's "from acceptance"): its
   * wait leaves out its delay, on the pool and on a lane, for a one-shot and a periodic timer.
   */
  @Test
  void aTimersWaitIsMeasuredFromWhenItCameDueNotFromTheScheduleCall() throws Exception {
    WorkerPool pool = fixture.pool("contract-wait-", b -> b.capacity(2));
    List<Long> waits = Collections.synchronizedList(new ArrayList<>());
    pool.setTaskTimer((wait, run) -> waits.add(wait));
    long delay = TimeUnit.MILLISECONDS.toNanos(50);
    SerialExecutor lane = pool.newSerialExecutor();
    CountDownLatch ran = new CountDownLatch(3);
    long scheduledAt = System.nanoTime();
    pool.schedule(ran::countDown, delay, TimeUnit.NANOSECONDS);
    lane.schedule(ran::countDown, delay, TimeUnit.NANOSECONDS);
    ScheduledFuture<?> periodic =
        pool.scheduleAtFixedRate(ran::countDown, delay, TimeUnit.HOURS.toNanos(1),
            TimeUnit.NANOSECONDS);
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    spinUntil(() -> waits.size() == 3);
    long elapsed = System.nanoTime() - scheduledAt;
    assertThat(waits).allSatisfy(w -> assertThat(w).isNotNegative()
        .as("came due %d ns after the schedule", delay).isLessThanOrEqualTo(elapsed - delay));
    periodic.cancel(false);
  }

  @Test
  void getDelayAndCompareToOrderTimersByTheirDeadline() {
    WorkerPool pool = fixture.pool("contract-delay-", b -> b.capacity(1));
    ScheduledFuture<?> hour = pool.schedule(() -> { }, 1, TimeUnit.HOURS);
    ScheduledFuture<?> twoHours = pool.schedule(() -> { }, 2, TimeUnit.HOURS);
    ScheduledFuture<?> lane = pool.newSerialExecutor().schedule(() -> { }, 3, TimeUnit.HOURS);
    assertThat(hour.getDelay(TimeUnit.MINUTES)).isBetween(58L, 60L);
    assertThat(twoHours.getDelay(TimeUnit.SECONDS)).isBetween(7100L, 7200L);
    assertThat(hour.compareTo(twoHours)).isNegative();
    assertThat(twoHours.compareTo(hour)).isPositive();
    assertThat(lane.compareTo(twoHours)).isPositive();
    assertThat(hour.compareTo(hour)).isZero();
    hour.cancel(false);
    twoHours.cancel(false);
    lane.cancel(false);
  }

  @Test
  void guarantee7_aPeriodicTimerRunsUntilCancelledOrUntilARunThrows() throws Exception {
    WorkerPool pool = fixture.pool("contract-periodic-", b -> b.capacity(2));
    CountDownLatch three = new CountDownLatch(3);
    ScheduledFuture<?> rate =
        pool.scheduleAtFixedRate(three::countDown, 0, 1, TimeUnit.MILLISECONDS);
    assertThat(((java.util.concurrent.RunnableScheduledFuture<?>) rate).isPeriodic()).isTrue();
    assertThat(three.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(rate.isDone()).isFalse();
    assertThat(rate.cancel(false)).isTrue();
    assertThatThrownBy(() -> rate.get(1, TimeUnit.SECONDS))
        .isInstanceOf(CancellationException.class);

    AtomicInteger runs = new AtomicInteger();
    ScheduledFuture<?> failing = pool.scheduleWithFixedDelay(() -> {
      if (runs.incrementAndGet() == 2) {
        throw new IllegalStateException("second run");
      }
    }, 0, 1, TimeUnit.MILLISECONDS);
    assertThatThrownBy(() -> failing.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class).cause().hasMessage("second run");
    assertThat(failing.isCancelled()).isFalse();
    assertThat(runs).hasValue(2);
    // The run leaves the pool's timers right after it completed the future (as before, when a
    // FutureTask's waiters woke before the timer forgot itself).
    spinUntil(() -> ((AbstractWorkerPool) pool).delayedCount() == 0);
  }

  /** Guarantee 7: shutdown cancels the timers not yet due, oldest first, each told once. */
  @Test
  void guarantee7_shutdownCancelsPendingTimersOldestFirst() throws Exception {
    WorkerPool pool = fixture.pool("contract-shutdown-", b -> b.capacity(1));
    List<Integer> told = Collections.synchronizedList(new ArrayList<>());
    List<ScheduledFuture<?>> futures = new ArrayList<>();
    SerialExecutor lane = pool.newSerialExecutor();
    for (int i = 0; i < 6; i++) {
      int id = i;
      CancellationAware t = new CancellationAware() {
        @Override
        public void run() {
          throw new AssertionError("ran");
        }

        @Override
        public void onCancel() {
          told.add(id);
        }
      };
      // later timers come due earlier: the order is the schedule's, not the deadline's
      long hours = 10 - i;
      futures.add(i % 2 == 0 ? pool.schedule(t, hours, TimeUnit.HOURS)
          : lane.schedule(t, hours, TimeUnit.HOURS));
    }
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(futures).allMatch(ScheduledFuture::isCancelled);
    assertThat(told).containsExactly(0, 1, 2, 3, 4, 5);

    // A reboot takes timers again; the old futures stay cancelled.
    pool.reboot();
    assertThat(pool.schedule(() -> 5, 0, TimeUnit.MILLISECONDS).get(10, TimeUnit.SECONDS))
        .isEqualTo(5);
    assertThat(futures).allMatch(ScheduledFuture::isCancelled);
  }

  /**
   * Guarantee 7: shutdownNow hands back a due timer that waits in line: a runnable's as submitted
   * (its future cancelled), a callable's as its future, which runs it and completes with its value.
   */
  @Test
  void guarantee7_shutdownNowHandsBackDueTimersAndACallablesFutureStillRunsIt() throws Exception {
    WorkerPool pool = fixture.pool("contract-now-", b -> b.capacity(1));
    PoolFixture.Gate gate = fixture.occupy(pool);
    AtomicInteger ran = new AtomicInteger();
    Runnable task = ran::incrementAndGet;
    ScheduledFuture<?> runnable = pool.schedule(task, 0, TimeUnit.MILLISECONDS);
    ScheduledFuture<Integer> callable = pool.schedule(() -> 9, 0, TimeUnit.MILLISECONDS);
    spinUntil(() -> pool.stats().waiting() == 2);
    List<Runnable> back = pool.shutdownNow();
    gate.open();
    assertThat(back).hasSize(2).contains(task);
    assertThat(runnable.isCancelled()).isTrue();
    assertThat(callable.isDone()).isFalse();
    Runnable callableBack = back.get(back.indexOf(task) == 0 ? 1 : 0);
    assertThat(callableBack).isSameAs(callable);
    callableBack.run();
    assertThat(callable.get()).isEqualTo(9);
    assertThat(ran).hasValue(0);
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  /** Section 5: closing a lane cancels its timers, due (waiting in the lane) or not. */
  @Test
  void section5_closingALaneCancelsItsPendingAndItsDueTimers() throws Exception {
    WorkerPool pool = fixture.pool("contract-lane-", b -> b.capacity(2));
    SerialExecutor lane = pool.newSerialExecutor();
    PoolFixture.Gate gate = fixture.occupy(lane);
    AtomicInteger ran = new AtomicInteger();
    ScheduledFuture<?> pending = lane.schedule(ran::incrementAndGet, 1, TimeUnit.HOURS);
    ScheduledFuture<?> due = lane.schedule(ran::incrementAndGet, 0, TimeUnit.MILLISECONDS);
    AtomicReference<Future<?>> periodic = new AtomicReference<>(
        lane.scheduleAtFixedRate(ran::incrementAndGet, 0, 1, TimeUnit.HOURS));
    lane.close();
    gate.open();
    assertThat(pending.isCancelled()).isTrue();
    assertThat(due.isCancelled()).isTrue();
    assertThat(periodic.get().isCancelled()).isTrue();
    pool.submit(() -> { }).get();
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ran).hasValue(0);
    assertThat(((SerialLane) lane).pendingTimers()).isZero();
    assertThat(((AbstractWorkerPool) pool).delayedCount()).isZero();
  }

  private static void spinUntil(java.util.function.BooleanSupplier condition) {
    assertThat(PoolFixture.waitUntil(java.time.Duration.ofSeconds(10), condition)).isTrue();
  }
}
