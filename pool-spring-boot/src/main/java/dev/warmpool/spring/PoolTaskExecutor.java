package dev.warmpool.spring;

import dev.warmpool.WorkerPool;
import java.util.concurrent.Callable;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import org.springframework.core.task.AsyncTaskExecutor;
import org.springframework.core.task.TaskRejectedException;

/**
 * Spring's {@link AsyncTaskExecutor} on a pool, for {@code warmpool.spring.task-executor}: the
 * {@code applicationTaskExecutor} bean, so {@code @Async}, MVC async requests and everything else
 * that uses it run within the pool's capacity.
 *
 * <p>No call blocks its caller, as with Boot's own {@code ThreadPoolTaskExecutor}: {@code execute}
 * is the pool's {@code enqueue} and {@code submit} the pool's {@code submit}, so in blocking mode a
 * task waits in the pool's line without a thread. A task the pool refuses (nonblocking and full,
 * line full, shut down) is Spring's {@link TaskRejectedException}, caused by the pool's
 * {@code PoolOverloadedException} or {@code PoolClosedException}, at the call. The pool decorates
 * the tasks (the context's {@code TaskDecorator} beans), once; this adds nothing to them and does not
 * own the pool, which closes as the pool bean it is.
 */
final class PoolTaskExecutor implements AsyncTaskExecutor {
  private final WorkerPool pool;

  PoolTaskExecutor(WorkerPool pool) {
    this.pool = pool;
  }

  @Override
  public void execute(Runnable task) {
    try {
      pool.enqueue(task);
    } catch (RejectedExecutionException e) {
      throw rejected(e);
    }
  }

  @Override
  public Future<?> submit(Runnable task) {
    try {
      return pool.submit(task);
    } catch (RejectedExecutionException e) {
      throw rejected(e);
    }
  }

  @Override
  public <T> Future<T> submit(Callable<T> task) {
    try {
      return pool.submit(task);
    } catch (RejectedExecutionException e) {
      throw rejected(e);
    }
  }

  private TaskRejectedException rejected(RejectedExecutionException e) {
    return new TaskRejectedException("Pool '" + pool.name() + "' did not accept the task: "
        + e.getMessage(), e);
  }

  @Override
  public String toString() {
    return "PoolTaskExecutor(" + pool + ")";
  }
}
