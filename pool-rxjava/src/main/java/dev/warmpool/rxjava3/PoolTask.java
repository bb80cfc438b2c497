package dev.warmpool.rxjava3;

import dev.warmpool.CancellationAware;
import dev.warmpool.FailureAware;
import dev.warmpool.PoolOverloadedException;
import dev.warmpool.TaskHandle;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.plugins.RxJavaPlugins;
import io.reactivex.rxjava3.schedulers.SchedulerRunnableIntrospection;
import java.util.Objects;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The adapter's one task class and its {@link Disposable}, shaped like RxJava's
 * {@code ScheduledRunnable}: immediate, delayed or periodic, direct or of a worker. It knows its
 * {@link TaskParent} (a {@code DisposableContainer}), never the scheduler or worker behind it.
 * <pre>
 *   READY   -> RUNNING   run() starts a run
 *   RUNNING -> FINISHED  a one-shot run returned or threw; a periodic run threw
 *   RUNNING -> READY     a periodic run returned; a worker's one arms its next run
 *   READY   -> FINISHED  dispose(), or the pool ended it unrun (onCancel: a timer cancelled by a
 *                        shutdown or a lane close, or a worker's next run refused by one;
 *                        onExpired: past its line deadline); its handle
 *                        is withdrawn, so the line or the timer lets go of it at once
 *   RUNNING -> FINISHED  dispose() during a run: not interrupted; a periodic one stops
 * </pre>
 * {@link #isDisposed()} is true in FINISHED, and once its worker skips it. Ended before a run, it
 * lets go of its runnable: {@link #getWrappedRunnable()} is then RxJava's {@code
 * Functions.EMPTY_RUNNABLE}, as there.
 *
 * <p><b>Periodic</b>: a direct task runs under the pool's fixed rate, as under RxJava's {@code
 * ExecutorScheduler}; a worker's as under RxJava's default {@code Worker.schedulePeriodically}: each
 * run is one task of the lane, the next armed after it returned on the worker's {@code now()},
 * rebased after a jump beyond {@link Scheduler#clockDriftTolerance()}. Runs never overlap. Each run
 * arms the next from within itself, which core recognises as a re-arm: the pool's task decorator
 * is not called again, and every run keeps the context captured at the user's call (guarantee 15).
 *
 * <p><b>Failures</b> (guarantee 8): a run that throws ends the task (a periodic one too, as in
 * RxJava) and rethrows: the pool counts it and reports it once, to {@link #onFailure} or to the
 * builder's failure handler instead.
 */
final class PoolTask extends AtomicInteger
    implements CancellationAware, FailureAware, Disposable, SchedulerRunnableIntrospection {
  private static final long serialVersionUID = 1L;
  private static final int READY = 0;
  private static final int RUNNING = 1;
  private static final int FINISHED = 2;
  /** {@code Functions.EMPTY_RUNNABLE}, read from {@link Disposable#empty()} (not exported). */
  static final Runnable EMPTY = emptyRunnable();

  /**
   * How a task runs: once due now (it needs a thread now and may expire in line), once after a
   * delay, at the pool's fixed rate (direct), or re-armed by each run (a worker's). All but {@code
   * NOW} are tracked by their parent until they end.
   */
  enum Kind { NOW, DELAYED, FIXED_RATE, REARMING }

  /** The task; null once it ended before a run. */
  private volatile Runnable run;
  private final TaskParent parent;
  private final Kind kind;
  /** The handle of its latest hand-off (a {@link TaskHandle} or a {@link Future}); see bind. */
  private volatile Object handle;
  private final long periodNanos;
  // A re-arming task's rate, as in RxJava's PeriodicTask; used by its runs only, one at a time.
  private long count;
  private long lastNowNanos;
  private long startNanos;

  private PoolTask(Runnable run, TaskParent parent, Kind kind, long delayNanos, long periodNanos) {
    this.run = run;
    this.parent = parent;
    this.kind = kind;
    this.periodNanos = periodNanos;
    if (kind == Kind.REARMING) {
      lastNowNanos = parent.now(TimeUnit.NANOSECONDS);
      startNanos = lastNowNanos + delayNanos;
    }
  }

  /**
   * The one path of every {@code schedule} method: checks the arguments, applies the schedule hook
   * once and hands the task to {@code parent}. {@code NOW} is an immediate task ({@code
   * schedule(run)}); {@code DELAYED} a timer, also with a delay {@code <= 0}, which is then due at
   * once and never refused for load (guarantee 7). A refusal is reported by the parent's rules,
   * never thrown.
   *
   * @return the task, or {@link Disposable#disposed()} if {@code closed} or refused
   */
  static Disposable schedule(TaskParent parent, boolean closed, Kind kind, Runnable run,
      long delay, long period, TimeUnit unit) {
    Objects.requireNonNull(run, "run is null");
    Objects.requireNonNull(unit, "unit is null");
    if (closed) {
      return Disposable.disposed();
    }
    long delayNanos = unit.toNanos(delay);
    Runnable decorated = Objects.requireNonNull(RxJavaPlugins.onSchedule(run),
        "run is null (returned by the RxJavaPlugins.onSchedule hook)");
    PoolTask task = new PoolTask(decorated, parent, kind, delayNanos, unit.toNanos(period));
    if (kind != Kind.NOW && !parent.add(task)) {
      return Disposable.disposed();
    }
    return task.handOff(kind == Kind.NOW ? TaskParent.NOW : Math.max(0, delayNanos))
        ? task : Disposable.disposed();
  }

  /** Hands this task on through its parent; a refusal ends it and is reported. */
  private boolean handOff(long delayNanos) {
    try {
      arm(delayNanos);
      return true;
    } catch (RejectedExecutionException e) {
      dispose();
      parent.refused(e);
      return false;
    }
  }

  /**
   * Arms a re-arming task's next run. Its lane is admitted, so only a close refuses it (the pool
   * shut down, or the worker or its lane closed) while the next run was not yet due: it ends as a
   * timer that the pool cancelled (guarantee 7), as a direct periodic task does, not as a rejection.
   */
  private void rearm(long delayNanos) {
    try {
      arm(delayNanos);
    } catch (RejectedExecutionException closed) {
      onCancel();
    }
  }

  private void arm(long delayNanos) {
    // a period <= 0 (RxJava: again at once) is the core's shortest fixed rate, 1 ns
    long rate = kind == Kind.FIXED_RATE ? Math.max(1, periodNanos) : 0;
    Object h = parent.arm(this, delayNanos, rate);
    if (h != null) {
      bind(h);
    }
  }

  /**
   * The late-bound-handle rule, as RxJava's {@code setFuture}: the handle is known only after the
   * hand-off, and a dispose may come first. Each side writes, then reads the other: so whichever
   * comes second withdraws the task (a finished run makes the withdrawal a no-op).
   */
  private void bind(Object h) {
    handle = h;
    if (get() == FINISHED) {
      withdraw(h);
    }
  }

  /** A task in line leaves it at once (waiting counts live work only); a timer lets go. */
  private static void withdraw(Object h) {
    if (h instanceof TaskHandle t) {
      t.cancel();
    } else {
      ((Future<?>) h).cancel(false);
    }
  }

  @Override
  public void run() {
    if (parent.skipsAccepted() || !compareAndSet(READY, RUNNING)) {
      return;
    }
    try {
      run.run(); // non-null: only leaving READY for FINISHED clears it
    } catch (Throwable t) {
      finish(false); // the pool ends a fixed-rate schedule whose run threw
      throw t; // the pool counts it and reports it once (onFailure or its failure handler)
    }
    if (kind == Kind.NOW || kind == Kind.DELAYED || !compareAndSet(RUNNING, READY)) {
      finish(true);
    } else if (kind == Kind.REARMING) {
      // Its lane is admitted (it runs this task), so a next run due now is never refused for load.
      long next = nextDelayNanos();
      rearm(next <= 0 ? TaskParent.NOW : next);
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

  /** Ended in a run; a fixed-rate one also ends its schedule if {@code stop}. */
  private void finish(boolean stop) {
    set(FINISHED);
    Object h = handle;
    handle = null;
    if (stop && kind == Kind.FIXED_RATE && h != null) {
      withdraw(h); // our own schedule; its onCancel finds us FINISHED
    }
    untrack();
  }

  private void untrack() {
    if (kind != Kind.NOW) {
      parent.delete(this);
    }
  }

  @Override
  public void dispose() {
    if (getAndSet(FINISHED) == READY) { // from RUNNING the run in progress ends it
      release();
    }
  }

  /** Ended before a run: lets go of the runnable, the pool's line or timer, and the tracking. */
  private void release() {
    run = null;
    Object h = handle;
    if (h != null) {
      withdraw(h);
    }
    untrack();
  }

  /** The pool cancelled its pending timer (a shutdown, a lane close): its parent hears of it. */
  @Override
  public void onCancel() {
    if (compareAndSet(READY, FINISHED)) {
      release();
      parent.cancelledByPool();
    }
  }

  /** It waited in line past its deadline: refused with core's cause, like a rejection. */
  @Override
  public void onExpired(PoolOverloadedException cause) {
    if (compareAndSet(READY, FINISHED)) {
      release();
      parent.refused(cause);
    }
  }

  /** A run threw and the pool has no failure handler of its own: RxJava's hook, once. */
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
    return Disposable.empty() instanceof AtomicReference<?> ref
        && ref.get() instanceof Runnable r ? r : () -> { };
  }

  @Override
  public String toString() {
    return "PoolTask[" + getWrappedRunnable() + "]";
  }
}
