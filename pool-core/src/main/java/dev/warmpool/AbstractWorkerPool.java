package dev.warmpool;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;
import java.util.Set;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
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

  /**
   * Routes one task of the given kind to a worker in the given mode.
   *
   * @return true if accepted; false only in {@link Mode#TRY} and {@link Mode#PROBE} when full
   */
  abstract boolean dispatch(TaskKind kind, Object arg, Mode mode);

  /** Like {@link #dispatch} in {@link Mode#ENQUEUE} or {@link Mode#ADMITTED}, with a handle. */
  abstract TaskHandle enqueue(TaskKind kind, Object arg, Mode mode);

  /** Like {@link #dispatch} in blocking mode, giving up after {@code nanos}. */
  abstract boolean dispatchTimed(TaskKind kind, Object arg, long nanos) throws InterruptedException;

  /** Delayed and periodic tasks not yet done, lanes' included; cancelled by shutdown. */
  final Set<DelayedTask<?>> delayed = ConcurrentHashMap.newKeySet();

  /**
   * Subpools not yet terminated; this pool terminates only after all of them. Held weakly: a subpool
   * nobody references has no work either (a task, lane or timer of a subpool references it), so
   * dropping it loses nothing, and a caller may make views freely. Guarded by itself.
   */
  private final Map<Subpool, Boolean> subpools = new WeakHashMap<>();

  // ---------------------------------------------------------------------------------------------
  // Accounting, called by the kinds of tasks that run under this pool (lanes, subpool tasks)

  /** One more task accepted (lanes count their own tasks). */
  abstract void accepted();

  /** A task withdrawn by its handle or a closing lane no longer counts as accepted. */
  abstract void withdrawn();

  /** An entry that held a seat was withdrawn by its handle before a worker reached it. */
  void withdrawnTaken(WaitingLine.Entry e) {
    if (e.kind.countsAsTask()) {
      withdrawn();
    }
  }

  /** Withdraws a waiting entry through its handle; false if it is no longer waiting. */
  abstract boolean withdraw(WaitingLine.Entry e);

  /** A closing lane takes its carrier out of the line; false if it was not waiting there. */
  abstract boolean withdrawCarrier(SerialLane lane);

  /** Whether work waits in line for a seat: a lane then yields its worker after its budget. */
  abstract boolean hasWaiters();

  /** Whether shutdownNow interrupted the running tasks on purpose (the interrupt is kept). */
  abstract boolean stopping();

  /** A task ran to completion. */
  abstract void taskCompleted();

  /** A task threw: count it and pass it to the failure handler (if that throws, the worker exits). */
  abstract void taskFailed(Throwable failure);

  /** Terminates the pool if it is shut down and nothing holds it any more. */
  abstract void tryTerminate();

  /** Runs a task on the current worker and counts the outcome. */
  final void runCounted(Runnable task) {
    clearStaleInterrupt();
    try {
      task.run();
    } catch (Throwable t) {
      taskFailed(t);
      return;
    }
    taskCompleted();
  }

  /** Runs a {@link FuncPool}'s function on the current worker and counts the outcome. */
  final void runCounted(Consumer<Object> function, Object arg) {
    clearStaleInterrupt();
    try {
      function.accept(arg);
    } catch (Throwable t) {
      taskFailed(t);
      return;
    }
    taskCompleted();
  }

  private void clearStaleInterrupt() {
    if (!stopping()) {
      Thread.interrupted(); // a stale interrupt must not leak into the next task
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Subpools

  @Override
  public WorkerPool newSubpool(String name, int capacity) {
    return newSubpool(name, capacity, isNonblocking(), defaultMaxWaiting());
  }

  @Override
  public WorkerPool newSubpool(String name, int capacity, boolean nonblocking, int maxWaiting) {
    Objects.requireNonNull(name, "name must not be null");
    WorkerPool.Builder.checkCapacity(capacity);
    if (maxWaiting < 0) {
      throw new IllegalArgumentException("maxWaiting must be >= 0, was " + maxWaiting);
    }
    checkOpen();
    Subpool sub = new Subpool(this, name, capacity, nonblocking, maxWaiting);
    addSubpool(sub);
    if (isShutdown()) { // a shutdown that ran between our check and our add did not see it
      sub.shutdown();
      checkOpen();
    }
    return sub;
  }

  /** The maxWaiting a subpool takes by default: this pool's. */
  abstract int defaultMaxWaiting();

  void addSubpool(Subpool s) {
    synchronized (subpools) {
      subpools.put(s, Boolean.TRUE);
    }
  }

  /** Whether a subpool has not terminated yet. */
  boolean hasSubpools() {
    synchronized (subpools) {
      return !subpools.isEmpty();
    }
  }

  private List<Subpool> subpools() {
    synchronized (subpools) {
      return new ArrayList<>(subpools.keySet());
    }
  }

  /** Part of shutdown: subpools shut down first, so their accepted work still reaches this pool. */
  void shutdownSubpools() {
    for (Subpool s : subpools()) {
      s.shutdown();
    }
  }

  /** Part of shutdownNow: each subpool hands back its own work first. */
  List<Runnable> shutdownNowSubpools() {
    List<Runnable> tasks = new ArrayList<>();
    for (Subpool s : subpools()) {
      tasks.addAll(s.shutdownNow());
    }
    return tasks;
  }

  /** A subpool terminated: it no longer holds this pool open. */
  void subpoolTerminated(Subpool s) {
    synchronized (subpools) {
      if (s.isTerminated()) { // not if a reboot reopened it since: it holds this pool open again
        subpools.remove(s);
      }
    }
    tryTerminate();
  }

  /**
   * Hands a due delayed task to a worker. It is admitted work: it waits its turn and is never
   * rejected for load; only a pool that terminated meanwhile refuses it (shutdown cancelled it).
   */
  private final Consumer<DelayedTask<?>> runWhenDue = task -> {
    try {
      dispatch(TaskKind.RUNNABLE, task, Mode.ADMITTED);
    } catch (RejectedExecutionException terminated) {
      task.cancel(false);
    }
  };

  static <T> T requireTask(T task) {
    return Objects.requireNonNull(task, "task must not be null");
  }

  @Override
  public void execute(Runnable task) {
    dispatch(TaskKind.RUNNABLE, requireTask(task), Mode.EXECUTE);
  }

  @Override
  public boolean tryExecute(Runnable task) {
    return dispatch(TaskKind.RUNNABLE, requireTask(task), Mode.TRY);
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
    return dispatchTimed(TaskKind.RUNNABLE, task, nanos);
  }

  @Override
  public TaskHandle enqueue(Runnable task) {
    return enqueue(TaskKind.RUNNABLE, requireTask(task), Mode.ENQUEUE);
  }

  @Override
  public Future<?> submit(Runnable task) {
    return enqueueFuture(new PoolFuture<Void>(Executors.callable(requireTask(task), null)));
  }

  @Override
  public <T> Future<T> submit(Runnable task, T result) {
    return enqueueFuture(new PoolFuture<>(Executors.callable(requireTask(task), result)));
  }

  @Override
  public <T> Future<T> submit(Callable<T> task) {
    return enqueueFuture(new PoolFuture<>(requireTask(task)));
  }

  /** Never blocks: the future's task waits in line like {@link #enqueue}'s; cancelling withdraws it. */
  private <T> Future<T> enqueueFuture(PoolFuture<T> future) {
    future.handle = enqueue(TaskKind.RUNNABLE, future, Mode.ENQUEUE);
    if (future.isCancelled()) {
      future.handle.cancel(); // cancelled before the handle was known
    }
    return future;
  }

  /** A future whose cancellation also withdraws its task from the pool (remove on cancel). */
  private static final class PoolFuture<T> extends FutureTask<T> {
    volatile TaskHandle handle;

    PoolFuture(Callable<T> callable) {
      super(callable);
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      boolean cancelled = super.cancel(mayInterruptIfRunning);
      TaskHandle h = handle;
      if (cancelled && h != null) {
        h.cancel();
      }
      return cancelled;
    }
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
    long signedPeriod = DelayedTask.checkPeriodic(task, period, unit, what, sign);
    checkOpen();
    return new DelayedTask<Void>(task, signedPeriod, runWhenDue, delayed, null)
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
