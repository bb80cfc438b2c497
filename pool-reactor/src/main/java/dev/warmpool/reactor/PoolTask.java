package dev.warmpool.reactor;

import dev.warmpool.CancellationAware;
import dev.warmpool.FailureAware;
import dev.warmpool.PoolOverloadedException;
import dev.warmpool.TaskHandle;
import java.util.concurrent.Delayed;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * One task of a {@link PoolScheduler}, handed to the pool (or a serial lane, or the pool's timer) in
 * place of the user's runnable: immediate, delayed or periodic. It gives the task Reactor's per-task
 * {@link Disposable} semantics and tells its scheduler (and worker) when it is over, so that graceful
 * disposal knows when nothing is left.
 *
 * <h2>Periodic tasks</h2>
 * Driven by core's periodic schedule on the pool (direct tasks) or on the worker's serial lane
 * (worker tasks): a fixed rate for a positive period, and for Reactor's "period {@code <= 0}: run
 * again at once", a fixed delay of one nanosecond. A run never overlaps the previous one. A periodic
 * task ends only when disposed, when its worker is disposed, when its scheduler starts disposing
 * (gracefully or not: it would otherwise never let a graceful disposal finish) or when the pool or
 * lane closes.
 *
 * <h2>States</h2>
 * <pre>
 *   PENDING  -> RUNNING       a pool thread starts it (a periodic task: each run)
 *   RUNNING  -> PENDING       a periodic run returned; the task waits for its next run
 *   RUNNING  -> DONE          a one-shot run returned
 *   PENDING  -> CANCELLED     dispose() before it started: it never runs
 *   RUNNING  -> INTERRUPTING  dispose() claims the run, then reads its thread; from another
 *   INTERRUPTING -> INTERRUPTED  thread it interrupts the runner, then publishes the delivery;
 *   INTERRUPTING -> CANCELLED    from the thread that runs it, no interrupt
 * </pre>
 * {@code isDisposed()} is true in DONE, CANCELLED, INTERRUPTING and INTERRUPTED. The run that ends in
 * INTERRUPTING waits for INTERRUPTED and clears its thread's interrupt flag, so the interrupt can never
 * hit whatever the pool thread runs next. The scheduler hears of the end exactly once: from
 * {@code dispose()} for PENDING -> CANCELLED, else from the run.
 *
 * <h2>Line deadlines</h2>
 * A direct immediate task waits in the pool's line in blocking mode; if it waits past the pool's
 * {@code maxWaitInLine}, core drops it unrun and calls {@link #onCancel}. The task then ends, and the
 * operator that scheduled it ({@code subscribeOn} of a callable, {@code publishOn} of a
 * {@code Mono}, found as the runnable's {@link Scannable.Attr#ACTUAL}) is cancelled and its subscriber
 * gets {@code onError}: a {@code RejectedExecutionException} caused by a
 * {@link PoolOverloadedException}, as for a rejection. A worker task expires the same way while its
 * lane waits for its first seat (the lane expires with all its tasks; core calls {@link #onExpired}
 * for each); once the lane had a seat it never expires, and timers are admitted when due.
 *
 * <h2>Failures</h2>
 * A run's exception propagates to the pool (or lane, or timer future, which rethrows it on the
 * worker), which counts it as failed and, as the task is a {@link FailureAware}, hands it to
 * {@link #onFailure}: Reactor's error path ({@code Schedulers.onHandleError}), once. A failure
 * handler set on the pool's builder gets it instead (guarantee 8). One rule for immediate, delayed
 * and periodic tasks. A failed periodic run re-arms the task first: Reactor's periodic tasks survive
 * a failed run (its {@code PeriodicSchedulerTask} and {@code PeriodicWorkerTask} catch and report),
 * while core's periodic schedule, as {@code ScheduledExecutorService} requires, ends with it.
 */
final class PoolTask implements CancellationAware, FailureAware, Disposable {

  /** Core's periodic schedule: on the pool, or on a worker's lane. */
  interface Periodic {
    Future<?> atFixedRate(Runnable task, long initialDelay, long period, TimeUnit unit);

    Future<?> withFixedDelay(Runnable task, long initialDelay, long delay, TimeUnit unit);
  }

  static final int PENDING = 0;
  static final int RUNNING = 1;
  static final int DONE = 2;
  static final int CANCELLED = 3;
  static final int INTERRUPTING = 4;
  static final int INTERRUPTED = 5;

  private static final AtomicIntegerFieldUpdater<PoolTask> STATE =
      AtomicIntegerFieldUpdater.newUpdater(PoolTask.class, "state");

  final Runnable task;
  /** The runnable as Reactor's operator gave it, before Schedulers.onSchedule: told of an expiry. */
  private final Runnable source;
  final PoolScheduler scheduler;
  /** The worker whose task this is, or null for a task scheduled on the scheduler directly. */
  final PoolWorker worker;
  /** Whether the task waits on the timer (delayed or periodic); such tasks are registered for cancel. */
  final boolean timed;
  /** A periodic task's schedule (the pool or the worker's lane), else null. */
  private final Periodic periodic;
  /** A periodic task's period; {@code <= 0}: again as soon as a run returned. */
  private final long periodNanos;

  volatile int state;
  /** The thread running the task; set before PENDING -> RUNNING, cleared after leaving RUNNING. */
  private volatile Thread runner;
  /** A timed task's handle in the core timer, cancelled when the task is disposed. */
  private volatile Future<?> future;
  /** An immediate task's handle in the pool, withdrawn (out of the line) when it is disposed. */
  private volatile TaskHandle handle;

  /** Links of the owning worker's task list; accessed only under that worker's lock. */
  PoolTask prev;
  PoolTask next;

  /**
   * An immediate ({@code timed} false) or a delayed task: {@code task} is {@code source} as
   * {@code Schedulers.onSchedule} decorated it.
   */
  PoolTask(Runnable source, Runnable task, PoolScheduler scheduler, PoolWorker worker,
      boolean timed) {
    this(source, task, scheduler, worker, timed, null, 0);
  }

  /** A periodic task on {@code periodic}'s schedule; see {@link #schedulePeriodic}. */
  PoolTask(Runnable task, PoolScheduler scheduler, PoolWorker worker, Periodic periodic, long period,
      TimeUnit unit) {
    this(task, task, scheduler, worker, true, periodic, unit.toNanos(period));
  }

  private PoolTask(Runnable source, Runnable task, PoolScheduler scheduler, PoolWorker worker,
      boolean timed, Periodic periodic, long periodNanos) {
    this.source = source;
    this.task = task;
    this.scheduler = scheduler;
    this.worker = worker;
    this.timed = timed;
    this.periodic = periodic;
    this.periodNanos = periodNanos;
  }

  boolean isPeriodic() {
    return periodic != null;
  }

  /** Puts a periodic task on its schedule, its first run after {@code initialDelay}. */
  Future<?> schedulePeriodic(long initialDelay, TimeUnit unit) {
    return arm(unit.toNanos(initialDelay));
  }

  private Future<?> arm(long initialDelayNanos) {
    return periodNanos > 0
        ? periodic.atFixedRate(this, initialDelayNanos, periodNanos, TimeUnit.NANOSECONDS)
        : periodic.withFixedDelay(this, initialDelayNanos, 1, TimeUnit.NANOSECONDS);
  }

  @Override
  public void run() {
    // Disposed: tasks that have not started never start; disposing: periodic tasks stop.
    if (isPeriodic() ? scheduler.isStopping() : scheduler.isStopped()) {
      cancelIfPending();
      return;
    }
    if (!start()) {
      return;
    }
    Throwable failure = null;
    try {
      task.run();
    } catch (Throwable t) {
      failure = t;
    }
    boolean again = endRun();
    if (again && scheduler.isStopping()) {
      cancelIfPending();
      again = false;
    }
    if (failure != null) {
      if (again) {
        rearmAfterFailure();
      }
      // To the pool, which counts it and calls onFailure (guarantee 8); a timed task's core timer
      // future rethrows it on the worker.
      throw PoolTask.<RuntimeException>sneaky(failure);
    }
  }

  /** The run threw and the pool has no failure handler of its own: Reactor's error path. */
  @Override
  public void onFailure(Throwable failure) {
    HandleErrorHook.call(failure);
  }

  /**
   * A run returned: RUNNING -> DONE (one-shot; the task ended) or -> PENDING (periodic; true: it
   * waits for its next run). False if it was disposed during the run.
   */
  private boolean endRun() {
    int after = isPeriodic() ? PENDING : DONE;
    if (!STATE.compareAndSet(this, RUNNING, after)) {
      endDisposedRun();
      return false;
    }
    runner = null;
    if (after == DONE) {
      ended();
      return false;
    }
    return true;
  }

  /**
   * A periodic run failed: core's schedule ends with it, so a new one continues at the same rate
   * (its first run when the next would have been due), as Reactor's periodic tasks survive a failed
   * run.
   */
  private void rearmAfterFailure() {
    long nextDelay = 0;
    if (periodNanos > 0 && future instanceof Delayed ending) {
      nextDelay = Math.max(0, ending.getDelay(TimeUnit.NANOSECONDS) + periodNanos);
    }
    try {
      setFuture(arm(nextDelay));
    } catch (RuntimeException closed) {
      cancelIfPending(); // the pool or the lane closed: this was the last run
    }
  }

  /** PENDING -> RUNNING on the current thread; false if the task was disposed first. */
  private boolean start() {
    runner = Thread.currentThread();
    if (STATE.compareAndSet(this, PENDING, RUNNING)) {
      return true;
    }
    runner = null;
    return false;
  }

  /** The run ends after a dispose(): wait for an interrupt in delivery, then clear it. */
  private void endDisposedRun() {
    int s;
    while ((s = state) == INTERRUPTING) {
      Thread.onSpinWait();
    }
    if (s == INTERRUPTED) {
      Thread.interrupted(); // the interrupt was for this task only
    }
    runner = null;
    ended();
  }

  @Override
  public void dispose() {
    for (;;) {
      int s = state;
      if (s == PENDING) {
        if (cancelIfPending()) {
          return;
        }
      } else if (s == RUNNING) {
        // Claim the run first, then read its thread: while INTERRUPTING the run cannot end and no
        // later run can start, so the thread read is this run's. Read before the claim, it could be
        // a periodic task's earlier run's thread, which by then runs other work.
        if (STATE.compareAndSet(this, RUNNING, INTERRUPTING)) {
          Thread r = runner;
          if (r == Thread.currentThread()) {
            state = CANCELLED; // disposed by the task itself: no interrupt
          } else {
            try {
              r.interrupt();
            } finally {
              state = INTERRUPTED;
            }
          }
          cancelFuture();
          return;
        }
      } else {
        return;
      }
    }
  }

  /**
   * PENDING -> CANCELLED: the task will never (again) run. Returns whether this call did it. Also the
   * clean-up when the pool refused the task: it is registered before submission, and whoever ends it
   * first (this call or a concurrent disposal) unregisters it, exactly once.
   */
  final boolean cancelIfPending() {
    if (STATE.compareAndSet(this, PENDING, CANCELLED)) {
      cancelFuture();
      ended();
      return true;
    }
    return false;
  }

  /**
   * A timed task: the core cancelled its timer (the pool shut down, or the worker's lane closed).
   * An immediate task: it waited in the pool's line past its deadline (only those can expire). The
   * task will never run, so it ends now, and the scheduler stops holding it (fault 4) and can
   * finish a graceful disposal (fault 3); an expired one is refused to its subscriber (issue 23).
   * A task running at that moment ends with its run.
   */
  @Override
  public void onCancel() {
    if (cancelIfPending() && !timed) {
      refuseExpired(new PoolOverloadedException(scheduler.pool.name()
          + " is overloaded: the task waited in line past its deadline (maxWaitInLine)"));
    }
  }

  /** An immediate task waited in line past its deadline: refused with core's cause. */
  @Override
  public void onExpired(PoolOverloadedException cause) {
    if (cancelIfPending()) {
      refuseExpired(cause);
    }
  }

  /**
   * Signals an expiry as Reactor signals a rejection ({@code Operators.onRejectedExecution}): the
   * scheduling operator is cancelled and its subscriber gets onError; with no subscriber to tell
   * (a runnable scheduled by hand), the error is dropped through Reactor's hook.
   */
  private void refuseExpired(PoolOverloadedException cause) {
    Object actual = Scannable.from(source).scanUnsafe(Scannable.Attr.ACTUAL);
    if (actual instanceof CoreSubscriber<?> subscriber) {
      Subscription operator = source instanceof Subscription s ? s : null;
      subscriber.onError(Operators.onRejectedExecution(cause, operator, null, null,
          subscriber.currentContext()));
    } else {
      Operators.onErrorDropped(Exceptions.failWithRejected(cause), Context.empty());
    }
  }

  @Override
  public boolean isDisposed() {
    return state >= DONE;
  }

  /** Attaches the timer's handle; cancels it at once if the task was disposed meanwhile. */
  final void setFuture(Future<?> f) {
    future = f;
    if (state >= CANCELLED) {
      f.cancel(false);
    }
  }

  /** Attaches the pool's handle; withdraws the task at once if it was disposed meanwhile. */
  final void setHandle(TaskHandle h) {
    handle = h;
    if (state >= CANCELLED) {
      h.cancel();
    }
  }

  private void cancelFuture() {
    TaskHandle h = handle;
    if (h != null) {
      h.cancel(); // a disposed task leaves the pool's line at once: waiting counts live work only
    }
    Future<?> f = future;
    if (f != null) {
      f.cancel(false); // never the core's interrupt: this task delivers its own, see dispose()
    }
  }

  /** Called exactly once, when the task is over: ran, or will never run again. */
  private void ended() {
    scheduler.taskEnded(this);
  }

  @SuppressWarnings("unchecked")
  static <E extends Throwable> E sneaky(Throwable t) throws E {
    throw (E) t;
  }

  @Override
  public String toString() {
    return "PoolTask[" + task + ", state=" + state + "]";
  }
}
