package dev.warmpool.reactor;

/**
 * The group a {@link PoolTask} belongs to and leaves exactly once: its scheduler's root
 * ({@link TaskGroup}) for a direct task, or its {@link PoolWorker}, which is its own group (no
 * separate object: idle workers may be many, issue 33).
 */
interface TaskOwner {
  /** Whether a task that has not started must never start: its worker or scheduler was disposed. */
  boolean stopsTasks();

  /** The task ended (ran its last run, or was cancelled while not running); once per task. */
  void ended(PoolTask t);
}
