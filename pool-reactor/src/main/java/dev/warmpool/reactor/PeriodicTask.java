package dev.warmpool.reactor;

import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A periodic {@link PoolTask}, driven by core's periodic schedule on the pool (direct tasks) or on
 * the worker's serial lane (worker tasks): a fixed rate for a positive period, and for Reactor's
 * "period {@code <= 0}: run again at once", a fixed delay of one nanosecond. A run never overlaps the
 * previous one. A run that throws is reported (thread handler and {@code onHandleError}) and the task
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

  PeriodicTask(Runnable task, PoolScheduler scheduler, PoolWorker worker) {
    super(task, scheduler, worker, true);
  }

  /** Puts this task on {@code on}'s periodic schedule. */
  Future<?> schedule(Periodic on, long initialDelay, long period, TimeUnit unit) {
    return period > 0
        ? on.atFixedRate(this, initialDelay, period, unit)
        : on.withFixedDelay(this, initialDelay, 1, TimeUnit.NANOSECONDS);
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
    try {
      task.run();
    } catch (Throwable t) {
      reportToThread(t);
      HandleErrorHook.call(t); // Schedulers.onHandleError, as Reactor's schedulers
    }
    if (endPeriodicRun() && scheduler.isStopping()) {
      cancelIfPending();
    }
  }
}
