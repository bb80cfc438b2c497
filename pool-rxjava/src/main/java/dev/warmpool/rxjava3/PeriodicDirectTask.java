package dev.warmpool.rxjava3;

import dev.warmpool.CancellationAware;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.plugins.RxJavaPlugins;
import io.reactivex.rxjava3.schedulers.SchedulerRunnableIntrospection;
import java.util.concurrent.Future;

/**
 * A periodic direct task under the pool's own fixed-rate schedule ({@code pool.scheduleAtFixedRate}),
 * as RxJava's {@code ExecutorScheduler} puts it under a {@code ScheduledExecutorService}'s. The core
 * runs it at a fixed rate on {@link System#nanoTime} and never overlaps its runs, so no clock-drift
 * rebase is needed. This class only adds RxJava's contract: a run that throws is reported once to
 * {@link RxJavaPlugins#onError} and ends the task; {@link #dispose()} cancels the future; the scheduler
 * tracks the task until it ends; a timer cancelled by a pool shutdown is reported to the scheduler.
 */
final class PeriodicDirectTask implements CancellationAware, Disposable,
    SchedulerRunnableIntrospection {
  private final Runnable run;
  private final PoolScheduler scheduler;
  private volatile Future<?> future;
  private volatile boolean disposed;

  PeriodicDirectTask(Runnable run, PoolScheduler scheduler) {
    this.run = run;
    this.scheduler = scheduler;
  }

  /** Publishes the future; cancels it at once if the task was disposed meanwhile. */
  void setFuture(Future<?> f) {
    future = f;
    if (disposed) { // written before read, as dispose does the reverse: no lost cancel
      f.cancel(false);
    }
  }

  @Override
  public void run() {
    if (disposed) {
      return;
    }
    try {
      run.run();
    } catch (Throwable t) {
      dispose(); // cancelling our own future stops the schedule; nothing reaches the pool
      RxJavaPlugins.onError(t);
    }
  }

  @Override
  public void dispose() {
    if (disposed) {
      return;
    }
    disposed = true;
    Future<?> f = future;
    if (f != null) {
      f.cancel(false);
    }
    scheduler.untrack(this);
  }

  /** The core cancelled the schedule without our dispose: the pool shut down. */
  @Override
  public void onCancel() {
    if (!disposed) {
      dispose();
      scheduler.timerCancelledByPool();
    }
  }

  @Override
  public boolean isDisposed() {
    return disposed;
  }

  @Override
  public Runnable getWrappedRunnable() {
    return run;
  }

  @Override
  public String toString() {
    return "PeriodicDirectTask[" + run + "]";
  }
}
