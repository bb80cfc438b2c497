package dev.warmpool;

import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;

/**
 * The late-bound-handle rule, for an owner that keeps its handle in an object of its own (a
 * {@code submit} future, a subpool's seat). A task is handed on (to a pool's line, a parent pool, a lane)
 * and its {@link TaskHandle} becomes known only after the hand-off, while its owner may be
 * cancelled at any moment, before or after. The rule itself is {@link LateBound}, written once; an
 * owner with a field to spare for the handle and a cancelled state of its own (a delayed task)
 * implements it directly and pays no object for it.
 */
final class LateHandle implements LateBound {
  private volatile TaskHandle handle;
  private volatile boolean cancelled;

  /** Binds the handle of the latest hand-off; see {@link LateBound#bindLate}. */
  boolean bind(TaskHandle h) {
    return bindLate(h);
  }

  /**
   * Marks the owner cancelled and withdraws the bound task, if any.
   *
   * @return whether this call withdrew a bound task (false if none was bound yet: {@link #bind}
   *     withdraws it then)
   */
  boolean cancel() {
    cancelled = true;
    return withdrawLate();
  }

  @Override
  public TaskHandle lateHandle() {
    return handle;
  }

  @Override
  public void storeLateHandle(TaskHandle h) {
    handle = h;
  }

  @Override
  public boolean replaceLateHandle(TaskHandle expected, TaskHandle h) {
    return HANDLE.compareAndSet(this, expected, h);
  }

  private static final AtomicReferenceFieldUpdater<LateHandle, TaskHandle> HANDLE =
      AtomicReferenceFieldUpdater.newUpdater(LateHandle.class, TaskHandle.class, "handle");

  @Override
  public boolean lateCancelled() {
    return cancelled;
  }
}
