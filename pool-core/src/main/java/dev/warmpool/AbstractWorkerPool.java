package dev.warmpool;

import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * What every {@link WorkerPool} shares: argument checks, the {@code ExecutorService} plumbing and the
 * routing of all submissions through {@link #dispatch}, which takes a function and its argument so that
 * {@link FuncPool} needs no per-task allocation.
 */
abstract class AbstractWorkerPool extends AbstractExecutorService implements WorkerPool {
  /** Blocking mode: the caller waits in line. */
  static final int EXECUTE = 0;
  /** Never waits; answers false when full. */
  static final int TRY = 1;
  /** Blocking mode: the task waits in line, the caller does not. */
  static final int ENQUEUE = 2;
  /**
   * Work that was admitted earlier (a lane's later burst, a due delayed task): never rejected for
   * being full, in either mode, and not bounded by maxWaiting; waits in line instead.
   */
  static final int ADMITTED = 3;
  /** Like {@link #TRY}, but a refusal is not counted as a rejection (a sharded pool probing). */
  static final int PROBE = 4;

  /**
   * Routes {@code fn.accept(arg)} to a worker in the given mode.
   *
   * @return true if accepted; false only in {@link #TRY} mode when full
   */
  abstract boolean dispatch(Consumer<Object> fn, Object arg, int mode);

  /** Like {@link #dispatch} in blocking mode, giving up after {@code nanos}. */
  abstract boolean dispatchTimed(Consumer<Object> fn, Object arg, long nanos)
      throws InterruptedException;

  /** Delayed and periodic tasks not yet done, lanes' included; cancelled by shutdown. */
  final Set<DelayedTask<?>> delayed = ConcurrentHashMap.newKeySet();

  /** Hands a due delayed task to a worker; it was admitted when scheduled, so it only waits. */
  private final Consumer<DelayedTask<?>> runWhenDue = task -> {
    try {
      dispatch(Worker.RUN, task, ADMITTED);
    } catch (RejectedExecutionException closedMeanwhile) {
      task.cancel(false);
    }
  };

  static <T> T requireTask(T task) {
    return Objects.requireNonNull(task, "task must not be null");
  }

  @Override
  public void execute(Runnable task) {
    dispatch(Worker.RUN, requireTask(task), EXECUTE);
  }

  @Override
  public boolean tryExecute(Runnable task) {
    return dispatch(Worker.RUN, requireTask(task), TRY);
  }

  @Override
  public boolean tryExecute(Runnable task, Duration timeout) throws InterruptedException {
    requireTask(task);
    Objects.requireNonNull(timeout, "timeout must not be null");
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must be >= 0, was " + timeout);
    }
    long nanos;
    try {
      nanos = timeout.toNanos();
    } catch (ArithmeticException tooLong) {
      nanos = Long.MAX_VALUE;
    }
    return dispatchTimed(Worker.RUN, task, nanos);
  }

  @Override
  public void enqueue(Runnable task) {
    dispatch(Worker.RUN, requireTask(task), ENQUEUE);
  }

  @Override
  public java.util.concurrent.Future<?> submit(Runnable task) {
    return super.submit(requireTask(task));
  }

  @Override
  public <T> java.util.concurrent.Future<T> submit(Runnable task, T result) {
    return super.submit(requireTask(task), result);
  }

  @Override
  public <T> java.util.concurrent.Future<T> submit(Callable<T> task) {
    return super.submit(requireTask(task));
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
    requireTask(task);
    Objects.requireNonNull(unit, "unit must not be null");
    checkOpen();
    return new DelayedTask<Void>(task, 0, runWhenDue, delayed, null).start(unit.toNanos(delay));
  }

  @Override
  public <V> ScheduledFuture<V> schedule(Callable<V> task, long delay, TimeUnit unit) {
    requireTask(task);
    Objects.requireNonNull(unit, "unit must not be null");
    checkOpen();
    return new DelayedTask<>(task, 0, runWhenDue, delayed, null).start(unit.toNanos(delay));
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, long initialDelay, long period,
      TimeUnit unit) {
    return schedulePeriodic(task, initialDelay, period, unit, "period", 1);
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, long initialDelay, long delay,
      TimeUnit unit) {
    return schedulePeriodic(task, initialDelay, delay, unit, "delay", -1);
  }

  private ScheduledFuture<?> schedulePeriodic(Runnable task, long initialDelay, long period,
      TimeUnit unit, String what, int sign) {
    requireTask(task);
    Objects.requireNonNull(unit, "unit must not be null");
    if (period <= 0) {
      throw new IllegalArgumentException(what + " must be > 0, was " + period);
    }
    checkOpen();
    long nanos = DelayedTask.clamp(unit.toNanos(period));
    return new DelayedTask<Void>(task, sign * Math.max(1, nanos), runWhenDue, delayed, null)
        .start(unit.toNanos(initialDelay));
  }

  /** Throws {@link PoolClosedException} if the pool is shut down. */
  abstract void checkOpen();

  /** Cancels every delayed task that has not started; part of shutdown. */
  void cancelDelayed() {
    for (DelayedTask<?> t : delayed) {
      t.cancel(false);
    }
  }

  /** Delayed tasks pending; for tests. */
  int delayedCount() {
    return delayed.size();
  }

  @Override
  public void close() {
    shutdown();
    boolean interrupted = false;
    for (;;) {
      try {
        if (awaitTermination(1, TimeUnit.DAYS)) {
          break;
        }
      } catch (InterruptedException e) {
        interrupted = true;
        break;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  static String formatDuration(Duration d) {
    if (d.toMillis() % 1000 == 0 && d.toSeconds() > 0) {
      long s = d.toSeconds();
      return s % 3600 == 0 ? s / 3600 + "h" : s % 60 == 0 ? s / 60 + "m" : s + "s";
    }
    return d.toNanos() % 1_000_000 == 0 ? d.toMillis() + "ms" : d.toNanos() + "ns";
  }

  @Override
  public String toString() {
    return "workerPool(\"" + name() + "\",capacity=" + capacity() + ",maxIdle="
        + formatDuration(maxIdle()) + ")";
  }
}
