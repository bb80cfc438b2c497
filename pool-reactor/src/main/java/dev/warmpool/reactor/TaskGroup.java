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
 * and removes itself exactly once, when it ends. Each task is a member of exactly one group (its
 * own); the root counts every task of the scheduler and holds its direct tasks and the groups of
 * its live workers, so that its sweep reaches every task.
 *
 * <ul>
 *   <li>Root: counts every accepted task. {@code GRACEFUL} refuses new tasks and cancels the
 *       periodic ones (direct and of its workers); {@code DISPOSED} also cancels every task that
 *       has not started (queued ones leave the pool's line or the lane's at once, timers their
 *       timer), and a task that has not started never starts ({@link #isDisposed()}). Running
 *       tasks are not interrupted. When the count reaches zero outside {@code OPEN},
 *       {@code onQuiet} runs.</li>
 *   <li>A worker's: holds all its tasks ({@link #size()} is the worker's {@code BUFFERED});
 *       {@code dispose()} refuses new tasks, disposes each one (pending ones never run, a running
 *       one is interrupted) and leaves the root.</li>
 * </ul>
 * A submitter counts and publishes the task first and reads the state second; a closer writes the
 * state first and sweeps second: either the task is refused or the sweep (and the count) sees it.
 * A worker's group joins the root before any task can be accepted into it, so the root's sweep,
 * which reads the root's state before the worker's members, sees the worker's tasks.
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

  /** A worker's group; it joins the root until it is disposed. */
  TaskGroup(TaskGroup root) {
    this.root = root;
    this.owner = null;
    this.onQuiet = null;
    root.members.add(this);
  }

  /**
   * Accepts a task about to be handed to core, or refuses it (the task ends) with Reactor's
   * rejections: a closed scheduler names itself, a disposed worker throws
   * {@link Exceptions#failWithRejected()} as Reactor's own workers do.
   */
  void accept(PoolTask t) {
    TaskGroup r = root == null ? this : root;
    COUNT.incrementAndGet(r);
    members.add(t);
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
        if (root != null) {
          members.forEach(Disposable::dispose);
          root.members.remove(this); // its tasks are ended or end by themselves
        } else {
          for (Disposable d : members) {
            if (d instanceof TaskGroup worker) {
              worker.members.forEach(t -> stop((PoolTask) t, to));
            } else {
              stop((PoolTask) d, to);
            }
          }
        }
        return true;
      }
    }
    return false;
  }

  /** The root's sweep of one task. */
  private static void stop(PoolTask t, int to) {
    if (to == DISPOSED || t.isPeriodic()) {
      t.stop();
    }
  }

  @Override
  public void dispose() {
    close(DISPOSED);
  }

  /** The root, once its pool terminated: refuses every task that never ran (see PoolTask). */
  void refuseHandedBack(String pool) {
    for (Disposable d : members) {
      if (d instanceof TaskGroup worker) {
        worker.members.forEach(t -> ((PoolTask) t).handedBack(pool));
      } else {
        ((PoolTask) d).handedBack(pool);
      }
    }
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
