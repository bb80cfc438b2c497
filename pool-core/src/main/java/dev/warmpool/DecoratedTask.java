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
 * <p><b>Decorated once</b> (guarantee 15). This is the one point where a task is decorated, and the
 * one point that recognises a re-arm: a task handed to a door again from its own run (an adapter's
 * periodic task arming its next run, or re-armed after a failed run; a task that re-submits itself)
 * gets the decoration of its first submission back, and the decorator is not called on the pool
 * thread. A decoration made there would capture what the run left in the thread's context, not the
 * user's. So adapters need no door of their own: they hand the task they were given to core.
 *
 * <p>While the pool (or an ancestor) has a {@link WorkerPool.TaskTimer}, every task is made one of
 * these at its door, decorated or not: it is stamped as accepted there, on the submitting thread,
 * and its run tells the pool how long it waited (run queue and line) and ran. The stamp rides in
 * this object because a plain task travels as itself and has no other place for it.
 */
final class DecoratedTask implements FailureAware, CancellationAware {
  /**
   * The decorated task whose run is in progress on this thread, innermost first; null outside a
   * run. Set only for a pool with a decorator, so an undecorated pool pays nothing.
   */
  private static final ThreadLocal<DecoratedTask> RUNNING = new ThreadLocal<>();

  final Runnable original;
  private final Runnable decorated;
  /** The decorator that made it, or null: only a door with the same one may take it back for a re-arm. */
  private final UnaryOperator<Runnable> decorator;
  /** The pool whose timers hear of the run, or null: untimed. */
  private final AbstractWorkerPool timedBy;
  /** When it was accepted (System.nanoTime), for a timed task. */
  private final long acceptedAt;

  private DecoratedTask(Runnable original, Runnable decorated, UnaryOperator<Runnable> decorator,
      AbstractWorkerPool timedBy) {
    this.original = original;
    this.decorated = decorated;
    this.decorator = decorator;
    this.timedBy = timedBy;
    this.acceptedAt = timedBy == null ? 0L : System.nanoTime();
  }

  /**
   * Applies {@code decorator} (if any) to {@code task}, on the submitting thread; or, if this thread
   * is running {@code task}'s decorated form from the same decorator (a re-arm from its own run),
   * returns that form without calling the decorator. A decorator that throws or returns null
   * rejects the task at its call; it was not accepted.
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
      return timedBy == null ? task : new DecoratedTask(task, task, null, timedBy);
    }
    DecoratedTask running = RUNNING.get();
    if (running != null && running.original == task && running.decorator == decorator) {
      return running; // a re-arm: decorated once, at the user's call
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
    // Wrapped even if the decorator returned the task itself: a re-arm must find its run.
    return new DecoratedTask(task, made, decorator, timedBy);
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

  /** Runs the decorated form, marked as this thread's run in progress for a re-arm to find. */
  @Override
  public void run() {
    AbstractWorkerPool pool = timedBy;
    long start = pool == null ? 0L : System.nanoTime();
    // Only a decorated task marks its run (an undecorated pool pays nothing for re-arms); a task may
    // run another inline (a caller-runs policy), hence the outer one restored.
    DecoratedTask outer = decorator == null ? null : RUNNING.get();
    if (decorator != null) {
      RUNNING.set(this);
    }
    try {
      decorated.run();
    } finally {
      if (decorator != null) {
        RUNNING.set(outer);
      }
      if (pool != null) { // a task that throws is timed too, as Micrometer's TimedRunnable does
        pool.taskRan(start - acceptedAt, System.nanoTime() - start);
      }
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
