package dev.warmpool;

/**
 * A handle on one accepted task, returned by {@link WorkerPool#enqueue(Runnable)}: it withdraws the
 * task if it has not started, and says how the task ended.
 *
 * <p>{@link #cancel()} withdraws the task if it has not started: a task waiting in line leaves it at
 * once (O(1)), frees its place under {@code maxWaiting}, and no longer counts in
 * {@link PoolStats#waiting()} or {@link PoolStats#submitted()}; a task that already holds a seat
 * gives it back when a worker reaches it, without running. A task that started, finished, expired
 * or was handed back by {@link WorkerPool#shutdownNow()} can no longer be withdrawn.
 *
 * <p>A task ends in exactly one way: it ran ({@link #isDone()} only), it was withdrawn
 * ({@link #isCancelled()}), it waited in line past its deadline ({@link #isExpired()}), or
 * {@code shutdownNow()} handed it back ({@link #isDone()} only).
 */
public interface TaskHandle {

  /**
   * Withdraws the task if it has not started; the same as {@code cancel(false)}.
   *
   * @return {@code true} if this call withdrew the task (it will never run); {@code false} if it
   *     started already, was withdrawn before, expired, or was handed back by {@code shutdownNow()}
   */
  default boolean cancel() {
    return cancel(false);
  }

  /**
   * Withdraws the task if it has not started; if it is running and {@code mayInterruptIfRunning},
   * interrupts its thread. The interrupt reaches only this task: if the task ends first, nobody is
   * interrupted, and a later task on the same worker never sees it.
   *
   * @return {@code true} if this call withdrew the task before it started (it will never run);
   *     {@code false} otherwise, also when it interrupted the running task (which then ends as it
   *     will, and counts as completed or failed)
   */
  boolean cancel(boolean mayInterruptIfRunning);

  /** Whether the task was withdrawn by {@link #cancel()}. */
  boolean isCancelled();

  /** Whether the task left the waiting line unrun because it waited past its line deadline. */
  boolean isExpired();

  /**
   * Whether the task's way through the pool has ended: it ran (returned or threw), was withdrawn,
   * expired, or was handed back by {@code shutdownNow()}.
   */
  boolean isDone();
}
