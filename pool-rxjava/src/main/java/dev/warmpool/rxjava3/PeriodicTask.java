package dev.warmpool.rxjava3;

import dev.warmpool.CancellationAware;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.plugins.RxJavaPlugins;
import io.reactivex.rxjava3.schedulers.SchedulerRunnableIntrospection;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A periodic task at a fixed rate, as RxJava defines it, built from one-shot delayed schedules on the
 * core's shared timer (the pool's for a direct task, the lane's for a worker task).
 *
 * <h2>Rate and clock drift</h2>
 * Run {@code n} is due at {@code start + n * period} on the scheduler's clock ({@link
 * Scheduler#now}), so a late run is followed by quicker ones until the schedule is caught up; runs
 * never overlap, because the next run is armed only after the current one returned. If between two
 * runs the clock moved backwards by more than {@link Scheduler#clockDriftTolerance()}, or forwards by
 * more than one period plus that tolerance, the clock jumped: the schedule is rebased so that the
 * next run is one period from now, instead of a burst of catch-up runs or a long stall.
 *
 * <h2>Concurrency</h2>
 * {@code start}, {@code lastNow} and {@code count} are accessed only by the task's own runs, each of
 * which happens-before the next through the timer hand-off. {@code current} and {@code disposed} are
 * written and read in opposite orders by {@link #arm} and {@link #dispose}, so a run armed concurrently
 * with a dispose is cancelled by one of them.
 *
 * <p>A run that throws is reported once to {@link RxJavaPlugins#onError} and ends the periodic task,
 * as in RxJava's own schedulers.
 */
final class PeriodicTask implements CancellationAware, Disposable, SchedulerRunnableIntrospection {
  /** Where one run is armed: {@code pool::schedule} or {@code lane::schedule}. */
  interface Timer {
    ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit);
  }

  private final Runnable run;
  private final PoolScheduler scheduler;
  /** The owning worker, or null for a direct periodic task (then tracked by the scheduler). */
  private final PoolWorker worker;
  private final Timer timer;
  private final long initialDelay;
  private final long period;
  private long start;
  private long lastNow;
  private long count;
  private volatile Future<?> current;
  private volatile boolean disposed;

  PeriodicTask(Runnable run, PoolScheduler scheduler, PoolWorker worker, Timer timer,
      long initialDelayNanos, long periodNanos) {
    this.run = run;
    this.scheduler = scheduler;
    this.worker = worker;
    this.timer = timer;
    this.initialDelay = initialDelayNanos;
    this.period = periodNanos;
    this.lastNow = scheduler.now(TimeUnit.NANOSECONDS);
    this.start = lastNow + initialDelayNanos;
  }

  /**
   * Arms the first run.
   *
   * @throws RejectedExecutionException if the lane or the pool is closed
   */
  void start() {
    arm(initialDelay);
  }

  @Override
  public void run() {
    if (isDisposed()) {
      return;
    }
    try {
      run.run();
    } catch (Throwable t) {
      dispose();
      RxJavaPlugins.onError(t);
      return;
    }
    if (isDisposed()) {
      return;
    }
    long now = scheduler.now(TimeUnit.NANOSECONDS);
    long tolerance = Scheduler.clockDriftTolerance();
    long next;
    if (now + tolerance < lastNow || now >= lastNow + period + tolerance) {
      next = now + period;
      start = next - period * ++count; // as if the task had started count periods ago
    } else {
      next = start + ++count * period;
    }
    lastNow = now;
    try {
      arm(next - now);
    } catch (RejectedExecutionException e) {
      if (!isDisposed()) { // a closed lane means the worker was disposed: not an error
        scheduler.rejected(e);
      }
      dispose();
    }
  }

  private void arm(long delayNanos) {
    Future<?> f = timer.schedule(this, delayNanos, TimeUnit.NANOSECONDS);
    current = f;
    if (disposed) {
      f.cancel(false);
    }
  }

  @Override
  public void dispose() {
    if (disposed) {
      return;
    }
    disposed = true;
    Future<?> f = current;
    if (f != null) {
      f.cancel(false);
    }
    if (worker == null) {
      scheduler.untrack(this);
    }
  }

  /** The core cancelled the armed run without our dispose: the pool shut down or the lane closed. */
  @Override
  public void onCancel() {
    if (isDisposed()) {
      return;
    }
    dispose();
    scheduler.timerCancelledByPool();
  }

  @Override
  public boolean isDisposed() {
    return disposed || (worker != null && worker.isDisposed());
  }

  @Override
  public Runnable getWrappedRunnable() {
    return run;
  }

  @Override
  public String toString() {
    return "PeriodicTask[" + run + "]";
  }
}
