package dev.warmpool;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * One function bound to a {@link WorkerPool} (ants' {@code PoolWithFunc}): {@link #invoke} hands only
 * the argument to a worker, so a call allocates nothing for the hand-off. Admission, waiting and
 * rejection are exactly those of the pool's {@code execute}; an exception thrown by the function goes
 * to the pool's failure handler. Several function pools may share one pool.
 *
 * @param <T> the argument type
 */
public final class FuncPool<T> {
  private final AbstractWorkerPool pool;
  private final TaskKind kind;

  private FuncPool(AbstractWorkerPool pool, Consumer<Object> function) {
    this.pool = pool;
    this.kind = TaskKind.of(function);
  }

  /**
   * Binds {@code function} to {@code pool}.
   *
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the pool was not built by warmpool
   */
  @SuppressWarnings("unchecked")
  public static <T> FuncPool<T> of(WorkerPool pool, Consumer<? super T> function) {
    Objects.requireNonNull(pool, "pool must not be null");
    Objects.requireNonNull(function, "function must not be null");
    if (!(pool instanceof AbstractWorkerPool)) {
      throw new IllegalArgumentException("pool must be built by warmpool, was " + pool.getClass());
    }
    return new FuncPool<>((AbstractWorkerPool) pool, (Consumer<Object>) function);
  }

  /**
   * Runs the function with {@code arg} on a worker, as {@link WorkerPool#execute} would run a task.
   *
   * @throws NullPointerException if {@code arg} is null
   * @throws PoolOverloadedException if nonblocking and full, or the waiting line is full
   * @throws PoolClosedException if the pool is shut down
   */
  public void invoke(T arg) {
    pool.dispatch(kind, Objects.requireNonNull(arg, "arg must not be null"), Mode.EXECUTE);
  }

  /**
   * Runs the function with {@code arg} if a worker can take it now.
   *
   * @return false if every seat is taken (the argument is not accepted)
   * @throws NullPointerException if {@code arg} is null
   * @throws PoolClosedException if the pool is shut down
   */
  public boolean tryInvoke(T arg) {
    return pool.dispatch(kind, Objects.requireNonNull(arg, "arg must not be null"), Mode.TRY);
  }

  /** The pool the function runs on. */
  public WorkerPool pool() {
    return pool;
  }
}
