package dev.warmpool.reactor;

import dev.warmpool.CancellationAware;
import dev.warmpool.FailureAware;
import dev.warmpool.PoolClosedException;
import dev.warmpool.PoolOverloadedException;
import dev.warmpool.TaskHandle;
import java.util.concurrent.Delayed;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Supplier;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * One task of a scheduler or of one of its workers, immediate, delayed or periodic (the shape of
 * reactor-core's {@code WorkerTask}): it knows its container ({@link TaskOwner}), which
 * it leaves exactly once when it ends, and the handle core gave it (an {@code enqueue} handle or a
 * timer future), not the scheduler or worker that made it.
 *
 * <p><b>States</b> (FutureTask's, which this class used to extend; an object of its own costs 40
 * bytes where a FutureTask and its callable cost 80, and idle tasks may be many, issue 33):
 * <pre>
 *   NEW -> DONE                        a one-shot run returned (or threw)
 *   NEW -> CANCELLED                   cancel(false), dispose from the task's own thread
 *   NEW -> INTERRUPTING -> INTERRUPTED cancel(true): the running thread, if any, is interrupted
 * </pre>
 * A run keeps NEW while it runs (a periodic task stays NEW between runs), so {@code isDisposed()},
 * which is "not NEW", is false while it runs or waits for its next period, and true once it ran or
 * was disposed. <b>The interrupt handshake</b>: {@code cancel(true)} takes INTERRUPTING before it
 * reads {@code thread} and leaves it after the interrupt; a run clears {@code thread} and then waits
 * out INTERRUPTING, and clears its interrupt status if it ends INTERRUPTED: the interrupt reaches
 * this run only, never the thread's next task. A run starts only from NEW, after publishing
 * {@code thread} (publish, then check against a cancel). Disposing from another thread interrupts a
 * running task; from the task's own thread it does not. A disposed task also withdraws its core
 * handle (it leaves the line or the timer at once). The handle is bound after the hand-off, so
 * {@link #submit} checks for a dispose that came first (publish, then check).
 *
 * <p><b>End.</b> A task ends when its last run returns, or when it is cancelled while no run is in
 * progress ({@code thread} is null: publish, then check against {@code run}); whichever comes
 * second finds it ended already.
 *
 * <p><b>Periodic.</b> Core's periodic schedule (of the pool, or of a worker's lane) drives it:
 * fixed rate for a positive period, and for Reactor's "period {@code <= 0}" a fixed delay of one
 * nanosecond. Reactor's periodic tasks survive a failed run while core's schedule, as
 * {@code ScheduledExecutorService} requires, ends with it, so a failed run re-arms the task: it
 * hands itself to core again from its own run, which core recognises as a re-arm and does not
 * decorate again; every run keeps the context captured at the user's call (guarantee 15).
 *
 * <p><b>Failures</b> (guarantee 8): a run's exception propagates to the pool, which counts it and
 * hands it to {@link #onFailure} (Reactor's {@code onHandleError}), or to the pool's own failure
 * handler if one was set. <b>Expiry</b>: a task that waited in line past its deadline is refused
 * to the operator's subscriber as Reactor refuses a rejected task. <b>Closed pool</b>: a timer the
 * pool cancels before it is due (guarantee 7) is refused the same way, with a
 * {@link PoolClosedException} as cause, if the subscriber can be reached ({@link #onCancel}).
 */
final class PoolTask implements Runnable, Disposable, CancellationAware, FailureAware {

  /** Core's periodic schedule: {@code scheduleAtFixedRate} or {@code ..WithFixedDelay}. */
  interface Periodic {
    Future<?> schedule(Runnable task, long initialDelay, long period, TimeUnit unit);
  }

  private static final AtomicIntegerFieldUpdater<PoolTask> STATE =
      AtomicIntegerFieldUpdater.newUpdater(PoolTask.class, "state");
  private static final AtomicIntegerFieldUpdater<PoolTask> ENDED =
      AtomicIntegerFieldUpdater.newUpdater(PoolTask.class, "ended");
  private static final int NEW = 0;
  private static final int DONE = 1;
  private static final int CANCELLED = 2;
  private static final int INTERRUPTING = 3;
  private static final int INTERRUPTED = 4;

  /** See the class notes. */
  private volatile int state;
  /** 1 once the task ended and left its group. */
  private volatile int ended;
  /** The user's runnable as {@code onSchedule} decorated it, or a periodic task's {@link Run}. */
  private final Object job;
  /**
   * The runnable as Reactor's operator gave it (before {@code onSchedule}): told of an expiry or of
   * a timer the pool cancelled.
   */
  private final Runnable source;
  private final TaskOwner parent;
  /** The thread in {@link #run}, else null. */
  private volatile Thread thread;
  /** Core's handle: a {@link TaskHandle} or a timer's {@link Future}; null until bound. */
  private volatile Object handle;

  /** A periodic task's runnable (decorated), its schedule and its period in nanoseconds. */
  private static final class Run {
    final Runnable task;
    final Periodic periodic;
    /** {@code <= 0}: again at once. */
    final long period;

    Run(Runnable task, Periodic periodic, long period) {
      this.task = task;
      this.periodic = periodic;
      this.period = period;
    }
  }

  /** An immediate or a delayed task. */
  PoolTask(Runnable source, Runnable decorated, TaskOwner parent) {
    this.job = decorated;
    this.source = source;
    this.parent = parent;
  }

  /**
   * A periodic task of Reactor's {@code source} (passed through {@code onSchedule} here); put it on
   * its schedule with {@code submit(() -> t.arm(initialDelay))}.
   */
  PoolTask(Runnable source, TaskOwner parent, long period, TimeUnit unit,
      Periodic atFixedRate, Periodic withFixedDelay) {
    this.job = new Run(Schedulers.onSchedule(source), period > 0 ? atFixedRate : withFixedDelay,
        unit.toNanos(period));
    this.source = source;
    this.parent = parent;
  }

  boolean isPeriodic() {
    return job instanceof Run;
  }

  /** A periodic task's schedule, its first run after {@code initialDelayNanos}. */
  Future<?> arm(long initialDelayNanos) {
    Run r = (Run) job;
    return r.periodic.schedule(this, initialDelayNanos, Math.max(1, r.period),
        TimeUnit.NANOSECONDS);
  }

  /**
   * Hands the task to core and binds the handle it returns (null for a lane's {@code execute});
   * withdraws it at once if the task was disposed meanwhile. A refused task ends and the refusal
   * propagates.
   */
  PoolTask submit(Supplier<?> handOff) {
    Object h;
    try {
      h = handOff.get();
    } catch (RuntimeException refused) {
      cancel(false);
      throw refused;
    }
    handle = h;
    if (state >= CANCELLED) {
      withdraw(h);
    }
    return this;
  }

  @Override
  public void run() {
    if (parent.stopsTasks()) {
      cancel(false); // its scheduler or worker was disposed: a task that has not started never does
      return;
    }
    thread = Thread.currentThread();
    boolean ran = false;
    Throwable failure = null;
    try {
      if (state == NEW) { // publish (thread), then check: a cancel now interrupts this run
        ran = true;
        Runnable task = job instanceof Run r ? r.task : (Runnable) job;
        try {
          task.run();
        } catch (Throwable t) {
          failure = t; // a periodic task survives a failed run
        }
        if (!(job instanceof Run)) {
          STATE.compareAndSet(this, NEW, DONE); // unless cancelled meanwhile
        }
      }
    } finally {
      thread = null;
    }
    int s;
    while ((s = state) == INTERRUPTING) {
      Thread.onSpinWait(); // a cancel(true) is delivering its interrupt: let it land, then clear it
    }
    if (s == INTERRUPTED) {
      Thread.interrupted(); // meant for this task only
    }
    // Read after thread was cleared: a cancel that comes later finds no run and ends the task.
    boolean again = ran && s == NEW && job instanceof Run;
    if (!again) {
      end();
    }
    if (failure != null) {
      if (again) {
        rearm();
      }
      throw HandleErrorHook.<RuntimeException>sneaky(failure); // to the pool: counted, reported
    }
  }

  /**
   * A failed periodic run ended core's schedule: a new one keeps the rate. Called from the run, so
   * core keeps the task's first decoration (guarantee 15).
   */
  private void rearm() {
    long period = ((Run) job).period;
    long next = period > 0 && handle instanceof Delayed ending
        ? Math.max(0, ending.getDelay(TimeUnit.NANOSECONDS) + period) : 0;
    try {
      submit(() -> arm(next));
    } catch (RuntimeException closed) {
      // the pool or the lane closed: that was the last run (submit ended the task)
    }
  }

  /**
   * Cancels the task unless it ran (or was cancelled) already; with {@code mayInterruptIfRunning},
   * a run in progress is interrupted (see the handshake in the class notes). Withdraws its core
   * handle; ends it if no run is in progress.
   */
  boolean cancel(boolean mayInterruptIfRunning) {
    if (!STATE.compareAndSet(this, NEW, mayInterruptIfRunning ? INTERRUPTING : CANCELLED)) {
      return false;
    }
    if (mayInterruptIfRunning) {
      try {
        Thread t = thread;
        if (t != null) {
          t.interrupt();
        }
      } finally {
        state = INTERRUPTED;
      }
    }
    withdraw(handle);
    if (thread == null) {
      end(); // no run in progress: none will start
    }
    return true;
  }

  /**
   * Its scheduler closed: it never starts (again). A periodic task stops after a run in progress; a
   * one-shot run in progress finishes undisturbed, and reads disposed once it returned.
   */
  void stop() {
    if (job instanceof Run || thread == null) {
      cancel(false);
    }
  }

  /** Reactor's rule: the task's own thread is not interrupted. */
  @Override
  public void dispose() {
    cancel(thread != Thread.currentThread());
  }

  @Override
  public boolean isDisposed() {
    return state != NEW;
  }

  /** Leaves the line or the timer; never core's interrupt (the task delivers its own). */
  private static void withdraw(Object h) {
    if (h instanceof TaskHandle t) {
      t.cancel();
    } else if (h instanceof Future<?> f) {
      f.cancel(false);
    }
  }

  private void end() {
    if (ENDED.compareAndSet(this, 0, 1)) {
      parent.ended(this);
    }
  }

  /**
   * Core cancelled its timer: the pool closed before it was due (or handed it back), or the lane
   * closed. It will not run (again), so the operator's subscriber, if it can be reached, is refused
   * as Reactor refuses a task of a closed scheduler (DESIGN section 6); otherwise it just ends. A
   * cancel of our own (a dispose, a scheduler's or worker's sweep) withdraws the timer after the
   * task reads cancelled, so it comes here too and signals nothing.
   */
  @Override
  public void onCancel() {
    if (cancel(false)) {
      refuse(new PoolClosedException("the pool shut down before this timer was due"), false);
    }
  }

  /**
   * Its pool terminated and this task had not run: {@code shutdownNow} handed it back (a graceful
   * shutdown runs every accepted task first, and a timer the pool cancelled heard {@link #onCancel}).
   * Refused to the operator's subscriber as a task of a closed pool, so that it does not wait for
   * ever; a later run by whoever got it from {@code shutdownNow} does nothing. Only a task core
   * accepted ({@code handle} bound): one still being handed to core is refused by core itself.
   */
  void handedBack(String pool) {
    if (handle != null && thread == null && cancel(false)) {
      refuse(new PoolClosedException("pool '" + pool + "' was shut down (shutdownNow) before this"
          + " task ran"), false);
    }
  }

  /** It waited in a pool's line past its deadline: refused as a rejection, with core's cause. */
  @Override
  public void onExpired(PoolOverloadedException cause) {
    if (cancel(false)) {
      refuse(cause, true);
    }
  }

  /**
   * Signals {@code cause} to the operator's subscriber as Reactor signals a rejected task; if the
   * subscriber is out of reach, {@code dropped} says whether Reactor's dropped-error hook hears of it.
   */
  private void refuse(RuntimeException cause, boolean dropped) {
    Object actual = Scannable.from(source).scanUnsafe(Scannable.Attr.ACTUAL);
    if (actual instanceof CoreSubscriber<?> s) {
      Subscription operator = source instanceof Subscription o ? o : null;
      s.onError(Operators.onRejectedExecution(cause, operator, null, null, s.currentContext()));
    } else if (dropped) {
      Operators.onErrorDropped(Exceptions.failWithRejected(cause), Context.empty());
    }
  }

  /** The run threw and the pool has no failure handler of its own: Reactor's error path. */
  @Override
  public void onFailure(Throwable failure) {
    HandleErrorHook.call(failure);
  }

  @Override
  public String toString() {
    Runnable task = job instanceof Run r ? r.task : (Runnable) job;
    return "PoolTask[" + task + (state != NEW ? ", disposed]" : "]");
  }
}
