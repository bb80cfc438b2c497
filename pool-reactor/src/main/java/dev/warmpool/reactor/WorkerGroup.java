package dev.warmpool.reactor;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import reactor.core.Disposable;

/**
 * One worker's tasks (see {@link TaskGroup}, the root it belongs to): holds every task of the
 * worker not yet ended, in the compact {@link MemberSet} it is. {@link #size()} is the worker's
 * {@code BUFFERED}; {@link #dispose()} refuses new tasks, disposes each one (pending ones never
 * run, a running one is interrupted) and leaves the root. Its tasks are counted in the root.
 *
 * <p>A submitter counts and publishes the task first and reads the states second; a dispose
 * writes the state first and sweeps second: either the task is refused or the sweep sees it.
 * Only the root state and this group's own are kept here: a worker's group costs its header, the
 * root, a state and the set's three fields (idle workers may be many, issue 33).
 */
final class WorkerGroup extends MemberSet implements Disposable.Composite {
  private static final AtomicIntegerFieldUpdater<WorkerGroup> STATE =
      AtomicIntegerFieldUpdater.newUpdater(WorkerGroup.class, "state");

  private final TaskGroup root;
  /** {@link TaskGroup#OPEN} or {@link TaskGroup#DISPOSED}. */
  private volatile int state;

  /** Made by {@link TaskGroup#newWorkerGroup}, which joins it to the root. */
  WorkerGroup(TaskGroup root) {
    this.root = root;
  }

  /**
   * Accepts a task of the worker about to be handed to core, or refuses it (the task ends) with
   * Reactor's rejections (see {@link TaskGroup#checkAccepted}).
   */
  void accept(PoolTask t) {
    root.counted();
    addMember(t);
    root.checkAccepted(t, state); // publish, then check
  }

  @Override
  public boolean add(Disposable d) {
    try {
      accept((PoolTask) d);
      return true;
    } catch (java.util.concurrent.RejectedExecutionException refused) {
      return false;
    }
  }

  /** A task ended (called once per accepted task, by the task). */
  @Override
  public boolean remove(Disposable d) {
    boolean was = removeMember(d);
    root.ended();
    return was;
  }

  /** Disposes the worker's tasks and leaves the root; false if it was disposed already. */
  boolean close() {
    if (!STATE.compareAndSet(this, TaskGroup.OPEN, TaskGroup.DISPOSED)) {
      return false;
    }
    for (Object t : snapshot()) { // outside the lock: a disposed task leaves the group
      ((Disposable) t).dispose();
    }
    root.leave(this); // its tasks are ended or end by themselves
    return true;
  }

  @Override
  public void dispose() {
    close();
  }

  /** Tasks that have not started must not start: this worker, or its scheduler, is disposed. */
  @Override
  public boolean isDisposed() {
    return state == TaskGroup.DISPOSED || root.isDisposed();
  }

  /** Whether the worker still accepts tasks. */
  boolean isOpen() {
    return state == TaskGroup.OPEN;
  }

  /**
   * Its tasks not ended, 0 once disposed (a disposed task still running is no longer the worker's;
   * the root counts it until it ends).
   */
  @Override
  public int size() {
    return state == TaskGroup.DISPOSED ? 0 : memberCount();
  }
}
