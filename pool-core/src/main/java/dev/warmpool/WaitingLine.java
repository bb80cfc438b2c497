package dev.warmpool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The FIFO line of work waiting for a seat: callers blocked in {@code execute} (an entry with a
 * {@code caller}) and accepted tasks or lanes waiting without a thread (no caller).
 *
 * <p>The line is the slow path, so it is a doubly linked list guarded by one lock, which makes
 * withdrawal O(1) and every state change atomic with the list change. {@link #size()} is a volatile
 * read so that workers and submitters can check for waiters without taking the lock.
 *
 * <p>An entry is also the {@link TaskHandle} of its task. Its states:
 * <pre>
 *   WAITING -> TAKEN      it got a seat (under the lock; it is queued for a worker or run at once)
 *   WAITING -> CANCELLED  withdrawn: its handle, a caller's timeout or interrupt (under the lock)
 *   WAITING -> CLOSED     shutdown woke its blocked caller, or shutdownNow handed its task back
 *   TAKEN   -> STARTED    a worker is about to run it (CAS)
 *   TAKEN   -> CANCELLED  withdrawn by its handle while queued; the worker that reaches it skips it
 *   TAKEN   -> HANDED_BACK  handed back by shutdownNow (CAS); the task was accepted, so a caller
 *                         still blocked on the entry returns normally (CLOSED would make it throw)
 * </pre>
 */
final class WaitingLine {
  static final int WAITING = 0;
  static final int TAKEN = 1;
  static final int STARTED = 2;
  static final int CANCELLED = 3;
  static final int CLOSED = 4;
  static final int HANDED_BACK = 5;
  /** A subpool's task finished ({@link Subpool.Seat}). */
  static final int DONE = 6;
  /** A subpool's shutdownNow is interrupting the task's runner ({@link Subpool.Seat}). */
  static final int INTERRUPTING = 7;

  /** The outcome of {@link #offer}. */
  enum Offer {
    LINKED,
    FULL,
    REFUSED
  }

  /** A place in line, and the handle of its task. */
  static class Entry implements TaskHandle {
    private static final VarHandle STATE;

    static {
      try {
        STATE = MethodHandles.lookup().findVarHandle(Entry.class, "state", int.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    /** The kind under which an entry travels through the run queue: it runs unless withdrawn. */
    static final TaskKind KIND = new TaskKind() {
      @Override
      void run(Object arg, Accounting accounting, Worker worker) {
        Entry e = (Entry) arg;
        if (STATE.compareAndSet(e, TAKEN, STARTED)) {
          e.kind.run(e.arg, accounting, worker);
        }
      }

      @Override
      void handBack(Object arg, List<Runnable> out) {
        Entry e = (Entry) arg;
        if (STATE.compareAndSet(e, TAKEN, HANDED_BACK)) {
          e.kind.handBack(e.arg, out);
        }
      }
    };

    final SeatPool pool;
    final TaskKind kind;
    final Object arg;
    final Thread caller;
    volatile int state;
    /** Set by the caller just before it parks, so that a taker unparks only a parked caller. */
    volatile boolean parked;
    Entry prev;
    Entry next;

    Entry(SeatPool pool, TaskKind kind, Object arg, Thread caller, int state) {
      this.pool = pool;
      this.kind = kind;
      this.arg = arg;
      this.caller = caller;
      this.state = state;
    }

    @Override
    public boolean cancel() {
      for (;;) {
        int s = state;
        if (s == WAITING) {
          if (pool.withdraw(this)) {
            return true;
          }
        } else if (s == TAKEN) {
          if (STATE.compareAndSet(this, TAKEN, CANCELLED)) {
            pool.withdrawnTaken(this);
            return true;
          }
        } else {
          return false;
        }
      }
    }

    /** Moves the state from {@code from} to {@code to} atomically; false if it was not {@code from}. */
    final boolean transition(int from, int to) {
      return STATE.compareAndSet(this, from, to);
    }

    @Override
    public boolean isCancelled() {
      return state == CANCELLED;
    }

    @Override
    public String toString() {
      return "TaskHandle[" + switch (state) {
        case WAITING -> "waiting";
        case TAKEN -> "queued";
        case STARTED, INTERRUPTING -> "started";
        case DONE -> "done";
        case CANCELLED -> "cancelled";
        default -> "handed back";
      } + "]";
    }
  }

  private final ReentrantLock lock = new ReentrantLock();
  private Entry head;
  private Entry tail;
  private volatile int size;
  /** Accessed only under lock: set by shutdown; only admitted work may still join. */
  private boolean closed;
  /** Accessed only under lock: set when the pool terminates; nothing may join. */
  private boolean terminated;

  int size() {
    return size;
  }

  /**
   * Appends the entry unless the line holds {@code bound} entries already or is closed to it
   * (closed lines take only admitted work, terminated lines nothing).
   */
  Offer offer(Entry e, int bound, boolean admitted) {
    lock.lock();
    try {
      if (terminated || (closed && !admitted)) {
        return Offer.REFUSED;
      }
      if (size >= bound) {
        return Offer.FULL;
      }
      link(e);
      return Offer.LINKED;
    } finally {
      lock.unlock();
    }
  }

  /** Takes the head entry (marking it TAKEN: it now holds a seat), or returns null. */
  Entry poll() {
    lock.lock();
    try {
      Entry e = head;
      if (e != null) {
        unlink(e);
        e.state = TAKEN;
      }
      return e;
    } finally {
      lock.unlock();
    }
  }

  /** Removes a waiting entry; false if it already got a seat or left the line. */
  boolean cancel(Entry e) {
    lock.lock();
    try {
      if (e.state != WAITING) {
        return false;
      }
      unlink(e);
      e.state = CANCELLED;
      return true;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Removes the waiting entry that carries {@code arg} (a lane's carrier), marked CANCELLED; false
   * if none waits. A scan, but only a closing lane calls it, and a lane has at most one entry.
   */
  boolean cancelCarrier(Object arg) {
    if (size() == 0) {
      return false; // nothing to scan: no lock
    }
    lock.lock();
    try {
      for (Entry e = head; e != null; e = e.next) {
        if (e.arg == arg && e.caller == null && e.state == WAITING) {
          unlink(e);
          e.state = CANCELLED;
          return true;
        }
      }
      return false;
    } finally {
      lock.unlock();
    }
  }

  /** Closes the line to new work and removes every blocked caller, marked CLOSED, for waking. */
  List<Entry> close() {
    lock.lock();
    try {
      closed = true;
      List<Entry> callers = new ArrayList<>();
      for (Entry e = head; e != null; ) {
        Entry next = e.next;
        if (e.caller != null) {
          unlink(e);
          e.state = CLOSED;
          callers.add(e);
        }
        e = next;
      }
      return callers;
    } finally {
      lock.unlock();
    }
  }

  /** Removes every remaining entry, marked CLOSED, in line order. */
  List<Entry> drain() {
    lock.lock();
    try {
      List<Entry> all = new ArrayList<>(size);
      while (head != null) {
        Entry e = head;
        unlink(e);
        e.state = CLOSED;
        all.add(e);
      }
      return all;
    } finally {
      lock.unlock();
    }
  }

  /**
   * If the line is empty, runs {@code terminate}, atomic with respect to offers and to
   * {@link #reopen}; if that returns non-null, marks the line terminated (nothing may join) and
   * returns what it returned.
   */
  <T> T terminateIfEmpty(Supplier<T> terminate) {
    lock.lock();
    try {
      if (size != 0) {
        return null;
      }
      T done = terminate.get();
      if (done != null) {
        terminated = true;
      }
      return done;
    } finally {
      lock.unlock();
    }
  }

  /** Reopens the line after the pool rebooted, running {@code reopen} under the same lock. */
  void reopen(Runnable reopen) {
    lock.lock();
    try {
      closed = false;
      terminated = false;
      reopen.run();
    } finally {
      lock.unlock();
    }
  }

  private void link(Entry e) {
    e.prev = tail;
    if (tail == null) {
      head = e;
    } else {
      tail.next = e;
    }
    tail = e;
    size++;
  }

  private void unlink(Entry e) {
    Entry p = e.prev;
    Entry n = e.next;
    if (p == null) {
      head = n;
    } else {
      p.next = n;
    }
    if (n == null) {
      tail = p;
    } else {
      n.prev = p;
    }
    e.prev = null;
    e.next = null;
    size--;
  }
}
