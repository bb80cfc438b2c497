package dev.warmpool;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The FIFO line of work waiting for a seat: callers blocked in {@code execute} (an entry with a
 * {@code caller}) and accepted tasks or lanes waiting without a thread (no caller).
 *
 * <p>The line is the slow path, so it is a doubly linked list guarded by one lock, which makes
 * withdrawal O(1) and every state change atomic with the list change. {@link #size()} is a volatile
 * read so that workers and submitters can check for waiters without taking the lock.
 *
 * <p>Each entry is a {@link TaskEnvelope}; the line moves it only by the envelope's transitions
 * that happen under the line's lock (WAITING to QUEUED, CANCELLED or CLOSED), so every state change
 * is atomic with the list change.
 */
final class WaitingLine {
  /** The outcome of {@link #offer}. */
  enum Offer {
    LINKED,
    FULL,
    REFUSED
  }

  private final ReentrantLock lock = new ReentrantLock();
  private TaskEnvelope head;
  private TaskEnvelope tail;
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
  Offer offer(TaskEnvelope e, int bound, boolean admitted) {
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

  /** Takes the head entry (now QUEUED: it holds a seat), or returns null. */
  TaskEnvelope poll() {
    lock.lock();
    try {
      TaskEnvelope e = head;
      if (e != null) {
        unlink(e);
        e.state = TaskEnvelope.QUEUED;
      }
      return e;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Takes the head entry for a sibling shard that has a seat for it: like {@link #poll}, with its
   * owner set to {@code taker} before it leaves WAITING (which publishes the owner).
   */
  TaskEnvelope pollFor(TaskEnvelope.Owner taker) {
    lock.lock();
    try {
      TaskEnvelope e = head;
      if (e != null) {
        unlink(e);
        e.owner = taker;
        e.state = TaskEnvelope.QUEUED;
      }
      return e;
    } finally {
      lock.unlock();
    }
  }

  /** Removes a waiting entry; false if it already got a seat or left the line. */
  boolean cancel(TaskEnvelope e) {
    lock.lock();
    try {
      if (e.state != TaskEnvelope.WAITING) {
        return false;
      }
      unlink(e);
      e.state = TaskEnvelope.CANCELLED;
      return true;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Removes a waiting entry whose line deadline ({@code deadline}, its timer) passed, marked EXPIRED;
   * false if it already got a seat or left the line, if that timer is no longer its own, or if its
   * kind says no ({@link TaskKind#expiring}, which adds to {@code tasks} what expires with it).
   * {@code count} runs once the expiry is decided and before EXPIRED is published (it runs no user
   * code): whoever sees the entry expired, through its handle, its future or its woken caller, also
   * sees it counted.
   */
  boolean expire(TaskEnvelope e, SharedTimer.Task deadline, List<Runnable> tasks, Runnable count) {
    lock.lock();
    try {
      if (e.state != TaskEnvelope.WAITING || e.expiry != deadline
          || !e.kind.expiring(e.arg, tasks)) {
        return false;
      }
      unlink(e);
      count.run();
      e.state = TaskEnvelope.EXPIRED;
      return true;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Evaluates {@code check} under the line's lock: atomic with respect to every move of an entry
   * (a serial lane's admission against its entry's expiry). {@code check} runs no user code.
   */
  boolean underLock(BooleanSupplier check) {
    lock.lock();
    try {
      return check.getAsBoolean();
    } finally {
      lock.unlock();
    }
  }

  /** Closes the line to new work and removes every blocked caller, marked CLOSED, for waking. */
  List<TaskEnvelope> close() {
    lock.lock();
    try {
      closed = true;
      List<TaskEnvelope> callers = new ArrayList<>();
      for (TaskEnvelope e = head; e != null; ) {
        TaskEnvelope next = e.next;
        if (e.caller != null) {
          unlink(e);
          e.state = TaskEnvelope.CLOSED;
          callers.add(e);
        }
        e = next;
      }
      return callers;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Removes every remaining entry in line order: a blocked caller's marked CLOSED (it wakes with
   * {@link PoolClosedException}), a task's marked HANDED_BACK (its handle reads done).
   */
  List<TaskEnvelope> drain() {
    lock.lock();
    try {
      List<TaskEnvelope> all = new ArrayList<>(size);
      while (head != null) {
        TaskEnvelope e = head;
        unlink(e);
        e.state = e.caller != null ? TaskEnvelope.CLOSED : TaskEnvelope.HANDED_BACK;
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

  private void link(TaskEnvelope e) {
    e.prev = tail;
    if (tail == null) {
      head = e;
    } else {
      tail.next = e;
    }
    tail = e;
    size++;
  }

  private void unlink(TaskEnvelope e) {
    TaskEnvelope p = e.prev;
    TaskEnvelope n = e.next;
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
