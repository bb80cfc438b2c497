package dev.warmpool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The FILO stack of idle workers, kept in a ring buffer ordered by last use: the bottom holds the
 * workers idle longest, the top the one released last.
 *
 * <h2>Concurrency</h2>
 * The whole shape of the stack is one word, {@code ctl}: a stamp, the ring position of the bottom and
 * the size. Every change replaces {@code ctl} by CAS and bumps the stamp, so a CAS succeeds only if
 * nothing changed since the caller read {@code ctl} (no ABA while fewer than 2^28 changes happen in
 * between).
 * <ul>
 *   <li>{@link #pop} (the submitter's hot path) takes no lock: read {@code ctl}, read the top slot,
 *       CAS the size down. A successful CAS gives the caller exclusive ownership of that worker.</li>
 *   <li>{@link #push}, {@link #removeOldest}, {@link #takeAll} and {@link #ensureLength} are
 *       serialized by {@code lock}. They only ever write slots at or above the top they read, which no
 *       concurrent pop can be reading for a {@code ctl} it will successfully CAS, because only
 *       lock holders make the stack grow.</li>
 *   <li>The removers take from the bottom by moving it up; pops take from the top. Neither moves the
 *       other's end, so a CAS that fails because of the other simply retries.</li>
 * </ul>
 * Because pushes are serialized and stamp {@code lastUsed} under the lock, last-use times never
 * decrease from bottom to top, which is what lets {@link #removeOldest} binary search.
 */
final class IdleStack {
  static final int SIZE_BITS = 18;
  /** The largest supported capacity: the ring length must fit the size and bottom fields. */
  static final int MAX_CAPACITY = 1 << (SIZE_BITS - 1);
  private static final long FIELD = (1L << SIZE_BITS) - 1;
  private static final long STAMP_ONE = 1L << (2 * SIZE_BITS);
  private static final Worker[] NONE = new Worker[0];

  private static final VarHandle CTL;

  static {
    try {
      CTL = MethodHandles.lookup().findVarHandle(IdleStack.class, "ctl", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @SuppressWarnings("unused") // accessed through CTL
  private volatile long ctl;
  private volatile Worker[] slots;
  private final ReentrantLock lock = new ReentrantLock();

  IdleStack(int capacity) {
    slots = new Worker[ringLength(capacity)];
  }

  private static int ringLength(int capacity) {
    return Integer.highestOneBit(Math.max(2, capacity) * 2 - 1);
  }

  private static int size(long c) {
    return (int) (c & FIELD);
  }

  private static int bottom(long c) {
    return (int) ((c >>> SIZE_BITS) & FIELD);
  }

  private static long next(long c, int bottom, int size) {
    return ((c & ~(STAMP_ONE - 1)) + STAMP_ONE) | ((bottom & FIELD) << SIZE_BITS) | size;
  }

  /** Workers on the stack now. */
  int size() {
    return size(ctl);
  }

  /** Takes the most recently pushed worker, or returns null if the stack is empty. Lock-free. */
  Worker pop() {
    for (;;) {
      // ctl before slots: an array read after ctl is either the one ctl describes or a grown
      // copy of it, never an array that a later grow has already abandoned.
      long c = ctl;
      int n = size(c);
      if (n == 0) {
        return null;
      }
      Worker[] a = slots;
      int b = bottom(c);
      Worker w = a[(b + n - 1) & (a.length - 1)];
      if (CTL.compareAndSet(this, c, next(c, b, n - 1))) {
        return w;
      }
    }
  }

  /** Stamps the worker's last-use time and puts it on top. */
  void push(Worker w, Ticker ticker) {
    lock.lock();
    try {
      w.lastUsed = ticker.read();
      for (;;) {
        Worker[] a = slots;
        long c = ctl;
        int b = bottom(c);
        int n = size(c);
        a[(b + n) & (a.length - 1)] = w;
        if (CTL.compareAndSet(this, c, next(c, b, n + 1))) {
          return;
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /** Removes and returns the bottom workers whose last use is at or before {@code cutoff}. */
  Worker[] removeOldest(long cutoff) {
    lock.lock();
    try {
      for (;;) {
        Worker[] a = slots;
        long c = ctl;
        int b = bottom(c);
        int n = size(c);
        int mask = a.length - 1;
        int lo = 0;
        int hi = n; // invariant: [0, lo) stale, [hi, n) fresh
        while (lo < hi) {
          int mid = (lo + hi) >>> 1;
          if (a[(b + mid) & mask].lastUsed <= cutoff) {
            lo = mid + 1;
          } else {
            hi = mid;
          }
        }
        Worker[] out = removeBottom(a, c, lo);
        if (out != null) {
          return out;
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /** Removes and returns up to {@code count} of the oldest workers. */
  Worker[] removeOldestCount(int count) {
    lock.lock();
    try {
      for (;;) {
        Worker[] a = slots;
        long c = ctl;
        Worker[] out = removeBottom(a, c, Math.min(count, size(c)));
        if (out != null) {
          return out;
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /** Removes and returns every worker. */
  Worker[] takeAll() {
    return removeOldestCount(Integer.MAX_VALUE);
  }

  /** Under the lock: removes the bottom k workers by CAS, or returns null if ctl moved. */
  private Worker[] removeBottom(Worker[] a, long c, int k) {
    if (k == 0) {
      return NONE;
    }
    int b = bottom(c);
    int mask = a.length - 1;
    Worker[] out = new Worker[k];
    for (int i = 0; i < k; i++) {
      out[i] = a[(b + i) & mask];
    }
    if (!CTL.compareAndSet(this, c, next(c, b + k, size(c) - k))) {
      return null;
    }
    for (int i = 0; i < k; i++) {
      a[(b + i) & mask] = null; // only pushes write here next, and they hold the lock
    }
    return out;
  }

  /** Last-use time of the bottom (oldest) worker, or {@code Long.MAX_VALUE} if empty. */
  long oldestLastUsed() {
    lock.lock();
    try {
      Worker[] a = slots;
      long c = ctl;
      return size(c) == 0 ? Long.MAX_VALUE : a[bottom(c) & (a.length - 1)].lastUsed;
    } finally {
      lock.unlock();
    }
  }

  /** Grows the ring so that it can hold {@code capacity} workers. */
  void ensureLength(int capacity) {
    lock.lock();
    try {
      Worker[] old = slots;
      int length = ringLength(capacity);
      if (length <= old.length) {
        return;
      }
      // Copy the whole ring: every slot a pop could still read for the current ctl keeps its
      // value at the same position, since positions are taken modulo a divisor of the field range.
      Worker[] grown = new Worker[length];
      for (;;) {
        long c = ctl;
        int b = bottom(c);
        int n = size(c);
        for (int i = 0; i < n; i++) {
          grown[(b + i) & (length - 1)] = old[(b + i) & (old.length - 1)];
        }
        slots = grown;
        // Bump the stamp so that a pop which read the old array and this ctl retries.
        if (CTL.compareAndSet(this, c, next(c, b, n))) {
          return;
        }
      }
    } finally {
      lock.unlock();
    }
  }
}
