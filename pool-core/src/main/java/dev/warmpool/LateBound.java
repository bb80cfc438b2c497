package dev.warmpool;

/**
 * The one place of the late-bound-handle rule: a task is handed on and its handle is known only
 * after the hand-off, while its owner may be cancelled before or after. Each side publishes, then
 * checks the other: {@link #bindLate} stores the handle, then reads whether the owner is cancelled;
 * the owner's cancel marks it cancelled, then calls {@link #withdrawLate}, which reads the handle.
 * So whichever comes second withdraws the task, and a cancel is never lost between the two. A
 * handle may be bound again (a periodic task's next run); a cancelled owner stays cancelled.
 */
interface LateBound {
  /** The handle bound last, or null (a volatile read). */
  TaskHandle lateHandle();

  /** Stores the handle (a volatile write). */
  void storeLateHandle(TaskHandle h);

  /** Whether the owner was cancelled (a volatile read; once true, stays true). */
  boolean lateCancelled();

  /**
   * Binds the handle of the latest hand-off; withdraws it at once if a cancel came first.
   *
   * @return whether this call withdrew the task (a cancel came first and the task had not started)
   */
  default boolean bindLate(TaskHandle h) {
    storeLateHandle(h);
    return lateCancelled() && h.cancel();
  }

  /**
   * Called by the owner's cancel after it marked itself cancelled: withdraws the bound task, if
   * any.
   *
   * @return whether this call withdrew a bound task (false if none was bound yet: {@link #bindLate}
   *     withdraws it then)
   */
  default boolean withdrawLate() {
    TaskHandle h = lateHandle();
    return h != null && h.cancel();
  }
}
