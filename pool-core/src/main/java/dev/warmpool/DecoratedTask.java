package dev.warmpool;

import java.util.concurrent.Callable;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.UnaryOperator;

/**
 * A task as submitted and as the pool's task decorator made it ({@link
 * WorkerPool.Builder#taskDecorator}): it runs the decorated form and is handed back by
 * {@code shutdownNow()} as the original. It passes on what the original wants to hear: a failure
 * (if the original is a {@link FailureAware}) and a timer's cancellation (a
 * {@link CancellationAware}).
 *
 * <p>While the pool (or an ancestor) has a {@link WorkerPool.TaskTimer}, every task is made one of
 * these at its door, decorated or not: it is stamped as accepted there, on the submitting thread,
 * and its run tells the pool how long it waited (run queue and line) and ran. The stamp rides in
 * this object because a plain task travels as itself and has no other place for it.
 */
final class DecoratedTask implements FailureAware, CancellationAware {
  final Runnable original;
  private final Runnable decorated;
  /** The pool whose timers hear of the run, or null: untimed. */
  private final AbstractWorkerPool timedBy;
  /** When it was accepted (System.nanoTime), for a timed task. */
  private final long acceptedAt;

  private DecoratedTask(Runnable original, Runnable decorated, AbstractWorkerPool timedBy) {
    this.original = original;
    this.decorated = decorated;
    this.timedBy = timedBy;
    this.acceptedAt = timedBy == null ? 0L : System.nanoTime();
  }

  /**
   * Applies {@code decorator} (if any) to {@code task}, on the submitting thread. A decorator that
   * throws or returns null rejects the task at its call; it was not accepted.
   */
  static Runnable decorate(UnaryOperator<Runnable> decorator, Runnable task, String pool) {
    return decorate(decorator, task, pool, null);
  }

  /**
   * Like {@link #decorate(UnaryOperator, Runnable, String)}; with {@code timedBy}, the task is also
   * stamped as accepted now and its run is timed for that pool's task timers.
   */
  static Runnable decorate(UnaryOperator<Runnable> decorator, Runnable task, String pool,
      AbstractWorkerPool timedBy) {
    if (decorator == null) {
      return timedBy == null ? task : new DecoratedTask(task, task, timedBy);
    }
    Runnable made;
    try {
      made = decorator.apply(task);
    } catch (RuntimeException | Error e) {
      throw new RejectedExecutionException("the task decorator of " + pool + " threw; the task was"
          + " not accepted", e);
    }
    if (made == null) {
      throw new RejectedExecutionException("the task decorator of " + pool + " returned null; the"
          + " task was not accepted");
    }
    return made == task && timedBy == null ? task : new DecoratedTask(task, made, timedBy);
  }

  /** A callable's decorated form: the decorator wraps the call, which keeps its result. */
  static <V> Callable<V> decorate(UnaryOperator<Runnable> decorator, Callable<V> task,
      String pool) {
    if (decorator == null) {
      return task;
    }
    CallOnce<V> call = new CallOnce<>(task);
    call.run = decorate(decorator, call::invoke, pool);
    return call;
  }

  /** What {@code shutdownNow()} hands back for a queued argument: the task as submitted. */
  static Runnable original(Runnable task) {
    if (task instanceof SerialLane.LaneTask l) {
      task = l.task(); // a lane's enqueued task, in its handle
    }
    return task instanceof DecoratedTask d ? d.original : task;
  }

  @Override
  public void run() {
    AbstractWorkerPool pool = timedBy;
    if (pool == null) {
      decorated.run();
      return;
    }
    long start = System.nanoTime();
    try {
      decorated.run();
    } finally { // a task that throws is timed too, as Micrometer's TimedRunnable does
      pool.taskRan(start - acceptedAt, System.nanoTime() - start);
    }
  }

  @Override
  public void onFailure(Throwable failure) {
    if (original instanceof FailureAware f) {
      f.onFailure(failure);
    } else {
      Thread self = Thread.currentThread();
      self.getUncaughtExceptionHandler().uncaughtException(self, failure);
    }
  }

  @Override
  public void onCancel() {
    if (original instanceof CancellationAware c) {
      c.onCancel();
    }
  }

  @Override
  public void onExpired(PoolOverloadedException cause) {
    if (original instanceof CancellationAware c) {
      c.onExpired(cause);
    }
  }

  /** A callable run through a decorated runnable; one call at a time, as a future makes it. */
  private static final class CallOnce<V> implements Callable<V> {
    private final Callable<V> task;
    Runnable run;
    private V result;
    private Exception failure;

    CallOnce(Callable<V> task) {
      this.task = task;
    }

    private void invoke() {
      try {
        result = task.call();
      } catch (Exception e) {
        failure = e;
      }
    }

    @Override
    public V call() throws Exception {
      run.run();
      Exception e = failure;
      V r = result;
      failure = null;
      result = null;
      if (e != null) {
        throw e;
      }
      return r;
    }
  }
}
