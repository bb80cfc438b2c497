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
 * A one-shot task, direct or of a worker, and its {@link Disposable}.
 *
 * <h2>States</h2>
 * <pre>
 *   READY   -> RUNNING   run() starts the task
 *   RUNNING -> FINISHED  the task returned or threw
 *   READY   -> FINISHED  dispose() before it ran: it never runs; a delayed one leaves the timer now
 *   RUNNING -> FINISHED  dispose() while it runs: it is not interrupted
 * </pre>
 * {@link #isDisposed()} is true in FINISHED, so a task's disposable reports disposed after it ran.
 * A task disposed before it ran lets go of its runnable: {@link #getWrappedRunnable()} then returns
 * {@code Functions.EMPTY_RUNNABLE}, as RxJava's executor scheduler does for its delayed direct tasks
 * (its {@code ExecutorSchedulerTest} checks that identity), and a disposed task left in a lane's queue
 * until the lane reaches it no longer holds the user's code.
 *
 * <p>A task that throws is reported once, to {@link RxJavaPlugins#onError}, and nothing is rethrown:
 * the lane goes on with its next task and the pool's failure handler is not involved.
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

  /** The task; null once it was disposed before it ran. */
  private volatile Runnable run;
  /** The worker whose lane runs this task; null for a direct task. */
  private final PoolWorker worker;
  /** The scheduler tracking this task while it is pending (delayed direct tasks); else null. */
  private final PoolScheduler tracker;
  /** The timer handle of a delayed task, cancelled by dispose. */
  private volatile Future<?> future;
  /** The pool's handle of an immediate direct task, withdrawn (out of the line) by dispose. */
  private volatile TaskHandle handle;

  PoolTask(Runnable run, PoolWorker worker, PoolScheduler tracker) {
    this.run = run;
    this.worker = worker;
    this.tracker = tracker;
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
    if (worker != null) {
      worker.ran();
    }
    if ((worker != null && worker.skipsAccepted()) || !compareAndSet(READY, RUNNING)) {
      return;
    }
    try {
      run.run(); // non-null: only a dispose that wins READY clears it
    } catch (Throwable t) {
      RxJavaPlugins.onError(t);
    } finally {
      set(FINISHED);
      future = null;
      if (tracker != null) {
        tracker.untrack(this);
      }
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
        if (s == READY) {
          run = null;
          TaskHandle h = handle;
          if (h != null) {
            h.cancel(); // leaves the pool's line at once: waiting counts live work only
          }
          Future<?> f = future;
          if (f != null) {
            f.cancel(false);
          }
          if (tracker != null) {
            tracker.untrack(this);
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
    if (get() != READY) {
      return;
    }
    Runnable r = run; // dispose lets go of it
    dispose();
    if (r instanceof PoolWorker.Periodic p) {
      p.dispose(); // the core cancelled its armed run: the worker's periodic task ends too
    }
    PoolScheduler s = worker != null ? worker.scheduler() : tracker;
    if (s != null) {
      s.timerCancelledByPool();
    }
  }

  @Override
  public boolean isDisposed() {
    return get() == FINISHED || (worker != null && worker.isDisposed());
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
