package dev.warmpool.rxjava3;

import dev.warmpool.SerialExecutor;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.disposables.CompositeDisposable;
import io.reactivex.rxjava3.disposables.Disposable;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * An RxJava {@link Scheduler.Worker} over one serial lane of the pool, as reactor-core's {@code
 * ExecutorServiceWorker} over an executor: tasks run one at a time, immediate ones in order, on a
 * pool thread held only while there are tasks. The lane is the container of its tasks: disposing
 * closes it, which cancels the pending ones; a running one finishes, a queued one does not tracker.
 *
 * <p>It is disposed too once its scheduler's run ended (a shutdown): its queued tasks are
 * then skipped, unless that shutdown was its pool's graceful one ({@code keepsAccepted}). From its
 * first timed task on it is tracked in that run, so that a shutdown closes its lane at once.
 */
final class PoolWorker extends Scheduler.Worker implements TaskParent {
  private static final AtomicIntegerFieldUpdater<PoolWorker> DISPOSED =
      AtomicIntegerFieldUpdater.newUpdater(PoolWorker.class, "disposed");

  /** Null for a worker created by a shut-down scheduler: disposed from the start. */
  private final SerialExecutor lane;
  /** Its scheduler's run, in which it was created: disposed by the scheduler's shutdown. */
  private final CompositeDisposable tracker;
  /** Its scheduler, seen as the parent that reports refusals and keeps the clock. */
  private final TaskParent scheduler;
  private final boolean keepsAccepted;
  /** 1 once disposed (or refused); a field behind an updater: idle workers may be many. */
  private volatile int disposed;
  private volatile boolean tracked;

  PoolWorker(SerialExecutor lane, CompositeDisposable tracker, TaskParent scheduler,
      boolean keepsAccepted) {
    this.lane = lane;
    this.tracker = tracker;
    this.scheduler = scheduler;
    this.keepsAccepted = keepsAccepted;
    this.disposed = lane == null ? 1 : 0;
  }

  /** An immediate task, in order with the others: the lane is admitted now if it needs a thread. */
  @Override
  public Disposable schedule(Runnable task) {
    return PoolTask.schedule(this, isDisposed(), PoolTask.Kind.NOW, task, 0, 0,
        TimeUnit.NANOSECONDS);
  }

  /**
   * A timer, also for a delay {@code <= 0}: through the lane's timer, so never refused for load
   * (guarantee 7); timers due at the same time run in the order they were scheduled.
   */
  @Override
  public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
    return PoolTask.schedule(this, isDisposed(), PoolTask.Kind.DELAYED, task, delay, 0, unit);
  }

  /** Periodic as RxJava's default {@code Worker.schedulePeriodically}: see {@link PoolTask}. */
  @Override
  public Disposable schedulePeriodically(Runnable task, long initialDelay, long period,
      TimeUnit unit) {
    return PoolTask.schedule(this, isDisposed(), PoolTask.Kind.REARMING, task, initialDelay,
        period, unit);
  }

  /**
   * The core admits the lane once, the first time it needs a thread (guarantee 6). A periodic
   * task's next run is not armed once this worker is disposed or stopped (its refusal is silent).
   */
  @Override
  public Object arm(Runnable task, long delayNanos, long periodNanos) {
    if (isDisposed()) {
      throw new RejectedExecutionException("worker disposed");
    }
    if (delayNanos == NOW) {
      return lane.enqueue(task); // its handle: a dispose withdraws the task from the lane
    }
    return lane.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
  }

  /**
   * A refusal ends this worker, as in RxJava's {@code ExecutorWorker}. It is one unit, refused once
   * (guarantee 6): only the call that disposes it reports. Disposed or stopped meanwhile: no error.
   */
  @Override
  public void refused(RejectedExecutionException e) {
    if (!tracker.isDisposed() && DISPOSED.compareAndSet(this, 0, 1)) {
      try {
        scheduler.refused(e);
      } finally {
        release();
      }
    }
  }

  @Override
  public void cancelledByPool() {
    scheduler.cancelledByPool();
  }

  /** A timed task: from the first on, this worker is tracked in its scheduler's tracker. */
  @Override
  public boolean add(Disposable task) {
    if (!tracked && !keepsAccepted) {
      tracked = true;
      tracker.add(this); // disposes this worker if the run ended
      if (disposed != 0) {
        tracker.delete(this); // a dispose between the flag and the add missed it
      }
    }
    return !isDisposed();
  }

  /** The lane holds this worker's tasks (closing it cancels them): nothing to track per task. */
  @Override
  public boolean delete(Disposable task) {
    return false;
  }

  @Override
  public long now(TimeUnit unit) {
    return scheduler.now(unit);
  }

  @Override
  public void dispose() {
    if (DISPOSED.compareAndSet(this, 0, 1)) {
      release();
    }
  }

  private void release() {
    lane.close();
    if (tracked) {
      tracker.delete(this);
    }
  }

  @Override
  public boolean isDisposed() {
    return disposed != 0 || tracker.isDisposed();
  }

  @Override
  public boolean skipsAccepted() {
    return disposed != 0 || (!keepsAccepted && tracker.isDisposed());
  }
}
