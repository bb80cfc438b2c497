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
 */
final class DecoratedTask implements FailureAware, CancellationAware {
  final Runnable original;
  private final Runnable decorated;

  private DecoratedTask(Runnable original, Runnable decorated) {
    this.original = original;
    this.decorated = decorated;
  }

  /**
   * Applies {@code decorator} (if any) to {@code task}, on the submitting thread. A decorator that
   * throws or returns null rejects the task at its call; it was not accepted.
   */
  static Runnable decorate(UnaryOperator<Runnable> decorator, Runnable task, String pool) {
    if (decorator == null) {
      return task;
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
    return made == task ? task : new DecoratedTask(task, made);
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
    decorated.run();
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
