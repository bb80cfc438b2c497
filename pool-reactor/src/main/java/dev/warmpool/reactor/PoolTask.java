package dev.warmpool.reactor;

import dev.warmpool.CancellationAware;
import dev.warmpool.TaskHandle;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import reactor.core.Disposable;

/**
 * One task of a {@link PoolScheduler}, handed to the pool (or a serial lane, or the pool's timer) in
 * place of the user's runnable. It gives the task Reactor's per-task {@link Disposable} semantics and
 * tells its scheduler (and worker) when it is over, so that graceful disposal knows when nothing is
 * left.
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
 * <h2>Failures</h2>
 * A run's exception goes once to {@code Schedulers.onHandleError} and is then rethrown to the pool
 * (or lane, or timer future, which rethrows it on the worker), which counts it as failed and passes
 * it to its failure handler: one rule for immediate, delayed and periodic tasks (guarantee 8). A
 * periodic task re-arms itself first, since core's periodic schedule ends with a failed run.
 */
class PoolTask implements CancellationAware, Disposable {
  static final int PENDING = 0;
  static final int RUNNING = 1;
  static final int DONE = 2;
  static final int CANCELLED = 3;
  static final int INTERRUPTING = 4;
  static final int INTERRUPTED = 5;

  private static final AtomicIntegerFieldUpdater<PoolTask> STATE =
      AtomicIntegerFieldUpdater.newUpdater(PoolTask.class, "state");

  final Runnable task;
  final PoolScheduler scheduler;
  /** The worker whose task this is, or null for a task scheduled on the scheduler directly. */
  final PoolWorker worker;
  /** Whether the task waits on the timer (delayed or periodic); such tasks are registered for cancel. */
  final boolean timed;

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

  PoolTask(Runnable task, PoolScheduler scheduler, PoolWorker worker, boolean timed) {
    this.task = task;
    this.scheduler = scheduler;
    this.worker = worker;
    this.timed = timed;
  }

  boolean isPeriodic() {
    return false;
  }

  @Override
  public void run() {
    if (scheduler.isStopped()) {
      cancelIfPending(); // the scheduler was disposed: tasks that have not started never start
      return;
    }
    if (!start()) {
      return;
    }
    admitWorker();
    Throwable failure = null;
    try {
      task.run();
    } catch (Throwable t) {
      failure = t;
    }
    if (!STATE.compareAndSet(this, RUNNING, DONE)) {
      endDisposedRun();
    } else {
      runner = null;
      ended();
    }
    if (failure != null) {
      HandleErrorHook.call(failure); // Schedulers.onHandleError, as Reactor's schedulers
      // To the pool: its failure handler reports it and stats().failed counts it (guarantee 8),
      // for a delayed task too, whose core timer future rethrows it on the worker.
      throw PoolTask.<RuntimeException>sneaky(failure);
    }
  }

  /** PENDING -> RUNNING on the current thread; false if the task was disposed first. */
  final boolean start() {
    runner = Thread.currentThread();
    if (STATE.compareAndSet(this, PENDING, RUNNING)) {
      return true;
    }
    runner = null;
    return false;
  }

  /** A timer of a worker that runs admits the worker (guarantee 6). */
  final void admitWorker() {
    if (timed && worker != null) {
      worker.admittedByTimer();
    }
  }

  /** A periodic run returned: RUNNING -> PENDING; false if the task was disposed during the run. */
  final boolean endPeriodicRun() {
    if (STATE.compareAndSet(this, RUNNING, PENDING)) {
      runner = null;
      return true;
    }
    endDisposedRun();
    return false;
  }

  /** The run ends after a dispose(): wait for an interrupt in delivery, then clear it. */
  final void endDisposedRun() {
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
   * The core cancelled this task's timer (the pool shut down, or the worker's lane closed): the
   * task will never run, so it ends now, and the scheduler stops holding it (fault 4) and can
   * finish a graceful disposal (fault 3). A task running at that moment ends with its run.
   */
  @Override
  public void onCancel() {
    cancelIfPending();
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

  /** The timer's handle, or null. */
  final Future<?> future() {
    return future;
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
