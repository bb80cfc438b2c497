package dev.warmpool;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * The FIFO line of work waiting for a worker in blocking mode: callers blocked in {@code execute}
 * (an entry with a {@code caller}) and accepted tasks or lanes waiting without a thread (no caller).
 *
 * <p>The line is the slow path, so it is a doubly linked list guarded by one lock, which makes
 * cancellation O(1) and every state change atomic with the list change. {@link #size()} is a volatile
 * read so that workers can check for waiters without taking the lock.
 *
 * <p>An entry's state moves under the lock: {@code WAITING -> TAKEN} (a worker took it),
 * {@code WAITING -> CANCELLED} (timeout, interrupt or shutdownNow), {@code WAITING -> CLOSED} (the
 * pool shut down while a caller waited), or {@code WAITING -> CLAIMED} when a new worker is being
 * started for it; the claimant then resolves it to {@code TAKEN} (the thread started) or back to
 * {@code WAITING} at the head of the line ({@code CLOSED} for a caller if the line closed meanwhile).
 */
final class WaitingLine {
  static final int WAITING = 0;
  static final int TAKEN = 1;
  static final int CANCELLED = 2;
  static final int CLOSED = 3;
  static final int CLAIMED = 4;

  static final int OFFERED = 0;
  static final int FULL = 1;
  static final int REFUSED = 2;

  static final class Entry {
    final Consumer<Object> fn;
    final Object arg;
    final Thread caller;
    volatile int state;
    /** Set by the caller just before it parks, so that a taker unparks only a parked caller. */
    volatile boolean parked;
    Entry prev;
    Entry next;

    Entry(Consumer<Object> fn, Object arg, Thread caller) {
      this.fn = fn;
      this.arg = arg;
      this.caller = caller;
    }
  }

  private final ReentrantLock lock = new ReentrantLock();
  private Entry head;
  private Entry tail;
  private volatile int size;
  /** Accessed only under lock: set by shutdown; only already-admitted work may still join. */
  private boolean closed;
  /** Accessed only under lock: set when the pool terminates; nothing may join. */
  private boolean terminated;

  int size() {
    return size;
  }

  /**
   * Appends the entry unless the line holds {@code bound} entries already ({@link #FULL}) or is
   * closed to it ({@link #REFUSED}): closed lines take only admitted work, terminated lines nothing.
   */
  int offer(Entry e, int bound, boolean admitted) {
    lock.lock();
    try {
      if (terminated || (closed && !admitted)) {
        return REFUSED;
      }
      if (size >= bound) {
        return FULL;
      }
      link(e);
      return OFFERED;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Puts a CLAIMED entry whose worker could not start back at the head, keeping its place; a
   * blocked caller's entry is CLOSED instead if the line closed meanwhile.
   */
  void requeueFirst(Entry e) {
    lock.lock();
    try {
      if (closed && e.caller != null) {
        e.state = CLOSED;
        return;
      }
      e.state = WAITING;
      e.next = head;
      if (head == null) {
        tail = e;
      } else {
        head.prev = e;
      }
      head = e;
      size++;
    } finally {
      lock.unlock();
    }
  }

  /** Takes the head entry for a worker about to be started (marking it CLAIMED), or null. */
  Entry claim() {
    lock.lock();
    try {
      Entry e = head;
      if (e != null) {
        unlink(e);
        e.state = CLAIMED;
      }
      return e;
    } finally {
      lock.unlock();
    }
  }

  /** Takes the head entry (marking it TAKEN), or returns null if the line is empty. */
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

  /** Removes a waiting entry; false if a worker already took it or the pool closed it. */
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

  /** Removes every remaining entry, marked CANCELLED, in line order. */
  List<Entry> drain() {
    lock.lock();
    try {
      List<Entry> all = new ArrayList<>(size);
      while (head != null) {
        Entry e = head;
        unlink(e);
        e.state = CANCELLED;
        all.add(e);
      }
      return all;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Runs {@code terminate} and marks the line terminated if the line is empty and {@code terminate}
   * returns true; atomic with respect to offers.
   */
  boolean terminateIfEmpty(java.util.function.BooleanSupplier terminate) {
    lock.lock();
    try {
      if (size != 0 || !terminate.getAsBoolean()) {
        return false;
      }
      terminated = true;
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** Reopens the line after the pool rebooted. */
  void reopen() {
    lock.lock();
    try {
      closed = false;
      terminated = false;
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
