package dev.warmpool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The queue of accepted tasks waiting for a worker: a bounded, allocation-free ring that many
 * submitters fill and many workers drain, first in first out.
 *
 * <h2>Why it never overflows</h2>
 * Every entry holds a seat, and seats never exceed the capacity, which never exceeds the ring's
 * length; so a producer never finds the ring full and claims its position with one unconditional
 * fetch-and-add. Each slot carries a sequence number (Vyukov's bounded queue): {@code seq == pos}
 * means free for the producer of position {@code pos}, {@code seq == pos + 1} means published for
 * its consumer. A producer may wait a moment for the consumer of the previous lap to finish reading
 * its slot, never for space.
 *
 * <h2>Publish, then check</h2>
 * The pool's no-lost-wake-up protocol needs a producer's publication to be visible before it reads
 * the spinner count, and a spinner's count change before it re-reads the queue. So the publishing
 * write and the consumers' reads are volatile.
 *
 * <h2>Growing</h2>
 * A resize above the ring's length installs a longer ring, then closes the old one by setting a high
 * bit on its tail in one fetch-and-add: producers that claimed a position before that bit publish
 * there as usual, later ones see the bit and move to the new ring. The resizer then moves what the
 * old ring still holds into the new one (waiting for in-flight producers), so nothing is stranded.
 * Tasks moved this way may run after some that were queued later; FIFO holds otherwise.
 */
final class RunQueue {
  private static final long CLOSED = 1L << 62;
  private static final VarHandle SEQ = MethodHandles.arrayElementVarHandle(long[].class);

  private volatile Ring ring;

  RunQueue(int capacity) {
    ring = new Ring(lengthFor(capacity));
  }

  static int lengthFor(int capacity) {
    return Integer.highestOneBit(Math.max(2, capacity) * 2 - 1);
  }

  /** Appends a task; the caller holds a seat for it. */
  void offer(TaskKind kind, Object arg) {
    Ring r = ring;
    while (!r.offer(kind, arg)) {
      r = ring; // closed by a grow, which installed the new ring first
    }
  }

  /** Moves the head task into {@code out}; false if none is published now. */
  boolean poll(TaskSlot out) {
    Ring r = ring;
    for (;;) {
      if (r.poll(out)) {
        return true;
      }
      Ring now = ring;
      if (now == r) {
        return false;
      }
      r = now;
    }
  }

  /** Tasks queued or being published now; 0 means a consumer would find nothing. */
  int size() {
    return ring.size();
  }

  boolean isEmpty() {
    return ring.size() == 0;
  }

  /** Makes room for {@code capacity} entries; called under the pool's resize lock. */
  void ensureCapacity(int capacity) {
    Ring old = ring;
    if (old.slots() >= capacity) {
      return;
    }
    Ring fresh = new Ring(lengthFor(capacity));
    ring = fresh;
    long end = (long) Ring.TAIL.getAndAdd(old, CLOSED);
    TaskSlot moving = new TaskSlot();
    while (old.head < end) {
      if (old.poll(moving)) {
        fresh.offer(moving.kind, moving.arg);
        moving.clear();
      } else {
        Thread.onSpinWait(); // a producer between its claim and its publish, or a worker's poll
      }
    }
  }

  /** Head and tail padded apart so that producers and consumers do not share a cache line. */
  abstract static class HeadPad {
    long p00, p01, p02, p03, p04, p05, p06, p07;
  }

  abstract static class Head extends HeadPad {
    volatile long head;
  }

  abstract static class TailPad extends Head {
    long p10, p11, p12, p13, p14, p15, p16, p17;
  }

  abstract static class Tail extends TailPad {
    volatile long tail;
  }

  static final class Ring extends Tail {
    static final VarHandle HEAD;
    static final VarHandle TAIL;

    static {
      try {
        MethodHandles.Lookup l = MethodHandles.lookup();
        HEAD = l.findVarHandle(Head.class, "head", long.class);
        TAIL = l.findVarHandle(Tail.class, "tail", long.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    long p20, p21, p22, p23, p24, p25, p26, p27;
    private final int mask;
    private final long[] seq;
    private final TaskKind[] kinds;
    private final Object[] args;

    Ring(int length) {
      mask = length - 1;
      seq = new long[length];
      for (int i = 0; i < length; i++) {
        seq[i] = i;
      }
      kinds = new TaskKind[length];
      args = new Object[length];
    }

    int slots() {
      return mask + 1;
    }

    /** Publishes at the next position; false if this ring was closed by a grow. */
    boolean offer(TaskKind kind, Object arg) {
      long t = (long) TAIL.getAndAdd(this, 1L);
      if ((t & CLOSED) != 0) {
        return false;
      }
      int i = (int) t & mask;
      while ((long) SEQ.getAcquire(seq, i) != t) {
        Thread.onSpinWait(); // the previous lap's consumer is still reading this slot
      }
      kinds[i] = kind;
      args[i] = arg;
      SEQ.setVolatile(seq, i, t + 1);
      return true;
    }

    boolean poll(TaskSlot out) {
      for (;;) {
        long h = head;
        int i = (int) h & mask;
        long d = (long) SEQ.getVolatile(seq, i) - (h + 1);
        if (d == 0) {
          if (HEAD.compareAndSet(this, h, h + 1)) {
            out.kind = kinds[i];
            out.arg = args[i];
            kinds[i] = null;
            args[i] = null;
            SEQ.setRelease(seq, i, h + mask + 1);
            return true;
          }
        } else if (d < 0) {
          return false; // empty, or the producer of this position has not published yet
        }
        // d > 0: another consumer took position h; read the head again
      }
    }

    int size() {
      long h = head;
      long n = (tail & ~CLOSED) - h;
      return n <= 0 ? 0 : (int) Math.min(n, Integer.MAX_VALUE);
    }
  }
}
