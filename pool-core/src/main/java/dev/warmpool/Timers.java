package dev.warmpool;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * The pending timers of one pool: the delayed and periodic tasks that are not yet done (its own,
 * and those of its serial lanes), so that closing the pool cancels those not yet due (DESIGN.md
 * guarantee 7). A lane keeps its own timers as well, in itself ({@link DelayedTask.Lane}): closing
 * the lane cancels all of them.
 *
 * <p><b>Publish, then check.</b> A timer is registered before it is armed and re-checks
 * {@link #isClosed} after it registered ({@link DelayedTask#start}) and after every re-arm; closing
 * sets the flag before it sweeps. So a schedule or a periodic re-arm that races the close is either
 * swept or sees the flag and cancels itself: no timer stays pending on a closed owner.
 *
 * <p>Closing a pool cancels only timers <em>not yet due</em> ({@link Timer#cancelIfPending}): a
 * timer that has fired was handed to its pool as an accepted task and runs, or is handed back by
 * {@code shutdownNow}, like every other accepted task.
 *
 * <p><b>Quiet.</b> A pool must not terminate while a timer could still complete later: before the
 * close's sweep has finished, or while a fire is between "due" and its hand-off to the pool. So
 * {@link #state} counts the fires in flight beside the CLOSED and SWEPT bits; a fire begins only
 * while not CLOSED ({@link #tryBeginFire}), and the owner may terminate only when {@link #isQuiet}:
 * closed, swept and no fire in flight. The last of the sweep and the fires tells the owner
 * ({@code onQuiet}).
 */
final class Timers {
  /**
   * A pending timer as its owner sees it ({@link DelayedTask}). It carries its own links in the
   * owner's list, read and written only by {@link Timers} under its lock.
   */
  interface Timer {
    /** Cancels the timer if it is not yet due; a due timer is an accepted task and is left alone. */
    void cancelIfPending();

    /** Cancels the timer whatever its phase (a run in progress finishes, and is the last). */
    boolean cancel(boolean mayInterruptIfRunning);

    Timer prevTimer();

    Timer nextTimer();

    void linkTimer(Timer prev, Timer next);
  }

  private static final int CLOSED = 1 << 30;
  private static final int SWEPT = 1 << 29;
  private static final int FIRES = SWEPT - 1;

  private static final AtomicIntegerFieldUpdater<Timers> STATE =
      AtomicIntegerFieldUpdater.newUpdater(Timers.class, "state");

  /**
   * The registered timers, oldest first: a list through the timers' own links, under this
   * object's lock (a pool may hold a hundred thousand idle timers, issue 33: a concurrent set's
   * node and table slot cost about 42 bytes each, the links 8). Registering and forgetting are a
   * few stores under the lock, as short as the shared timer's own.
   */
  private Timer head;
  private Timer tail;
  private int count;
  /** CLOSED and SWEPT bits, and the number of fires in flight. */
  private volatile int state;
  /** Told when the timers become quiet after a close (the owner may terminate); set once, at wiring. */
  private volatile Runnable onQuiet = () -> { };

  /** Tells {@code r} when the timers become quiet after a close: the owner's termination check. */
  void onQuiet(Runnable r) {
    onQuiet = r;
  }

  /** Publishes the timer; then the caller checks {@link #isClosed}. */
  void register(Timer t) {
    synchronized (this) {
      Timer last = tail;
      t.linkTimer(last, null);
      if (last == null) {
        head = t;
      } else {
        last.linkTimer(last.prevTimer(), t);
      }
      tail = t;
      count++;
    }
  }

  /** The timer is done (ran its last run, or was cancelled). */
  void forget(Timer t) {
    synchronized (this) {
      Timer prev = t.prevTimer();
      Timer next = t.nextTimer();
      if (prev == null ? head != t : prev.nextTimer() != t) {
        return; // not registered, or forgotten before
      }
      if (prev == null) {
        head = next;
      } else {
        prev.linkTimer(prev.prevTimer(), next);
      }
      if (next == null) {
        tail = prev;
      } else {
        next.linkTimer(prev, next.nextTimer());
      }
      t.linkTimer(null, null);
      count--;
    }
  }

  /** The registered timers now, oldest first. */
  private synchronized Timer[] snapshot() {
    Timer[] out = new Timer[count];
    int i = 0;
    for (Timer t = head; t != null; t = t.nextTimer()) {
      out[i++] = t;
    }
    return out;
  }

  boolean isClosed() {
    return (state & CLOSED) != 0;
  }

  /** Closed, swept, and no fire in flight: no timer of this owner can complete later. */
  boolean isQuiet() {
    return state == (CLOSED | SWEPT);
  }

  /** A timer is due: false if the owner is closed (then the timer is not due but cancelled). */
  boolean tryBeginFire() {
    for (;;) {
      int s = state;
      if ((s & CLOSED) != 0) {
        return false;
      }
      if (STATE.compareAndSet(this, s, s + 1)) {
        return true;
      }
    }
  }

  /** The fire has handed its timer on (or cancelled it). */
  void endFire() {
    if (STATE.decrementAndGet(this) == (CLOSED | SWEPT)) {
      onQuiet.run();
    }
  }

  /**
   * Closes the owner's timers: cancels every one not yet due, waits for the
   * fires in flight to hand their tasks on, and later timers cancel themselves.
   */
  void close() {
    int s;
    do {
      s = state;
      if ((s & CLOSED) != 0) {
        return; // closed before: that close sweeps
      }
    } while (!STATE.compareAndSet(this, s, s | CLOSED));
    for (Timer t : snapshot()) { // outside the lock: a cancel forgets its timer
      t.cancelIfPending();
    }
    // Let the fires that began before the close finish their hand-off (a few instructions on the
    // timer thread, no user code): a shutdownNow then finds their tasks in the pool to hand back,
    // and a sharded pool's shards are still open to take them.
    while ((state & FIRES) != 0) {
      Thread.onSpinWait();
    }
    if (STATE.accumulateAndGet(this, SWEPT, (a, b) -> a | b) == (CLOSED | SWEPT)) {
      onQuiet.run();
    }
  }

  /** The owner rebooted: timers may be scheduled again. */
  void reopen() {
    state = 0;
  }

  /** Timers pending; for tests. */
  int size() {
    synchronized (this) {
      return count;
    }
  }
}
