package dev.warmpool;

/**
 * A handle on one accepted task, returned by {@link WorkerPool#enqueue(Runnable)}.
 *
 * <p>{@link #cancel()} withdraws the task if it has not started: a task waiting in line leaves it at
 * once (O(1)), frees its place under {@code maxWaiting}, and no longer counts in
 * {@link PoolStats#waiting()} or {@link PoolStats#submitted()}; a task that already holds a seat
 * gives it back when a worker reaches it, without running. A task that started, finished, or was
 * handed back by {@link WorkerPool#shutdownNow()} can no longer be withdrawn.
 */
public interface TaskHandle {

  /**
   * Withdraws the task if it has not started.
   *
   * @return {@code true} if this call withdrew the task (it will never run); {@code false} if it
   *     started already, was withdrawn before, or was handed back by {@code shutdownNow()}
   */
  boolean cancel();

  /** Whether the task was withdrawn by {@link #cancel()}. */
  boolean isCancelled();
}
