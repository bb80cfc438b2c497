package dev.warmpool.rxjava3;

import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.plugins.RxJavaPlugins;
import io.reactivex.rxjava3.schedulers.SchedulerRunnableIntrospection;
import dev.warmpool.CancellationAware;
import dev.warmpool.FailureAware;
import dev.warmpool.PoolOverloadedException;
import dev.warmpool.TaskHandle;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The adapter's one task class and its {@link Disposable}, shaped like RxJava's
 * {@code ScheduledRunnable}: a one-shot task, direct or of a worker, or a periodic one. It knows its
 * {@link TaskParent} (a {@code DisposableContainer}), never the scheduler.
 *
 * <h2>States</h2>
 * <pre>
 *   READY   -> RUNNING   run() starts a run
 *   RUNNING -> FINISHED  a one-shot run returned or threw; a periodic run threw
 *   RUNNING -> READY     a periodic run returned: it arms its next run through its parent
 *   READY   -> FINISHED  dispose() (or the core's cancel) before a run: no run follows; a pending
 *                        timer leaves the pool's timer now, a task in line leaves the line
 *   READY   -> FINISHED  onCancel(): the pool ended it unrun (a timer at shutdown or lane close,
 *                        or an immediate direct task past its line deadline); its parent hears
 *   READY   -> FINISHED  onExpired(): it waited in line past its deadline (an immediate direct
 *                        task, or a worker's task in a lane not yet admitted); its parent hears
 *   RUNNING -> FINISHED  dispose() while it runs: it is not interrupted; a periodic one stops
 * </pre>
 * {@link #isDisposed()} is true in FINISHED, so a task's disposable reports disposed after it ran.
 * A task disposed before it ran lets go of its runnable: {@link #getWrappedRunnable()} then returns
 * {@code Functions.EMPTY_RUNNABLE}, as RxJava's executor scheduler does for its delayed direct tasks
 * (its {@code ExecutorSchedulerTest} checks that identity), and a disposed task left in a lane's
 * queue until the lane reaches it no longer holds the user's code.
 *
 * <p><b>Periodic tasks</b> ({@link Kind}): a direct one runs under the pool's own fixed-rate
 * schedule, as RxJava's {@code ExecutorScheduler} puts it under a {@code ScheduledExecutorService}'s;
 * a worker's one runs as RxJava's default {@code Worker.schedulePeriodically} runs it: each run is
 * one task of the lane (a timer, or at once when late), the next armed after the run returned,
 * the rate kept on the worker's {@code now()} and rebased after a clock jump beyond
 * {@link Scheduler#clockDriftTolerance()}. Runs never overlap; the schedule hook was applied once.
 *
 * <p><b>Failures</b> (DESIGN.md guarantee 8): a task that throws ends (a periodic one too, as
 * RxJava's periodic tasks do) and rethrows, so the pool counts it in {@code stats().failed} and
 * reports it once: to {@link #onFailure}, hence {@link RxJavaPlugins#onError}, or, if the pool's
 * builder set a failure handler, to that handler only. The lane goes on with its next task.
 */
final class PoolTask extends AtomicInteger
    implements CancellationAware, FailureAware, Disposable, SchedulerRunnableIntrospection {
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

  /** The task; null once it was disposed before a run. */
  private volatile Runnable run;
  /** Its worker, or its scheduler for a direct task. */
  private final TaskParent parent;
  /** The timer handle of the pending arm, cancelled by dispose. */
  private volatile Future<?> future;
  /** The pool's handle of an immediate direct task, withdrawn (out of the line) by dispose. */
  private volatile TaskHandle handle;
  private final Kind kind;
  /** A re-arming task's period (0: again at once). */
  private final long periodNanos;
  // A re-arming task's rate, as in RxJava's PeriodicTask; used by its runs only, one at a time.
  private long count;
  private long lastNowNanos;
  private long startNanos;

  /** How a task runs: once, or periodically with the rate kept by the core or by the task. */
  enum Kind {
    /** One run: a worker's task, or a delayed direct one (tracked by its scheduler). */
    ONE_SHOT,
    /**
     * One run of an immediate direct task, through the pool's line ({@code enqueue}), where it can
     * expire (a line deadline); not tracked.
     */
    IN_LINE,
    /** A direct periodic task: the pool's {@code scheduleAtFixedRate} runs it. */
    FIXED_RATE,
    /** A worker's periodic task: each run arms the next through its parent, by RxJava's rule. */
    REARMING
  }

  private PoolTask(Runnable run, TaskParent parent, Kind kind, long nowNanos,
      long initialDelayNanos, long periodNanos) {
    this.run = run;
    this.parent = parent;
    this.kind = kind;
    this.periodNanos = periodNanos;
    this.lastNowNanos = nowNanos;
    this.startNanos = nowNanos + initialDelayNanos;
  }

  /** A one-shot task: {@link Kind#IN_LINE} if {@code inLine}, else {@link Kind#ONE_SHOT}. */
  static PoolTask oneShot(Runnable run, TaskParent parent, boolean inLine) {
    return new PoolTask(run, parent, inLine ? Kind.IN_LINE : Kind.ONE_SHOT, 0, 0, 0);
  }

  /** A direct periodic task, for the pool's {@code scheduleAtFixedRate}; tracked by its scheduler. */
  static PoolTask fixedRate(Runnable run, TaskParent parent) {
    return new PoolTask(run, parent, Kind.FIXED_RATE, 0, 0, 0);
  }

  /** A worker's periodic task, first run {@code initialDelayNanos} from now: arm it so. */
  static PoolTask rearming(Runnable run, TaskParent parent, long initialDelayNanos,
      long periodNanos) {
    return new PoolTask(run, parent, Kind.REARMING, parent.now(TimeUnit.NANOSECONDS),
        initialDelayNanos, periodNanos);
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
    if (parent.skipsAccepted()) {
      return;
    }
    if (!compareAndSet(READY, RUNNING)) {
      return;
    }
    try {
      run.run(); // non-null: only a dispose that wins READY clears it
    } catch (Throwable t) {
      finish(false); // the pool ends a fixed-rate schedule whose run threw (its future fails)
      throw t; // the pool counts it and reports it once (onFailure or its failure handler)
    }
    if (kind == Kind.ONE_SHOT || kind == Kind.IN_LINE || !compareAndSet(RUNNING, READY)) {
      finish(true);
    } else if (kind == Kind.REARMING && !parent.arm(this, nextDelayNanos(), false)) {
      dispose(); // refused (the parent reported it): the schedule ends; its lane is admitted
      // (it runs this task), so a next run due now is never refused for load
    }
  }

  /** RxJava's {@code PeriodicTask} rule: the next run on the grid, rebased after a clock jump. */
  private long nextDelayNanos() {
    long now = parent.now(TimeUnit.NANOSECONDS);
    long tolerance = Scheduler.clockDriftTolerance();
    long next;
    if (now + tolerance < lastNowNanos || now >= lastNowNanos + periodNanos + tolerance) {
      next = now + periodNanos;
      startNanos = next - periodNanos * ++count;
    } else {
      next = startNanos + ++count * periodNanos;
    }
    lastNowNanos = now;
    return next - now;
  }

  /**
   * The task ended in a run (it returned or threw, or was disposed during it) and is no longer
   * tracked; a fixed-rate one cancels its schedule if {@code stop}.
   */
  private void finish(boolean stop) {
    set(FINISHED);
    Future<?> f = future;
    future = null;
    if (stop && kind == Kind.FIXED_RATE && f != null) {
      f.cancel(false); // our own schedule; its onCancel finds us FINISHED
    }
    untrack();
  }

  /** Its parent no longer tracks it (an immediate direct task never was). */
  private void untrack() {
    if (kind != Kind.IN_LINE) {
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
        if (s == READY) { // else the run in progress ends it
          release();
        }
        return;
      }
    }
  }

  /** Ended before a run: lets go of the runnable, the pool's line or timer, and the tracking. */
  private void release() {
    run = null;
    TaskHandle h = handle;
    if (h != null) {
      h.cancel(); // leaves the pool's line at once: waiting counts live work only
    }
    Future<?> f = future;
    if (f != null) {
      f.cancel(false);
    }
    untrack();
  }

  /**
   * The pool ended this task unrun without our dispose (which finishes the task first): it
   * cancelled its timer (the pool shut down, the lane closed), or, for an {@link Kind#IN_LINE}
   * task, the task waited in line past its deadline (the only reason the pool tells such a task).
   * The task ends and its parent hears of it, which reports an expiry like a rejection.
   */
  @Override
  public void onCancel() {
    if (compareAndSet(READY, FINISHED)) {
      release();
      parent.cancelledByPool(kind == Kind.IN_LINE);
    }
  }

  /**
   * The task waited in the pool's line past its deadline and will never run: an {@link
   * Kind#IN_LINE} task, or a worker's task whose lane waited for its first seat (the lane expires
   * with its tasks). The task ends, and its parent reports it like a rejection.
   */
  @Override
  public void onExpired(PoolOverloadedException cause) {
    if (compareAndSet(READY, FINISHED)) {
      release();
      parent.cancelledByPool(true);
    }
  }

  /**
   * A run threw and the pool has no failure handler of its own: report it, once, as RxJava's
   * schedulers do (the pool calls this once per failure; an explicit handler replaces it).
   */
  @Override
  public void onFailure(Throwable failure) {
    RxJavaPlugins.onError(failure);
  }

  @Override
  public boolean isDisposed() {
    return get() == FINISHED || parent.skipsAccepted();
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
