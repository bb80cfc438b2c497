package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * Review r10 of the one-object core timer ({@link DelayedTask}, m4): its {@code ScheduledFuture}
 * contract where it is the JDK's (compared with {@link ScheduledThreadPoolExecutor}), and its
 * late-bound hand-off handle. Faults are {@code @Disabled("r10 fault Fn: ...")} so that the build
 * stays green; the JDK rows are enabled and pass.
 */
class R10TimerReviewTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  /** A worker thread whose {@code interrupt()} throws while {@code hostile} is set. */
  private static ThreadFactory throwingInterrupts(String name, AtomicBoolean hostile) {
    AtomicInteger ids = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + ids.incrementAndGet()) {
        @Override
        public void interrupt() {
          if (hostile.get()) {
            throw new SecurityException("r10: this thread may not be interrupted");
          }
          super.interrupt();
        }
      };
      t.setDaemon(true);
      return t;
    };
  }

  /**
   * The JDK's contract: {@code cancel(true)} whose interrupt of the running thread throws still
   * completes the future (cancelled) and wakes every waiter in {@code get}, while the run goes on.
   * Returns whether the waiter woke before the run was released.
   */
  private boolean aWaiterWakesWhenCancelTrueCannotInterrupt(
      ScheduledExecutorService ses, AtomicBoolean hostile) throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ScheduledFuture<?> f = ses.schedule(() -> {
      started.countDown();
      boolean done = false;
      while (!done) {
        try {
          done = release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          // the hostile thread is never interrupted; stay until released
        }
      }
    }, 0, TimeUnit.NANOSECONDS);
    PoolFixture.await(started);
    PoolFixture.Caller<Throwable> waiter = fixture.call("get", () -> {
      try {
        f.get();
        return null;
      } catch (Throwable t) {
        return t;
      }
    });
    // the waiter parks in get before the cancel
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10),
        () -> waiter.thread().getState() == Thread.State.WAITING)).isTrue();
    Throwable fromCancel = null;
    try {
      f.cancel(true);
    } catch (SecurityException e) {
      fromCancel = e; // FutureTask propagates it too, after it completed the future
    }
    // FutureTask's cancel rethrows what interrupt() threw; warmpool's swallows it, as its
    // shutdownNow and a task handle's cancel(true) do. Either way the future is cancelled:
    assertThat(fromCancel == null || ses instanceof ScheduledThreadPoolExecutor)
        .as("only the JDK's cancel rethrows: %s", fromCancel).isTrue();
    assertThat(f.isCancelled()).isTrue();
    assertThat(f.isDone()).isTrue();
    boolean wokeWhileRunning = PoolFixture.waitUntil(Duration.ofSeconds(5), waiter::isDone);
    release.countDown();
    hostile.set(false);
    if (wokeWhileRunning) {
      assertThat(waiter.result()).isInstanceOf(CancellationException.class);
    }
    return wokeWhileRunning;
  }

  /** The JDK row: {@code ScheduledThreadPoolExecutor} wakes the waiter. Passes. */
  @Test
  void jdkRow_cancelTrueWhoseInterruptThrowsStillWakesTheWaitersOfAScheduledThreadPoolExecutor()
      throws Exception {
    AtomicBoolean hostile = new AtomicBoolean(true);
    ScheduledThreadPoolExecutor stpe =
        new ScheduledThreadPoolExecutor(1, throwingInterrupts("r10-stpe-", hostile));
    try {
      assertThat(aWaiterWakesWhenCancelTrueCannotInterrupt(stpe, hostile))
          .as("STPE: the waiter hears the cancel while the run goes on").isTrue();
    } finally {
      hostile.set(false);
      stpe.shutdownNow();
      assertThat(stpe.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  /**
   * Guarantee 7 (the {@code ScheduledFuture} contract, the JDK's): a {@code cancel(true)} whose
   * interrupt of the worker throws (a thread factory's thread with a hostile {@code interrupt()})
   * still completes the future and wakes its waiters. DelayedTask.cancel sets INTERRUPTED in a
   * finally but calls {@code cancelled()} (wake the waiters, leave the timer and the owners'
   * sets, withdraw, tell a CancellationAware) only after a normal return: the waiter in
   * {@code get} parks for ever, also after the run ended (the run's {@code complete} finds the
   * future done and wakes nobody).
   */
  @Test
  void guarantee7_cancelTrueWhoseInterruptThrowsStillWakesTheWaitersAsTheJdksDoes()
      throws Exception {
    AtomicBoolean hostile = new AtomicBoolean(true);
    WorkerPool pool = fixture.pool("r10-throwing-",
        b -> b.capacity(1).threadFactory(throwingInterrupts("r10-throwing-w", hostile)));
    try {
      assertThat(aWaiterWakesWhenCancelTrueCannotInterrupt(pool, hostile))
          .as("warmpool: the waiter hears the cancel while the run goes on").isTrue();
      pool.shutdown();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      assertThat(((AbstractWorkerPool) pool).delayedCount()).isZero();
    } finally {
      hostile.set(false);
    }
  }

  /**
   * {@code compareTo} must be a total order (antisymmetric) as {@code Delayed extends Comparable}
   * requires; {@code ScheduledThreadPoolExecutor}'s tasks compare their deadlines, then their
   * sequence numbers, so two tasks due at the same nanosecond order one way, consistently.
   * DelayedTask compares {@code getDelay} of each side, read at two instants: for equal deadlines
   * (and any two within the time between those reads) each compares greater than the other, so a
   * sort or a priority queue of futures may break ({@code TimSort}: "Comparison method violates
   * its general contract"). White-box: the two deadlines are set equal (the public API reaches it
   * only when two schedules land on the same nanosecond, or under preemption between the reads).
   */
  @Test
  void guarantee7_twoTimersDueAtTheSameNanosecondCompareConsistently() throws Exception {
    WorkerPool pool = fixture.pool("r10-compare-", b -> b.capacity(1));
    ScheduledFuture<?> a = pool.schedule(() -> { }, 1, TimeUnit.HOURS);
    ScheduledFuture<?> b = pool.schedule(() -> { }, 1, TimeUnit.HOURS);
    a.cancel(false);
    b.cancel(false); // off the timer: their deadlines are the test's now
    ((DelayedTask<?>) b).deadline = ((DelayedTask<?>) a).deadline;
    int broken = 0;
    for (int i = 0; i < 1000; i++) {
      int ab = Integer.signum(a.compareTo(b));
      int ba = Integer.signum(b.compareTo(a));
      if (ab != -ba) {
        broken++;
      }
    }
    assertThat(broken).as("comparisons of 1000 where a<b and b<a disagree").isZero();
  }

  /** The JDK row: STPE's futures, due at the same instant or not, compare antisymmetrically. */
  @Test
  void jdkRow_scheduledThreadPoolExecutorsFuturesCompareAntisymmetrically() throws Exception {
    ScheduledThreadPoolExecutor stpe = new ScheduledThreadPoolExecutor(1);
    try {
      ScheduledFuture<?> a = stpe.schedule(() -> { }, 1, TimeUnit.HOURS);
      ScheduledFuture<?> b = stpe.schedule(() -> { }, 1, TimeUnit.HOURS);
      for (int i = 0; i < 1000; i++) {
        assertThat(Integer.signum(a.compareTo(b))).isEqualTo(-Integer.signum(b.compareTo(a)));
      }
    } finally {
      stpe.shutdownNow();
    }
  }

  /**
   * The late-bound-handle rule (guarantee 7: a cancel withdraws a due hand-off that has not
   * started, and it then counts in no counter). A periodic timer scheduled due now is fired on the
   * caller's thread, while later periods fire on the timer thread: two threads bind handles. The
   * caller is preempted between its hand-off ({@code onDue.due}) and its {@code bindLate}; meanwhile
   * period 1 runs, re-arms, and period 2 fires on the timer thread and binds its handle. The
   * caller then binds period 1's (spent) handle over it. A cancel now withdraws the spent handle
   * and leaves period 2's hand-off in line: it waits for the seat (the line does not empty when the
   * cancel returns) and later takes a run that does nothing but counts as completed.
   *
   * <p>White-box only for the window: the owner is the pool's own hand-off
   * ({@code enqueue(ADMITTED)}, as the pool's {@code runWhenDue}), wrapped so that the caller's
   * first bind waits until period 2 is bound (a preemption of a few microseconds on a loaded host).
   */
  @Test
  void guarantee7_aCancelWithdrawsThePeriodsHandOffEvenWhenTheFirstFireWasBoundLate()
      throws Exception {
    WorkerPool pool = fixture.pool("r10-stale-", b -> b.capacity(1));
    AbstractWorkerPool p = (AbstractWorkerPool) pool;
    PoolFixture.Gate blocker = fixture.gate();
    AtomicInteger runs = new AtomicInteger();
    AtomicInteger dues = new AtomicInteger();
    AtomicReference<TaskHandle> second = new AtomicReference<>();
    DelayedTask.Owner owner = task -> {
      TaskHandle h = p.enqueue(TaskKind.RUNNABLE, task, Mode.ADMITTED);
      if (dues.incrementAndGet() == 1) {
        // the caller's thread, preempted before its bind: period 2 binds first
        assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10),
            () -> task.lateHandle() != null)).as("period 2 bound").isTrue();
      } else {
        second.set(h);
      }
      return h;
    };
    Runnable task = () -> {
      if (runs.incrementAndGet() == 1) {
        // period 1: a task that holds the one seat next, so period 2's hand-off waits in line
        p.enqueue(TaskKind.RUNNABLE, blocker.task(), Mode.ADMITTED);
      }
    };
    DelayedTask.Periodic timer =
        new DelayedTask.Periodic(task, TimeUnit.MILLISECONDS.toNanos(1), owner, p);
    PoolFixture.Caller<DelayedTask<Void>> caller = fixture.call("start", () -> timer.start(0));
    assertThat((Object) caller.result()).isSameAs(timer);
    blocker.awaitArrival();
    assertThat(second.get()).as("period 2 handed on").isNotNull();
    PoolFixture.awaitWaiting(pool, 1); // period 2 waits for the seat the blocker holds

    assertThat(timer.cancel(false)).isTrue();
    assertThat(second.get().isCancelled()).as("period 2's hand-off withdrawn by the cancel").isTrue();
    assertThat(pool.stats().waiting()).as("the line is empty once the cancel returned").isZero();

    blocker.open();
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(runs).as("runs of the periodic task").hasValue(1);
    PoolStats s = pool.stats();
    assertThat(s.completed()).as("period 1 and the blocker only: %s", s).isEqualTo(2);
    assertThat(p.delayedCount()).isZero();
  }

  /**
   * Guarantee 7 (a periodic task runs until cancelled or a run throws; never lost silently). A
   * periodic re-arm that cannot start the shared timer's thread (it lingered out while the run was
   * long, and now {@code OutOfMemoryError: unable to create native thread}) throws out of the run,
   * after the re-arm set the state back to PENDING: the future is neither done nor on the timer,
   * and the task never runs again. The pool counts a failed run; the future's holder learns
   * nothing ({@code get} blocks for ever). A schedule call that fails this way throws to its caller
   * (TimerStartFailureTest); a re-arm has no caller but the future. White-box: the pool's cleaner is
   * taken off the shared timer (so that its thread lingers out during the held run, as it does for
   * a pool without workers' idle timers), and the timer's thread function is swapped for one that
   * throws while the run is held, and restored after.
   */
  @Test
  void guarantee7_aPeriodicReArmThatCannotStartTheTimerThreadDoesNotLeaveTheFuturePendingSilently()
      throws Exception {
    WorkerPool pool = fixture.pool("r10-rearm-", b -> b.capacity(1));
    CountDownLatch inRun = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger runs = new AtomicInteger();
    ScheduledFuture<?> f = pool.scheduleWithFixedDelay(() -> {
      if (runs.incrementAndGet() == 1) {
        inRun.countDown();
        PoolFixture.await(release);
      }
    }, 0, 1, TimeUnit.MILLISECONDS);
    PoolFixture.await(inRun);
    TimerThreadFailure.whileUnstartable(pool, "r10", () -> {
      release.countDown();
      assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10),
          () -> pool.stats().completed() + pool.stats().failed() >= 1)).isTrue();
    });
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(5), () -> f.isDone() || runs.get() >= 2))
        .as("the periodic task runs again or its future completes: %s, runs %d, %s", f, runs.get(),
            pool.stats())
        .isTrue();
    if (f.isDone()) { // the future tells why the task cannot run again
      org.assertj.core.api.Assertions.assertThatThrownBy(f::get)
          .isInstanceOf(java.util.concurrent.ExecutionException.class)
          .hasCauseInstanceOf(OutOfMemoryError.class);
    }
    f.cancel(false);
  }
}