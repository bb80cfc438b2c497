package dev.warmpool.rxjava3;

import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.plugins.RxJavaPlugins;
import io.reactivex.rxjava3.schedulers.SchedulerRunnableIntrospection;
import dev.warmpool.CancellationAware;
import dev.warmpool.TaskHandle;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The adapter's one task class and its {@link Disposable}, shaped like RxJava's
 * {@code ScheduledRunnable}: a one-shot task, direct or of a worker (each arm of a worker's periodic
 * task is one), or a periodic direct task under the pool's own fixed-rate schedule
 * ({@code pool.scheduleAtFixedRate}, which never overlaps its runs). It knows its {@link TaskParent},
 * never the scheduler.
 *
 * <h2>States</h2>
 * <pre>
 *   READY   -> RUNNING   run() starts a run
 *   RUNNING -> FINISHED  a one-shot run returned or threw; a periodic run threw
 *   RUNNING -> READY     a periodic run returned: it waits for its next run
 *   READY   -> FINISHED  dispose() (or the core's cancel) before a run: no run follows; a pending
 *                        timer leaves the pool's timer now
 *   RUNNING -> FINISHED  dispose() while it runs: it is not interrupted; a periodic one stops
 * </pre>
 * {@link #isDisposed()} is true in FINISHED, so a task's disposable reports disposed after it ran.
 * A one-shot task disposed before it ran lets go of its runnable: {@link #getWrappedRunnable()} then
 * returns {@code Functions.EMPTY_RUNNABLE}, as RxJava's executor scheduler does for its delayed
 * direct tasks (its {@code ExecutorSchedulerTest} checks that identity), and a disposed task left in
 * a lane's queue until the lane reaches it no longer holds the user's code.
 *
 * <p>A task that throws is reported once, to {@link RxJavaPlugins#onError}, and nothing is rethrown:
 * the lane goes on with its next task and the pool's failure handler is not involved; a periodic
 * task ends.
 */
final class PoolTask extends AtomicInteger
    implements CancellationAware, Disposable, SchedulerRunnableIntrospection {
  private static final long serialVersionUID = 1L;
  private static final int READY = 0;
  private static final int RUNNING = 1;
  private static final int FINISHED = 2;
  /**
   * What a task disposed before it ran unwraps to: RxJava's own no-op runnable
   * ({@code Functions.EMPTY_RUNNABLE}), the one its executor scheduler returns. Its package is not
   * exported from RxJava's module, so it is read from {@link Disposable#empty()}, which holds it;
   * a no-op of our own should that ever change.
   */
  static final Runnable EMPTY = emptyRunnable();

  /** The task; null once a one-shot task was disposed before it ran. */
  private volatile Runnable run;
  /** Its worker, or its tracking scheduler (delayed and periodic direct tasks); else null. */
  private final TaskParent parent;
  private final boolean periodic;
  /** The timer handle of a delayed or periodic task, cancelled by dispose. */
  private volatile Future<?> future;
  /** The pool's handle of an immediate direct task, withdrawn (out of the line) by dispose. */
  private volatile TaskHandle handle;

  private PoolTask(Runnable run, TaskParent parent, boolean periodic) {
    this.run = run;
    this.parent = parent;
    this.periodic = periodic;
  }

  /** A one-shot task; {@code parent} null for an immediate direct task. */
  static PoolTask oneShot(Runnable run, TaskParent parent) {
    return new PoolTask(run, parent, false);
  }

  /** A periodic direct task, run by the pool's fixed-rate schedule and tracked by {@code parent}. */
  static PoolTask periodic(Runnable run, TaskParent parent) {
    return new PoolTask(run, parent, true);
  }

  /** Publishes the timer handle; cancels it at once if the task was disposed meanwhile. */
  void setFuture(Future<?> f) {
    future = f;
    if (get() == FINISHED) { // written before read, as dispose does the reverse: no lost cancel
      f.cancel(false);
    }
  }

  /** Publishes the pool's handle; withdraws the task at once if it was disposed meanwhile. */
  void setHandle(TaskHandle h) {
    handle = h;
    if (get() == FINISHED) { // a finished run makes cancel() a no-op
      h.cancel();
    }
  }

  @Override
  public void run() {
    if (parent != null) {
      parent.running();
      if (parent.skipsAccepted()) {
        return;
      }
    }
    if (!compareAndSet(READY, RUNNING)) {
      return;
    }
    try {
      run.run(); // non-null: only a dispose that wins READY clears it
    } catch (Throwable t) {
      finish();
      RxJavaPlugins.onError(t);
      return;
    }
    if (!periodic || !compareAndSet(RUNNING, READY)) {
      finish();
    }
  }

  /** The task ended by itself: a periodic one stops its schedule; a tracked one is untracked. */
  private void finish() {
    set(FINISHED);
    Future<?> f = future;
    future = null;
    if (periodic && f != null) {
      f.cancel(false); // our own future: its onCancel finds us FINISHED
    }
    if (parent != null) {
      parent.delete(this);
    }
  }

  @Override
  public void dispose() {
    for (;;) {
      int s = get();
      if (s == FINISHED) {
        return;
      }
      if (compareAndSet(s, FINISHED)) {
        if (s == READY || periodic) {
          if (!periodic) {
            run = null;
          }
          TaskHandle h = handle;
          if (h != null) {
            h.cancel(); // leaves the pool's line at once: waiting counts live work only
          }
          Future<?> f = future;
          if (f != null) {
            f.cancel(false);
          }
          if (parent != null) {
            parent.delete(this);
          }
        }
        return;
      }
    }
  }

  /**
   * The core cancelled this task's timer without our dispose (which finishes the task first): the
   * pool shut down or the lane closed. The task ends, and a scope hears of a shutdown.
   */
  @Override
  public void onCancel() {
    int s = get();
    if (s == FINISHED || (s == RUNNING && !periodic)) {
      return;
    }
    Runnable r = run; // dispose lets go of it
    dispose();
    if (r instanceof PoolWorker.Periodic p) {
      p.dispose(); // the core cancelled its armed run: the worker's periodic task ends too
    }
    if (parent != null) {
      parent.timerCancelledByPool();
    }
  }

  @Override
  public boolean isDisposed() {
    return get() == FINISHED || (parent != null && parent.skipsAccepted());
  }

  @Override
  public Runnable getWrappedRunnable() {
    Runnable r = run;
    return r != null ? r : EMPTY;
  }

  private static Runnable emptyRunnable() {
    Object empty = Disposable.empty();
    if (empty instanceof AtomicReference<?> ref && ref.get() instanceof Runnable r) {
      return r;
    }
    return () -> { };
  }

  @Override
  public String toString() {
    return "PoolTask[" + getWrappedRunnable() + "]";
  }
}
