package dev.warmpool;

import java.time.Duration;
import java.util.Collection;
import java.util.Objects;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;

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

  /**
   * Like {@link #dispatch} in {@link Mode#ENQUEUE} or {@link Mode#ADMITTED}, with a handle; a task
   * that waits in line may wait {@code maxWaitNanos} (0: the pool's {@code maxWaitInLine}).
   */
  abstract TaskHandle enqueue(TaskKind kind, Object arg, Mode mode, long maxWaitNanos);

  final TaskHandle enqueue(TaskKind kind, Object arg, Mode mode) {
    return enqueue(kind, arg, mode, 0L);
  }

  /** Like {@link #dispatch} in blocking mode, giving up after {@code nanos}. */
  abstract boolean dispatchTimed(TaskKind kind, Object arg, long nanos) throws InterruptedException;

  /** Delayed and periodic tasks not yet done, lanes' included; those not yet due end at shutdown. */
  final Timers timers = new Timers();
  /** The builder's task decorator (a subpool's parent's), or null. */
  final UnaryOperator<Runnable> decorator;

  AbstractWorkerPool(UnaryOperator<Runnable> decorator) {
    this.decorator = decorator;
  }

  /**
   * The task timer set by {@link #setTaskTimer}, or null. Read once per submission (the one cost
   * when none is set) and once per timed run.
   */
  private volatile TaskTimer taskTimer;

  /** The task as the decorator makes it, on the submitting thread; see {@link DecoratedTask}. */
  final Runnable decorate(Runnable task) {
    return decorate(task, timed());
  }

  /**
   * The task as the decorator makes it; {@code timed}: also stamped now, as accepted, for the task
   * timers (a timer's task is not: its run is timed by its {@link DelayedTask}, from when it is due).
   */
  final Runnable decorate(Runnable task, boolean timed) {
    return decorator == null && !timed ? task
        : DecoratedTask.decorate(decorator, task, "pool '" + name() + "'", timed ? this : null);
  }

  @Override
  public final void setTaskTimer(TaskTimer timer) {
    this.taskTimer = timer;
  }

  @Override
  public final TaskTimer taskTimer() {
    return taskTimer;
  }

  /** The pool whose timer also times this pool's tasks (a subpool's parent), or null. */
  AbstractWorkerPool timingParent() {
    return null;
  }

  /** Whether this pool or an ancestor has a task timer. */
  final boolean timed() {
    for (AbstractWorkerPool p = this; p != null; p = p.timingParent()) {
      if (p.taskTimer != null) {
        return true;
      }
    }
    return false;
  }

  /**
   * One task of this pool ran: tells this pool's timer and its ancestors' (a subpool's task counts
   * in its parent too, as its counters do). A timer that throws is not the task's failure: it goes
   * to the thread's uncaught-exception handler and the others still hear.
   */
  final void taskRan(long waitNanos, long runNanos) {
    for (AbstractWorkerPool p = this; p != null; p = p.timingParent()) {
      TaskTimer t = p.taskTimer;
      if (t != null) {
        try {
          t.taskRan(waitNanos, runNanos);
        } catch (Throwable e) {
          Thread self = Thread.currentThread();
          self.getUncaughtExceptionHandler().uncaughtException(self, e);
        }
      }
    }
  }

  /**
   * Hands a due delayed task to a worker. It is admitted work: it waits its turn and is never
   * rejected for load; only a pool that terminated meanwhile refuses it (then it is cancelled).
   */
  private final DelayedTask.Owner runWhenDue =
      task -> enqueue(TaskKind.RUNNABLE, task, Mode.ADMITTED);

  static <T> T requireTask(T task) {
    return Objects.requireNonNull(task, "task must not be null");
  }

  @Override
  public void execute(Runnable task) {
    dispatch(TaskKind.RUNNABLE, decorate(requireTask(task)), Mode.EXECUTE);
  }

  @Override
  public boolean tryExecute(Runnable task) {
    return dispatch(TaskKind.RUNNABLE, decorate(requireTask(task)), Mode.TRY);
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
    return dispatchTimed(TaskKind.RUNNABLE, decorate(task), nanos);
  }

  @Override
  public TaskHandle enqueue(Runnable task) {
    return enqueue(TaskKind.RUNNABLE, decorate(requireTask(task)), Mode.ENQUEUE);
  }

  @Override
  public TaskHandle enqueue(Runnable task, Duration maxWait) {
    requireTask(task);
    Objects.requireNonNull(maxWait, "maxWait must not be null");
    if (maxWait.isNegative() || maxWait.isZero()) {
      throw new IllegalArgumentException("maxWait must be > 0, was " + maxWait);
    }
    long nanos;
    try {
      nanos = maxWait.toNanos();
    } catch (ArithmeticException tooLong) {
      nanos = Long.MAX_VALUE / 4;
    }
    return enqueue(TaskKind.RUNNABLE, decorate(task), Mode.ENQUEUE, nanos);
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
    future.place.bind(enqueue(TaskKind.RUNNABLE, decorate(future), Mode.ENQUEUE));
    return future;
  }

  /**
   * The futures of {@code invokeAll} and {@code invokeAny} (AbstractExecutorService makes them here):
   * a task that waits for them publishes what its worker holds first, as for {@code submit}.
   */
  @Override
  protected <T> RunnableFuture<T> newTaskFor(Callable<T> callable) {
    return new PublishingFuture<>(callable);
  }

  @Override
  protected <T> RunnableFuture<T> newTaskFor(Runnable runnable, T value) {
    return new PublishingFuture<>(Executors.callable(runnable, value));
  }

  /**
   * From a task of a pool, nothing that {@code invokeAny} queues is held: it waits for them at once,
   * on a completion queue that no hook of ours sees (and it publishes what the task held before).
   */
  @Override
  public <T> T invokeAny(Collection<? extends Callable<T>> tasks)
      throws InterruptedException, ExecutionException {
    Worker me = Engine.stopHolding();
    try {
      return super.invokeAny(tasks);
    } finally {
      Engine.resumeHolding(me);
    }
  }

  @Override
  public <T> T invokeAny(Collection<? extends Callable<T>> tasks, long timeout, TimeUnit unit)
      throws InterruptedException, ExecutionException, TimeoutException {
    Worker me = Engine.stopHolding();
    try {
      return super.invokeAny(tasks, timeout, unit);
    } finally {
      Engine.resumeHolding(me);
    }
  }

  /**
   * The future of {@code submit}, {@code invokeAll} and {@code invokeAny}. Its task's exception is
   * reported through the future (its {@code get} throws), as with {@code ThreadPoolExecutor}, not to
   * the thread's uncaught-exception handler; it still counts as failed, not completed, counted before
   * the future publishes it (guarantee 8). A {@code get} by a task of a pool, waiting for work it
   * queued there, publishes what the task's worker holds first (Engine, "Held tasks"), rather than
   * waiting for the hold watch.
   */
  static class PublishingFuture<T> extends FutureTask<T> {
    /**
     * Whether {@code run} invoked the task: {@code FutureTask} calls {@code set} or
     * {@code setException} after the task, and only then. Read and written by the running thread.
     */
    private boolean invoked;

    PublishingFuture(Callable<T> callable) {
      super(callable);
    }

    @Override
    protected void set(T v) {
      invoked = true;
      super.set(v);
    }

    /** Called by FutureTask.run with the task's exception, on the worker that runs it. */
    @Override
    protected void setException(Throwable t) {
      invoked = true;
      if (!isDone()) { // a cancel that came first keeps the future cancelled: nothing failed
        Accounting.futureFailed(t);
      }
      super.setException(t);
    }

    /**
     * A cancel that won before the task started ({@code submit}'s handle as a worker took it, too
     * late to withdraw it from the line; {@code invokeAll}'s timeout, {@code invokeAny}'s first
     * result) leaves {@code FutureTask.run} nothing to do: the task was withdrawn by its handle,
     * and is counted so, not as a run (guarantee 13).
     */
    @Override
    public void run() {
      super.run();
      if (!invoked) {
        Accounting.futureNotRun();
      }
    }

    /** Fails the future without a run (its task expired in line): counted as expired, not failed. */
    final void failUnrun(Throwable cause) {
      super.setException(cause);
    }

    @Override
    public T get() throws InterruptedException, ExecutionException {
      if (!isDone()) {
        Engine.beforeBlocking();
      }
      return super.get();
    }

    @Override
    public T get(long timeout, TimeUnit unit)
        throws InterruptedException, ExecutionException, TimeoutException {
      if (!isDone()) {
        Engine.beforeBlocking();
      }
      return super.get(timeout, unit);
    }
  }

  /** A future whose cancellation also withdraws its task from the pool (remove on cancel). */
  private static final class PoolFuture<T> extends PublishingFuture<T>
      implements TaskKind.Expirable {
    /** Its place in the pool, known only after the hand-off, while a cancel may come first. */
    final LateHandle place = new LateHandle();

    PoolFuture(Callable<T> callable) {
      super(callable);
    }

    /** Its task waited in line past its deadline: the future fails with the cause. */
    @Override
    public void expired(PoolOverloadedException cause) {
      failUnrun(cause);
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      boolean cancelled = super.cancel(mayInterruptIfRunning);
      if (cancelled) {
        place.cancel();
      }
      return cancelled;
    }
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
    requireTask(task);
    Objects.requireNonNull(unit, "unit must not be null");
    return startTimer(new DelayedTask<Void>(decorate(task, false), runWhenDue, this),
        unit.toNanos(delay));
  }

  @Override
  public <V> ScheduledFuture<V> schedule(Callable<V> task, long delay, TimeUnit unit) {
    requireTask(task);
    Objects.requireNonNull(unit, "unit must not be null");
    Callable<V> call = decorator == null ? task
        : DecoratedTask.decorate(decorator, task, "pool '" + name() + "'");
    return startTimer(new DelayedTask.OfCallable<>(call, runWhenDue, this), unit.toNanos(delay));
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
    return startTimer(
        new DelayedTask.Periodic(decorate(task, false), signedPeriod, runWhenDue, this),
        unit.toNanos(initialDelay));
  }

  /** Starts a timer of this pool, or refuses it if the pool is shut down (also if that raced us). */
  private <V> DelayedTask<V> startTimer(DelayedTask<V> task, long delayNanos) {
    checkOpen();
    DelayedTask<V> started = task.start(delayNanos);
    if (started == null) {
      throw closed();
    }
    return started;
  }

  /** Throws {@link PoolClosedException} if the pool is shut down. */
  abstract void checkOpen();

  /** Counts a rejection of a shut-down pool and returns its exception, to throw. */
  abstract PoolClosedException closed();

  /** Delayed tasks pending; for tests. */
  int delayedCount() {
    return timers.size();
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
