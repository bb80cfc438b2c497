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
 * queued tasks are skipped when the lane reaches them. A worker with delayed or periodic tasks is
 * registered with the scheduler, so that shutdown closes its lane and releases its timers at once.
 */
final class PoolWorker extends Scheduler.Worker {
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
    PoolTask task = new PoolTask(PoolScheduler.decorate(run), this, null);
    try {
      if (delay <= 0) {
        lane.execute(task);
      } else {
        trackForShutdown();
        task.setFuture(lane.schedule(task, delay, unit));
      }
    } catch (RejectedExecutionException e) {
      rejected(e);
      return Disposable.disposed();
    }
    return task;
  }

  @Override
  public Disposable schedulePeriodically(Runnable run, long initialDelay, long period,
      TimeUnit unit) {
    Objects.requireNonNull(run, "run is null");
    Objects.requireNonNull(unit, "unit is null");
    if (isDisposed()) {
      return Disposable.disposed();
    }
    trackForShutdown();
    PeriodicTask task = new PeriodicTask(PoolScheduler.decorate(run), scheduler, this,
        lane::schedule, unit.toNanos(initialDelay), unit.toNanos(period));
    try {
      task.start();
    } catch (RejectedExecutionException e) {
      rejected(e);
      return Disposable.disposed();
    }
    return task;
  }

  /**
   * A rejection ends this worker, as RxJava's own {@code ExecutorWorker} does: the worker reports
   * it and disposes itself, so nothing more is scheduled on a worker whose stream already failed.
   * A closed lane means we were disposed meanwhile: not an error.
   */
  private void rejected(RejectedExecutionException e) {
    if (!isDisposed()) {
      scheduler.rejected(e);
      dispose();
    }
  }

  /** From its first timed task on, a shutdown must close this worker's lane to release timers. */
  private void trackForShutdown() {
    if (!tracked) {
      tracked = true;
      scheduler.track(this);
    }
  }

  PoolScheduler scheduler() {
    return scheduler;
  }

  /** The scheduler's clock, so that worker and scheduler always agree. */
  @Override
  public long now(TimeUnit unit) {
    return scheduler.now(unit);
  }

  @Override
  public void dispose() {
    if (disposed.compareAndSet(false, true)) {
      lane.close();
      if (tracked) {
        scheduler.untrack(this);
      }
    }
  }

  @Override
  public boolean isDisposed() {
    return disposed.get() || epoch != scheduler.epoch();
  }
}
