package dev.warmpool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The pool's run state and its seats in one word, so that taking a seat and seeing the pool open are
 * one atomic step (as {@code ThreadPoolExecutor}'s {@code ctl}).
 *
 * <p>A <b>seat</b> is held by each accepted task from acceptance until it finishes (queued for a
 * worker or running). Seats never exceed the capacity, except briefly after a shrinking resize.
 * The state transitions:
 * <pre>
 *   RUNNING    -> SHUTDOWN    on shutdown() or shutdownNow()
 *   SHUTDOWN   -> TERMINATED  when no seat is held, no worker lives and the line is empty
 *   TERMINATED -> RUNNING     on reboot()
 * </pre>
 * While SHUTDOWN only admitted work (a lane's later tasks, entries taken from the line) takes seats,
 * so that everything accepted before the shutdown still runs.
 */
final class RunState {
  private static final int SEAT_BITS = 29;
  private static final int SEAT_MASK = (1 << SEAT_BITS) - 1;
  static final int RUNNING = 0;
  static final int SHUTDOWN = 1 << SEAT_BITS;
  static final int TERMINATED = 2 << SEAT_BITS;

  private static final VarHandle CTL;

  static {
    try {
      CTL = MethodHandles.lookup().findVarHandle(RunState.class, "ctl", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private volatile int ctl;

  int state() {
    return ctl & ~SEAT_MASK;
  }

  boolean isRunning() {
    return ctl < SHUTDOWN;
  }

  boolean isTerminated() {
    return state() == TERMINATED;
  }

  int seats() {
    return ctl & SEAT_MASK;
  }

  /**
   * Takes a seat if fewer than {@code capacity} are held and the pool is RUNNING, or SHUTDOWN for
   * {@code admitted} work.
   */
  boolean tryTakeSeat(int capacity, boolean admitted) {
    for (;;) {
      int c = ctl;
      if (c >= SHUTDOWN && !(admitted && c < TERMINATED)) {
        return false;
      }
      if ((c & SEAT_MASK) >= capacity) {
        return false;
      }
      if (CTL.weakCompareAndSet(this, c, c + 1)) {
        return true;
      }
    }
  }

  /** Gives back one seat. */
  void releaseSeat() {
    CTL.getAndAdd(this, -1);
  }

  /** RUNNING -> SHUTDOWN; returns false if the pool was not running. */
  boolean shutdown() {
    for (;;) {
      int c = ctl;
      if (c >= SHUTDOWN) {
        return false;
      }
      if (CTL.compareAndSet(this, c, c | SHUTDOWN)) {
        return true;
      }
    }
  }

  /** SHUTDOWN with no seat held -> TERMINATED. */
  boolean terminate() {
    return CTL.compareAndSet(this, SHUTDOWN, TERMINATED);
  }

  /** TERMINATED -> RUNNING. */
  void reopen() {
    ctl = RUNNING;
  }
}
