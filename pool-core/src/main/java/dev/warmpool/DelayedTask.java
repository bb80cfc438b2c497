package dev.warmpool;

import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RunnableScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A delayed or periodic task: a future that waits on the {@link SharedTimer} and, when due, is handed
 * to its pool or lane by {@code onDue} (as admitted work, never rejected for being full). A periodic
 * task is re-armed only after its run returned, so it never overlaps itself; a run that throws
 * completes the future exceptionally and stops it. Cancelling removes it from the timer at once.
 */
final class DelayedTask<V> extends FutureTask<V> implements RunnableScheduledFuture<V> {
  private final Entry entry = new Entry();
  /** 0: one-shot; > 0: fixed rate; < 0: fixed delay of {@code -period}. */
  private final long period;
  private final Consumer<DelayedTask<?>> onDue;
  /** The pool's set of pending delayed tasks (cancelled by shutdown); left when done. */
  private final Set<DelayedTask<?>> registry;
  /** A lane's set of pending delayed tasks (cancelled by closing the lane), or null. */
  private final Set<DelayedTask<?>> laneRegistry;
  /** The exception of the current run, rethrown so that the pool counts and reports it. */
  private Throwable failure;
  /** The task itself, if it wants to hear of a cancellation; else null. */
  private CancellationAware listener;

  private final class Entry extends SharedTimer.Task {
    @Override
    void fire() {
      if (!isDone()) {
        onDue.accept(DelayedTask.this);
      }
    }
  }

  DelayedTask(Callable<V> callable, long period, Consumer<DelayedTask<?>> onDue,
      Set<DelayedTask<?>> registry, Set<DelayedTask<?>> laneRegistry) {
    super(callable);
    this.period = period;
    this.onDue = onDue;
    this.registry = registry;
    this.laneRegistry = laneRegistry;
  }

  DelayedTask(Runnable runnable, long period, Consumer<DelayedTask<?>> onDue,
      Set<DelayedTask<?>> registry, Set<DelayedTask<?>> laneRegistry) {
    this(java.util.concurrent.Executors.callable(runnable, (V) null), period, onDue, registry,
        laneRegistry);
    this.listener = runnable instanceof CancellationAware ? (CancellationAware) runnable : null;
  }

  /** Registers the task and puts it on the timer; {@code delayNanos <= 0} means due now. */
  DelayedTask<V> start(long delayNanos) {
    registry.add(this);
    if (laneRegistry != null) {
      laneRegistry.add(this);
    }
    arm(System.nanoTime() + clamp(delayNanos));
    return this;
  }

  /**
   * Checks the arguments of a periodic schedule and returns its period in nanoseconds, positive for
   * a fixed rate ({@code sign} 1) and negative for a fixed delay ({@code sign} -1).
   */
  static long checkPeriodic(Runnable task, long period, TimeUnit unit, String what, int sign) {
    AbstractWorkerPool.requireTask(task);
    java.util.Objects.requireNonNull(unit, "unit must not be null");
    if (period <= 0) {
      throw new IllegalArgumentException(what + " must be > 0, was " + period);
    }
    return sign * Math.max(1, clamp(unit.toNanos(period)));
  }

  static long clamp(long delayNanos) {
    return Math.max(0, Math.min(delayNanos, Long.MAX_VALUE >> 2));
  }

  private void arm(long deadline) {
    SharedTimer.INSTANCE.schedule(entry, deadline);
    if (isDone()) {
      SharedTimer.INSTANCE.cancel(entry); // cancelled while re-arming
    }
  }

  /**
   * Runs once (or one period). A run that throws completes the future exceptionally, as
   * {@code ScheduledExecutorService} requires, and the exception is then rethrown so that the pool
   * counts it as failed and passes it to its failure handler.
   */
  @Override
  public void run() {
    if (period == 0) {
      super.run();
      forget();
    } else if (runAndReset()) {
      arm(period > 0 ? entry.deadline + period : System.nanoTime() - period);
    } else {
      forget();
    }
    Throwable t = failure;
    if (t != null) {
      failure = null;
      throw DelayedTask.<RuntimeException>sneaky(t);
    }
  }

  @Override
  protected void setException(Throwable t) {
    failure = t;
    super.setException(t);
  }

  @SuppressWarnings("unchecked")
  private static <E extends Throwable> E sneaky(Throwable t) throws E {
    throw (E) t;
  }

  private void forget() {
    registry.remove(this);
    if (laneRegistry != null) {
      laneRegistry.remove(this);
    }
  }

  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    boolean cancelled = super.cancel(mayInterruptIfRunning);
    SharedTimer.INSTANCE.cancel(entry);
    forget();
    CancellationAware l = listener;
    if (cancelled && l != null) {
      if (SharedTimer.isTimerThread()) {
        ThreadStarter.ASYNC.execute(() -> tell(l)); // no user code on the timer thread
      } else {
        tell(l);
      }
    }
    return cancelled;
  }

  private static void tell(CancellationAware l) {
    try {
      l.onCancel();
    } catch (Throwable t) {
      Thread self = Thread.currentThread();
      self.getUncaughtExceptionHandler().uncaughtException(self, t);
    }
  }

  @Override
  public boolean isPeriodic() {
    return period != 0;
  }

  @Override
  public long getDelay(TimeUnit unit) {
    return unit.convert(entry.deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
  }

  @Override
  public int compareTo(Delayed other) {
    if (other == this) {
      return 0;
    }
    return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
  }
}
