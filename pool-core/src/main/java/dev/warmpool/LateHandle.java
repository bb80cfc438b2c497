package dev.warmpool;

/**
 * The one place of the late-bound-handle rule: a task is handed on (to a pool's line, a parent pool,
 * a lane) and its {@link TaskHandle} becomes known only after the hand-off, while its owner may be
 * cancelled at any moment, before or after. Each side publishes, then checks the other: {@link #bind}
 * stores the handle, then reads the cancel flag; {@link #cancel} sets the flag, then reads the
 * handle. So whichever comes second withdraws the task, and a cancel is never lost between the two.
 * A handle may be bound again (a periodic task's next run); the cancel flag stays.
 */
final class LateHandle {
  private volatile TaskHandle handle;
  private volatile boolean cancelled;

  /**
   * Binds the handle of the latest hand-off; withdraws it at once if a cancel came first.
   *
   * @return whether this call withdrew the task (a cancel came first and the task had not started)
   */
  boolean bind(TaskHandle h) {
    handle = h;
    return cancelled && h.cancel();
  }

  /**
   * Marks the owner cancelled and withdraws the bound task, if any.
   *
   * @return whether this call withdrew a bound task (false if none was bound yet: {@link #bind}
   *     withdraws it then)
   */
  boolean cancel() {
    cancelled = true;
    TaskHandle h = handle;
    return h != null && h.cancel();
  }
}
