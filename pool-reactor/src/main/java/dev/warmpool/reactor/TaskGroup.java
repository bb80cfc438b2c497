package dev.warmpool.reactor;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import reactor.core.Disposable;
import reactor.core.Exceptions;

/**
 * The group a {@link PoolTask} knows ({@link TaskOwner}): a scheduler's group (the root, this
 * class) or one worker, which is the group of its own tasks ({@link PoolWorker}). A task is
 * accepted into its group before it is handed to core and removes itself exactly once, when it
 * ends. Each task is a member of exactly one group (its own); the root counts every task of the
 * scheduler and holds its direct tasks and its live workers, so that its sweep reaches every task.
 *
 * <ul>
 *   <li>Root: counts every accepted task. {@code GRACEFUL} refuses new tasks and cancels the
 *       periodic ones (direct and of its workers); {@code DISPOSED} also cancels every task that
 *       has not started (queued ones leave the pool's line or the lane's at once, timers their
 *       timer), and a task that has not started never starts ({@link #isDisposed()}). Running
 *       tasks are not interrupted. When the count reaches zero outside {@code OPEN},
 *       {@code onQuiet} runs.</li>
 *   <li>A worker's ({@link PoolWorker}): holds all its tasks ({@code size()} is the worker's
 *       {@code BUFFERED}); {@code dispose()} refuses new tasks, disposes each one (pending ones
 *       never run, a running one is interrupted) and leaves the root.</li>
 * </ul>
 * A submitter counts and publishes the task first and reads the state second; a closer writes the
 * state first and sweeps second: either the task is refused or the sweep (and the count) sees it.
 * A worker joins the root before any task can be accepted into it, so the root's sweep,
 * which reads the root's state before the worker's members, sees the worker's tasks.
 *
 * <p><b>Footprint.</b> The root takes tasks from every thread: a concurrent set. A worker holds
 * its tasks in the compact {@link MemberSet} it is (no object of its own), as a Reactor worker is
 * used by one thread at a time and idle workers may be many (issue 33).
 */
final class TaskGroup implements Disposable.Composite, TaskOwner {
  static final int OPEN = 0;
  static final int GRACEFUL = 1;
  static final int DISPOSED = 2;

  private static final AtomicIntegerFieldUpdater<TaskGroup> STATE =
      AtomicIntegerFieldUpdater.newUpdater(TaskGroup.class, "state");
  private static final AtomicLongFieldUpdater<TaskGroup> COUNT =
      AtomicLongFieldUpdater.newUpdater(TaskGroup.class, "count");

  /** The root's owner, named in its rejections. */
  private final Object owner;
  private final Runnable onQuiet;
  /** Direct tasks (taken and left from every thread: a concurrent set). */
  private final Set<Disposable> members = ConcurrentHashMap.newKeySet();
  /**
   * The live workers, each the group of its tasks: a list through the workers' own links
   * ({@link PoolWorker#prev}, {@link PoolWorker#next}), under this object's lock. Idle workers may
   * be many (issue 33): a concurrent set's node and table slot cost about 42 bytes each, the links
   * 8; joining and leaving are a few stores under the lock.
   */
  private PoolWorker workers;
  /** Accepted tasks not yet ended, direct and of the workers. */
  private volatile long count;
  private volatile int state;

  /** A scheduler's group; {@code onQuiet} runs when its last task ended after it closed. */
  TaskGroup(Object owner, Runnable onQuiet) {
    this.owner = owner;
    this.onQuiet = onQuiet;
  }

  /** A new worker, joined to this root until it is disposed. */
  void join(PoolWorker w) {
    synchronized (this) {
      PoolWorker first = workers;
      w.next = first;
      if (first != null) {
        first.prev = w;
      }
      workers = w;
    }
  }

  /** A worker was disposed (once): its tasks are ended or end by themselves. */
  void leave(PoolWorker w) {
    synchronized (this) {
      PoolWorker prev = w.prev;
      PoolWorker next = w.next;
      if (prev == null) {
        if (workers != w) {
          return; // not joined
        }
        workers = next;
      } else {
        prev.next = next;
      }
      if (next != null) {
        next.prev = prev;
      }
      w.prev = null;
      w.next = null;
    }
  }

  /** The live workers now; swept outside the lock (a disposed task may end its worker's part). */
  synchronized List<PoolWorker> workers() {
    List<PoolWorker> out = new ArrayList<>();
    for (PoolWorker w = workers; w != null; w = w.next) {
      out.add(w);
    }
    return out;
  }

  /**
   * Accepts a direct task about to be handed to core, or refuses it (the task ends): a closed
   * scheduler names itself.
   */
  void accept(PoolTask t) {
    COUNT.incrementAndGet(this);
    members.add(t);
    checkAccepted(t, OPEN);
  }

  /**
   * After a task was counted and published in its group: refuses it if this scheduler or its
   * worker's group ({@code groupState}) closed meanwhile (publish, then check: see the class notes)
   * with Reactor's rejections: a closed scheduler names itself, a disposed worker throws
   * {@link Exceptions#failWithRejected()} as Reactor's own workers do.
   */
  void checkAccepted(PoolTask t, int groupState) {
    int s = state;
    if (s != OPEN || groupState != OPEN) {
      t.cancel(false);
      throw s != OPEN
          ? new RejectedExecutionException("scheduler " + owner + " is disposed")
          : Exceptions.failWithRejected();
    }
  }

  /** Counts a task accepted by a worker. */
  void counted() {
    COUNT.incrementAndGet(this);
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

  /** A direct task ended (called once per accepted task, by the task). */
  @Override
  public boolean remove(Disposable d) {
    boolean was = members.remove(d);
    ended();
    return was;
  }

  /** A task of this scheduler ended, direct or of a worker. */
  void ended() {
    if (COUNT.decrementAndGet(this) == 0 && state != OPEN) {
      onQuiet.run();
    }
  }

  /**
   * Moves the state forward to {@code to} and sweeps the members (see the class notes); false if
   * it was there already.
   */
  boolean close(int to) {
    for (int s; (s = state) < to; ) {
      if (STATE.compareAndSet(this, s, to)) {
        for (Disposable d : members) {
          stop((PoolTask) d, to);
        }
        for (PoolWorker worker : workers()) {
          for (Object t : worker.snapshot()) {
            stop((PoolTask) t, to);
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
      ((PoolTask) d).handedBack(pool);
    }
    for (PoolWorker worker : workers()) {
      for (Object t : worker.snapshot()) {
        ((PoolTask) t).handedBack(pool);
      }
    }
  }

  /** Tasks that have not started must not start: this scheduler is disposed. */
  @Override
  public boolean isDisposed() {
    return state == DISPOSED;
  }

  @Override
  public boolean stopsTasks() {
    return state == DISPOSED;
  }

  /** A direct task ended (called once per accepted task, by the task). */
  @Override
  public void ended(PoolTask t) {
    remove(t);
  }

  /** Whether the scheduler still accepts tasks. */
  boolean isOpen() {
    return state == OPEN;
  }

  /** Tasks accepted and not ended, direct and of the workers. */
  @Override
  public int size() {
    return (int) Math.min(Integer.MAX_VALUE, count);
  }
}
