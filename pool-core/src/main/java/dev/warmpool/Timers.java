package dev.warmpool;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The pending timers of one owner (a pool, or a serial lane): the delayed and periodic tasks that
 * are not yet done, so that closing the owner cancels those not yet due (DESIGN.md guarantee 7).
 *
 * <p><b>Publish, then check.</b> A timer is registered before it is armed and re-checks
 * {@link #isClosed} after it registered ({@link DelayedTask#start}) and after every re-arm; closing
 * sets the flag before it sweeps. So a schedule or a periodic re-arm that races the close is either
 * swept or sees the flag and cancels itself: no timer stays pending on a closed owner.
 *
 * <p>Only timers <em>not yet due</em> are cancelled ({@link Timer#cancelIfPending}): a timer
 * that has fired was handed to its pool or lane as an accepted task and runs, or is handed back by
 * {@code shutdownNow}, like every other accepted task.
 */
final class Timers {
  /** A pending timer as its owner sees it ({@link DelayedTask}). */
  interface Timer {
    /** Cancels the timer if it is not yet due; a due timer is an accepted task and is left alone. */
    void cancelIfPending();
  }

  private final Set<Timer> pending = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  /** Publishes the timer; then the caller checks {@link #isClosed}. */
  void register(Timer t) {
    pending.add(t);
  }

  /** The timer is done (ran its last run, or was cancelled). */
  void forget(Timer t) {
    pending.remove(t);
  }

  boolean isClosed() {
    return closed;
  }

  /** Closes the owner's timers: cancels every one not yet due; later ones cancel themselves. */
  void close() {
    closed = true;
    for (Timer t : pending) {
      t.cancelIfPending();
    }
  }

  /** The owner rebooted: timers may be scheduled again. */
  void reopen() {
    closed = false;
  }

  /** Timers pending; for tests. */
  int size() {
    return pending.size();
  }
}
