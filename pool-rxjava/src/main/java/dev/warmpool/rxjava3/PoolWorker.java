package dev.warmpool.rxjava3;

import dev.warmpool.SerialExecutor;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.disposables.Disposable;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An RxJava {@link Scheduler.Worker} over one serial lane of the pool: its tasks run one at a time,
 * non-delayed ones in submission order, and it holds a pool worker only while it has tasks.
 *
 * <p>Disposing closes the lane, which cancels its queued and delayed tasks (periodic ones too, since
 * a periodic task waits as a delayed one between runs); a task already running finishes. A task
 * polled by the lane concurrently with the dispose sees {@link #isDisposed()} and does not run.
 *
 * <p>A worker is also disposed once its scheduler shuts down (its {@code epoch} is then stale): its
 * queued tasks are skipped when the lane reaches them, unless the shutdown is an owning scheduler's,
 * which is its pool's graceful shutdown (they run). A worker with delayed or periodic tasks is
 * registered with the scheduler, so that shutdown closes its lane and releases its timers at once.
 */
final class PoolWorker extends Scheduler.Worker implements TaskParent {
  private final PoolScheduler scheduler;
  /** Null for a worker created by a shut-down scheduler: disposed from the start. */
  private final SerialExecutor lane;
  private final AtomicBoolean disposed;
  /** The scheduler's epoch at creation; a shutdown moves the scheduler's on. */
  private final int epoch;
  /** Whether the scheduler tracks this worker (it has had timed tasks). */
  private volatile boolean tracked;

  PoolWorker(PoolScheduler scheduler, SerialExecutor lane, int epoch) {
    this.scheduler = scheduler;
    this.lane = lane;
    this.epoch = epoch;
    this.disposed = new AtomicBoolean(lane == null);
  }

  @Override
  public Disposable schedule(Runnable run, long delay, TimeUnit unit) {
    Objects.requireNonNull(run, "run is null");
    Objects.requireNonNull(unit, "unit is null");
    if (isDisposed()) {
      return Disposable.disposed();
    }
    PoolTask task = PoolTask.oneShot(PoolScheduler.decorate(run), this, false);
    return arm(task, unit.toNanos(delay), false) ? task : Disposable.disposed();
  }

  /**
   * Periodic as RxJava's default {@link Scheduler.Worker#schedulePeriodically} (see {@link
   * PoolTask}): each run is one task of this worker's lane.
   */
  @Override
  public Disposable schedulePeriodically(Runnable run, long initialDelay, long period,
      TimeUnit unit) {
    Objects.requireNonNull(run, "run is null");
    Objects.requireNonNull(unit, "unit is null");
    if (isDisposed()) {
      return Disposable.disposed();
    }
    long initial = unit.toNanos(initialDelay);
    PoolTask task = PoolTask.rearming(PoolScheduler.decorate(run), this, initial,
        unit.toNanos(period));
    return arm(task, initial, true) ? task : Disposable.disposed();
  }

  /**
   * A task due now needs a thread now: {@code lane.execute}, where the core admits or rejects the
   * lane the first time it needs a thread (its first immediate task, or a due timer) and never
   * rejects it afterwards (guarantee 6). A periodic task's first arm goes through the lane's timer,
   * as a delayed task does, also when due now (guarantee 7).
   */
  @Override
  public boolean arm(PoolTask task, long delayNanos, boolean timer) {
    if (isDisposed()) {
      return false;
    }
    try {
      if (delayNanos <= 0 && !timer) {
        lane.execute(task);
      } else {
        trackForShutdown();
        task.setFuture(lane.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS));
      }
      return true;
    } catch (RejectedExecutionException e) {
      rejected(e);
      return false;
    }
  }

  /**
   * A rejection ends this worker, as RxJava's own {@code ExecutorWorker} does: the worker disposes
   * itself, so nothing more is scheduled on a worker whose stream already failed. The worker is one
   * unit, rejected once (guarantee 6): of several calls refused at once only the one that disposes
   * it reports. A closed lane means we were disposed meanwhile: not an error.
   */
  private void rejected(RejectedExecutionException e) {
    if (epoch == scheduler.epoch() && disposed.compareAndSet(false, true)) {
      try {
        scheduler.rejected(e);
      } finally {
        release();
      }
    }
  }

  @Override
  public void cancelledByPool(boolean expired) {
    scheduler.cancelledByPool(expired);
  }

  /** The lane holds this worker's tasks (closing it cancels them): nothing to track per task. */
  @Override
  public boolean add(Disposable d) {
    return !isDisposed();
  }

  @Override
  public boolean remove(Disposable d) {
    d.dispose();
    return true;
  }

  @Override
  public boolean delete(Disposable d) {
    return false;
  }

  /** From its first timed task on, a shutdown must close this worker's lane to release timers. */
  private void trackForShutdown() {
    if (!tracked) {
      tracked = true;
      scheduler.track(this);
    }
  }

  /** The scheduler's clock, so that worker and scheduler always agree. */
  @Override
  public long now(TimeUnit unit) {
    return scheduler.now(unit);
  }

  @Override
  public void dispose() {
    if (disposed.compareAndSet(false, true)) {
      release();
    }
  }

  /** After this worker was marked disposed: closes its lane, which cancels its pending tasks. */
  private void release() {
    lane.close();
    if (tracked) {
      scheduler.untrack(this);
    }
  }

  @Override
  public boolean isDisposed() {
    return disposed.get() || epoch != scheduler.epoch();
  }

  /**
   * Whether a task this worker accepted is skipped when its lane reaches it: the worker was disposed,
   * or its scheduler shut down, unless that was an owning scheduler's graceful shutdown of its pool.
   */
  @Override
  public boolean skipsAccepted() {
    return disposed.get()
        || (epoch != scheduler.epoch() && !scheduler.runsAcceptedAfterShutdown());
  }
}
