package dev.warmpool.reactor;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import reactor.core.Disposable;
import reactor.core.Exceptions;

/**
 * The container a {@link PoolTask} knows (Reactor's {@link Disposable.Composite}): a scheduler's
 * group (the root) or one worker's. A task is accepted into its group before it is handed to core
 * and removes itself exactly once, when it ends. A worker's group forwards to the root, so that the
 * root counts every task of the scheduler.
 *
 * <ul>
 *   <li>Root: counts every accepted task and holds the timed ones (delayed and periodic, direct or
 *       of a worker). {@code GRACEFUL} refuses new tasks and cancels the periodic ones;
 *       {@code DISPOSED} also cancels every timed one, and tasks that have not started never
 *       start ({@link #isDisposed()}). Running tasks are not interrupted. When the count reaches
 *       zero outside {@code OPEN}, {@code onQuiet} runs.</li>
 *   <li>A worker's: holds all its tasks ({@link #size()} is the worker's {@code BUFFERED});
 *       {@code dispose()} refuses new tasks and disposes each one: pending ones never run, a
 *       running one is interrupted.</li>
 * </ul>
 * A submitter counts and publishes the task first and reads the state second; a closer writes the
 * state first and sweeps second: either the task is refused or the sweep (and the count) sees it.
 */
final class TaskGroup implements Disposable.Composite {
  static final int OPEN = 0;
  static final int GRACEFUL = 1;
  static final int DISPOSED = 2;

  private static final AtomicIntegerFieldUpdater<TaskGroup> STATE =
      AtomicIntegerFieldUpdater.newUpdater(TaskGroup.class, "state");
  private static final AtomicLongFieldUpdater<TaskGroup> COUNT =
      AtomicLongFieldUpdater.newUpdater(TaskGroup.class, "count");

  /** The scheduler's group, for a worker's group; null for the root itself. */
  private final TaskGroup root;
  /** The root's owner, named in its rejections. */
  private final Object owner;
  private final Runnable onQuiet;
  private final Set<Disposable> members = ConcurrentHashMap.newKeySet();
  /** The root: accepted tasks not yet ended. */
  private volatile long count;
  private volatile int state;

  /** A scheduler's group; {@code onQuiet} runs when its last task ended after it closed. */
  TaskGroup(Object owner, Runnable onQuiet) {
    this.root = null;
    this.owner = owner;
    this.onQuiet = onQuiet;
  }

  /** A worker's group. */
  TaskGroup(TaskGroup root) {
    this.root = root;
    this.owner = null;
    this.onQuiet = null;
  }

  /**
   * Accepts a task about to be handed to core, or refuses it (the task ends) with Reactor's
   * rejections: a closed scheduler names itself, a disposed worker throws
   * {@link Exceptions#failWithRejected()} as Reactor's own workers do.
   */
  void accept(PoolTask t) {
    TaskGroup r = root == null ? this : root;
    COUNT.incrementAndGet(r);
    if (root != null) {
      members.add(t);
    }
    if (t.timed) {
      r.members.add(t);
    }
    if (r.state != OPEN || state != OPEN) { // publish, then check: see the class notes
      t.cancel(false);
      throw r.state != OPEN
          ? new RejectedExecutionException("scheduler " + r.owner + " is disposed")
          : Exceptions.failWithRejected();
    }
  }

  @Override
  public boolean add(Disposable d) {
    try {
      accept((PoolTask) d);
      return true;
    } catch (RejectedExecutionException refused) {
      return false;
    }
  }

  /** A task ended (called once per accepted task, by the task). */
  @Override
  public boolean remove(Disposable d) {
    boolean was = members.remove(d);
    TaskGroup r = root == null ? this : root;
    if (root != null) {
      root.members.remove(d);
    }
    if (COUNT.decrementAndGet(r) == 0 && r.state != OPEN) {
      r.onQuiet.run();
    }
    return was;
  }

  /**
   * Moves the state forward to {@code to} and sweeps the members (see the class notes); false if
   * it was there already.
   */
  boolean close(int to) {
    for (int s; (s = state) < to; ) {
      if (STATE.compareAndSet(this, s, to)) {
        for (Disposable d : members) {
          if (root != null) {
            d.dispose();
          } else if (to == DISPOSED || ((PoolTask) d).isPeriodic()) {
            ((PoolTask) d).stop();
          }
        }
        return true;
      }
    }
    return false;
  }

  @Override
  public void dispose() {
    close(DISPOSED);
  }

  /** Tasks that have not started must not start: this group, or its scheduler's, is disposed. */
  @Override
  public boolean isDisposed() {
    return state == DISPOSED || (root != null && root.state == DISPOSED);
  }

  /** Whether the group still accepts tasks. */
  boolean isOpen() {
    return state == OPEN;
  }

  /**
   * The root: tasks accepted and not ended; a worker's: its tasks not ended, 0 once disposed (a
   * disposed task still running is no longer the worker's; the root counts it until it ends).
   */
  @Override
  public int size() {
    if (root == null) {
      return (int) Math.min(Integer.MAX_VALUE, count);
    }
    return state == DISPOSED ? 0 : members.size();
  }
}
