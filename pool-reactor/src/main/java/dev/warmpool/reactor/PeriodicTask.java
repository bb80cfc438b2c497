package dev.warmpool.reactor;

import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;

/**
 * A periodic {@link PoolTask} at a fixed rate: run {@code k} is due {@code initialDelay + k * period}
 * after scheduling; a run never overlaps the previous one, and runs that fall behind start right
 * after each other until the task catches up.
 *
 * <p>Two drivers: the pool's own fixed-rate timer ({@code rearm == null}; direct tasks with a positive
 * period), or the task itself, which re-arms a one-shot delayed task after each run ({@code rearm}).
 * The second serves workers, because a serial lane offers only one-shot delays, and a period
 * {@code <= 0}, which Reactor defines as "run again at once" and the pool's timer refuses.
 *
 * <p>A periodic task ends only when disposed, when its worker is disposed, or when its scheduler
 * starts disposing (gracefully or not): it would otherwise never let a graceful disposal finish.
 */
final class PeriodicTask extends PoolTask {
  /** Schedules the next run; used by self-re-arming tasks. */
  interface Rearm {
    Future<?> rearm(Runnable task, long delayNanos);
  }

  private final Rearm rearm;
  private final long periodNanos;
  /** Deadline of the next run in {@link System#nanoTime()} terms; touched only by runs, one at a time. */
  private long nextDeadline;

  PeriodicTask(Runnable task, PoolScheduler scheduler, PoolWorker worker, Rearm rearm,
      long firstDeadline, long periodNanos) {
    super(task, scheduler, worker, true);
    this.rearm = rearm;
    this.periodNanos = Math.max(0, periodNanos);
    this.nextDeadline = firstDeadline;
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
    if (!endPeriodicRun()) {
      return;
    }
    if (scheduler.isStopping()) {
      cancelIfPending();
    } else if (rearm != null) {
      nextDeadline += periodNanos;
      try {
        setFuture(rearm.rearm(this, nextDeadline - System.nanoTime()));
      } catch (RejectedExecutionException closed) {
        cancelIfPending(); // the worker was disposed or the pool shut down meanwhile
      }
    }
  }
}
