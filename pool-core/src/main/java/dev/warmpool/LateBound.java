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

  /** Stores {@code h} if the bound handle is still {@code expected} (a CAS). */
  boolean replaceLateHandle(TaskHandle expected, TaskHandle h);

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
   * {@link #bindLate} for a first hand-off that may be bound after a later one (a periodic timer due
   * at once is handed on by the scheduling thread, its later periods by the timer thread, and the
   * second period can be handed on and bound while the first's thread has not yet bound its
   * handle): binds {@code h} only if nothing is bound yet. If something is, it is a later
   * hand-off's, this one has run already (the next is handed on only after it ran), and binding
   * it would hide the later one from a cancel (review r10, F3).
   *
   * @return whether this call withdrew the task
   */
  default boolean bindLateFirst(TaskHandle h) {
    return replaceLateHandle(null, h) && lateCancelled() && h.cancel();
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
