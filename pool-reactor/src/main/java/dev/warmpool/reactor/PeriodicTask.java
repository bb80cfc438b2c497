package dev.warmpool.reactor;

import java.util.concurrent.Delayed;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A periodic {@link PoolTask}, driven by core's periodic schedule on the pool (direct tasks) or on
 * the worker's serial lane (worker tasks): a fixed rate for a positive period, and for Reactor's
 * "period {@code <= 0}: run again at once", a fixed delay of one nanosecond. A run never overlaps the
 * previous one. A run that throws is reported as every task's failure ({@link PoolTask}) and the task
 * keeps running, as on Reactor's own schedulers.
 *
 * <p>A periodic task ends only when disposed, when its worker is disposed, or when its scheduler
 * starts disposing (gracefully or not): it would otherwise never let a graceful disposal finish.
 */
final class PeriodicTask extends PoolTask {

  /** Core's periodic schedule: on the pool, or on a worker's lane. */
  interface Periodic {
    Future<?> atFixedRate(Runnable task, long initialDelay, long period, TimeUnit unit);

    Future<?> withFixedDelay(Runnable task, long initialDelay, long delay, TimeUnit unit);
  }

  /** Where this task's schedule lives (the pool or the worker's lane), and its period. */
  private Periodic on;
  private long periodNanos;

  PeriodicTask(Runnable task, PoolScheduler scheduler, PoolWorker worker) {
    super(task, scheduler, worker, true);
  }

  /** Puts this task on {@code on}'s periodic schedule. */
  Future<?> schedule(Periodic on, long initialDelay, long period, TimeUnit unit) {
    this.on = on;
    this.periodNanos = unit.toNanos(period);
    return arm(on, unit.toNanos(initialDelay), periodNanos);
  }

  private Future<?> arm(Periodic on, long initialDelayNanos, long periodNanos) {
    return periodNanos > 0
        ? on.atFixedRate(this, initialDelayNanos, periodNanos, TimeUnit.NANOSECONDS)
        : on.withFixedDelay(this, initialDelayNanos, 1, TimeUnit.NANOSECONDS);
  }

  @Override
  boolean isPeriodic() {
    return true;
  }

  @Override
  public void run() {
    if (scheduler.isStopping()) {
      cancelIfPending();
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
    boolean next = endPeriodicRun();
    if (next && scheduler.isStopping()) {
      cancelIfPending();
      next = false;
    }
    if (failure != null) {
      HandleErrorHook.call(failure); // Schedulers.onHandleError, as Reactor's schedulers
      if (next) {
        rearmAfterFailure();
      }
      // To the pool, as every task's failure: counted as failed, reported to its failure handler
      // (guarantee 8). Core's periodic schedule ends with a run that throws: the next one is armed.
      throw PoolTask.<RuntimeException>sneaky(failure);
    }
  }

  /**
   * The run failed: core's schedule ends with it, so a new one continues at the same rate (its first
   * run when the next would have been due), as Reactor's periodic tasks survive a failed run.
   */
  private void rearmAfterFailure() {
    Future<?> ending = future();
    long nextDelay = 0;
    if (periodNanos > 0 && ending instanceof Delayed d) {
      nextDelay = Math.max(0, d.getDelay(TimeUnit.NANOSECONDS) + periodNanos);
    }
    try {
      setFuture(arm(on, nextDelay, periodNanos));
    } catch (RuntimeException closed) {
      cancelIfPending(); // the pool or the lane closed: this was the last run
    }
  }
}
