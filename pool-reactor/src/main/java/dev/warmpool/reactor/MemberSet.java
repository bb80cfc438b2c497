package dev.warmpool.reactor;

/**
 * A small identity set under its own lock, for the tasks of one Reactor worker (the same structure
 * as core's lane timers, which this module cannot see): the first member takes a plain field, more
 * members an open-addressing table, and an empty set holds no table. A worker holding one task
 * costs nothing beyond the worker's three fields, where a {@code ConcurrentHashMap} set costs about
 * 200 bytes from the start. A worker is used by one thread at a time (Reactor's rule), and its
 * tasks leave it from the pool's threads: the lock is rarely contended. Subclasses are the owners
 * themselves (no separate object); nothing else of this module locks them.
 *
 * <p>Every operation holds the lock, so {@link #snapshot} sees each member added before it and
 * none removed before it: an owner that publishes a closed state, then snapshots, and an adder that
 * adds, then reads the state, never miss each other (publish, then check).
 */
abstract class MemberSet {
  /** The one member while {@link #table} is null; else null. */
  private Object one;
  /** Open addressing, linear probing, a power of two at most half full; null while size <= 1. */
  private Object[] table;
  private int size;

  /** Adds {@code m} (identity); false if it was a member already. */
  final synchronized boolean addMember(Object m) {
    Object[] t = table;
    if (t == null) {
      if (one == null) {
        one = m;
        size = 1;
        return true;
      }
      if (one == m) {
        return false;
      }
      t = table = new Object[4];
      insert(t, one);
      one = null;
    } else if ((size + 1) * 2 > t.length) {
      Object[] bigger = new Object[t.length * 2];
      for (Object e : t) {
        if (e != null) {
          insert(bigger, e);
        }
      }
      t = table = bigger;
    }
    if (!insert(t, m)) {
      return false;
    }
    size++;
    return true;
  }

  /** Removes {@code m} (identity); false if it was not a member. */
  final synchronized boolean removeMember(Object m) {
    Object[] t = table;
    if (t == null) {
      if (one != m || m == null) {
        return false;
      }
      one = null;
      size = 0;
      return true;
    }
    int mask = t.length - 1;
    int i = slot(m, mask);
    for (Object e; (e = t[i]) != m; i = (i + 1) & mask) {
      if (e == null) {
        return false;
      }
    }
    t[i] = null;
    // Backward shift: move up each later entry of the run whose home slot is not in (i, j].
    for (int j = (i + 1) & mask; t[j] != null; j = (j + 1) & mask) {
      int home = slot(t[j], mask);
      if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
        t[i] = t[j];
        t[j] = null;
        i = j;
      }
    }
    if (--size == 0) {
      table = null; // an emptied owner holds no table
    }
    return true;
  }

  /** The members now, in no order; an empty array if none. */
  final synchronized Object[] snapshot() {
    if (table == null) {
      return one == null ? new Object[0] : new Object[] {one};
    }
    Object[] out = new Object[size];
    int n = 0;
    for (Object e : table) {
      if (e != null) {
        out[n++] = e;
      }
    }
    return out;
  }

  final synchronized int memberCount() {
    return size;
  }

  private static boolean insert(Object[] t, Object m) {
    int mask = t.length - 1;
    for (int i = slot(m, mask); ; i = (i + 1) & mask) {
      Object e = t[i];
      if (e == null) {
        t[i] = m;
        return true;
      }
      if (e == m) {
        return false;
      }
    }
  }

  private static int slot(Object m, int mask) {
    int h = System.identityHashCode(m);
    return (h ^ (h >>> 16)) & mask;
  }
}
