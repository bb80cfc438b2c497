package dev.warmpool.rxjava3;

import dev.warmpool.PoolClosedException;
import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.disposables.CompositeDisposable;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.plugins.RxJavaPlugins;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/**
 * The RxJava {@link Scheduler} behind {@link PoolSchedulers} and {@link PoolScope}, as RxJava's
 * {@code ExecutorScheduler} over a {@code ScheduledExecutorService}: {@code createWorker()} is a
 * {@link PoolWorker} over {@code pool.newSerialExecutor()}; a direct task goes to {@code
 * pool.enqueue} (never blocks), {@code pool.schedule} or {@code pool.scheduleAtFixedRate}. A
 * rejection is never thrown: it goes to {@code onRejected}, and the call returns {@link
 * Disposable#disposed()}.
 *
 * <p><b>Lifecycle.</b> {@code tasks} is this run of the scheduler: what a shutdown must cancel
 * (pending delayed and periodic direct tasks, and workers from their first timed task on). {@code
 * shutdown()} disposes it, which is the shut-down state; {@code start()} puts a new one in (both
 * under {@code lifecycle}). A worker keeps the run it was created in and is disposed once that
 * ended, so it needs no registration on the hot path; an item added to an ended run is disposed at
 * once. An owning scheduler tracks nothing: its pool's graceful shutdown settles every timer.
 */
final class PoolScheduler extends Scheduler implements TaskParent {

  /** Where rejections go: {@link RxJavaPlugins#onError}, or a {@link PoolScope}'s stream. */
  interface Rejections {
    void accept(RejectedExecutionException e);

    /** Whether a pending timer cancelled by the pool's shutdown is reported (as a closed pool). */
    default boolean reportsClosedTimers() {
      return false;
    }
  }

  final WorkerPool pool;
  private final boolean owning;
  private final Rejections onRejected;
  /** The time source of {@link #now}; null means RxJava's default clock. For tests. */
  private final ToLongFunction<TimeUnit> clock;
  private final String label;
  private final Object lifecycle = new Object();
  private volatile CompositeDisposable tasks = new CompositeDisposable();

  PoolScheduler(WorkerPool pool, boolean owning, Rejections onRejected,
      ToLongFunction<TimeUnit> clock, String label) {
    this.pool = Objects.requireNonNull(pool, "pool is null");
    this.owning = owning;
    this.onRejected = onRejected;
    this.clock = clock;
    this.label = label;
  }

  /** A conventional scheduler: rejections go to {@link RxJavaPlugins#onError}. */
  static PoolScheduler conventional(WorkerPool pool, boolean owning) {
    return new PoolScheduler(pool, owning, RxJavaPlugins::onError, null,
        owning ? "PoolSchedulers.fromOwned" : "PoolSchedulers.from");
  }

  @Override
  public Worker createWorker() {
    CompositeDisposable run = tasks;
    return new PoolWorker(run.isDisposed() ? null : pool.newSerialExecutor(), run, this, owning);
  }

  /** An immediate task: it needs a thread now, and is admitted or refused now. */
  @Override
  public Disposable scheduleDirect(Runnable run) {
    return PoolTask.schedule(this, tasks.isDisposed(), PoolTask.Kind.NOW, run, 0, 0,
        TimeUnit.NANOSECONDS);
  }

  /** A timer, also for a delay {@code <= 0}: never refused for load (guarantee 7). */
  @Override
  public Disposable scheduleDirect(Runnable run, long delay, TimeUnit unit) {
    return PoolTask.schedule(this, tasks.isDisposed(), PoolTask.Kind.DELAYED, run, delay, 0, unit);
  }

  @Override
  public Disposable schedulePeriodicallyDirect(Runnable run, long initialDelay, long period,
      TimeUnit unit) {
    return PoolTask.schedule(this, tasks.isDisposed(), PoolTask.Kind.FIXED_RATE, run,
        initialDelay, period, unit);
  }

  /**
   * A timer due now (delay 0) is handed on at once by core, and waits its turn on a full pool (a
   * timer is never refused for load, guarantee 7): one call, so it is decorated once (guarantee 15).
   */
  @Override
  public Object arm(Runnable task, long delayNanos, long periodNanos) {
    if (delayNanos == NOW) {
      return pool.enqueue(task);
    }
    return periodNanos > 0
        ? pool.scheduleAtFixedRate(task, delayNanos, periodNanos, TimeUnit.NANOSECONDS)
        : pool.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public long now(TimeUnit unit) {
    return clock == null ? super.now(unit) : clock.applyAsLong(unit);
  }

  @Override
  public void start() {
    synchronized (lifecycle) {
      if (!tasks.isDisposed()) {
        return;
      }
      if (owning && pool.isShutdown()) {
        if (!pool.isTerminated()) {
          // Its last tasks still run, so it cannot reopen yet. Stay shut down rather than run on
          // over a closed pool: a later start() reboots it.
          return;
        }
        try {
          pool.reboot();
        } catch (IllegalStateException rebootedMeanwhile) {
          // someone else reopened it: fine
        }
      }
      tasks = new CompositeDisposable();
    }
  }

  /**
   * Disposes this run's tracked tasks and workers; an owning scheduler shuts its pool down
   * gracefully instead: accepted tasks of its workers and due timers run, timers not yet due end.
   */
  @Override
  public void shutdown() {
    synchronized (lifecycle) {
      if (tasks.isDisposed()) {
        return;
      }
      tasks.dispose();
      if (owning) {
        pool.shutdown();
      }
    }
  }

  /** Reported unless this scheduler is shut down: then the rejection is the shutdown racing the call. */
  @Override
  public void refused(RejectedExecutionException e) {
    if (!tasks.isDisposed()) {
      onRejected.accept(e);
    }
  }

  /**
   * A pending timer cancelled by a shutdown: a {@link PoolScope} promises its stream a {@link
   * PoolClosedException} then (fault 4); a conventional scheduler drops it, as RxJava's own
   * schedulers drop the tasks of a dead executor.
   */
  @Override
  public void cancelledByPool() {
    if (onRejected.reportsClosedTimers() && pool.isShutdown()) {
      refused(new PoolClosedException(pool.name(), "pool '" + pool.name()
          + "' shut down while a timer of this stream was pending"));
    }
  }

  /** Tracks a delayed or periodic direct task; false (and disposed) if this run has ended. */
  @Override
  public boolean add(Disposable d) {
    return owning ? !tasks.isDisposed() : tasks.add(d);
  }

  @Override
  public boolean delete(Disposable d) {
    return tasks.delete(d);
  }

  /** Tracked items: pending delayed or periodic direct tasks, workers with timed tasks; for tests. */
  int liveCount() {
    return tasks.size();
  }

  @Override
  public String toString() {
    return label + "(" + pool + ")";
  }
}
