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
 * <p>The line is the slow path, so it is guarded by one lock, which makes every state change atomic
 * with the line's change. {@link #size()} is a volatile read so that workers and submitters can
 * check for waiters without taking the lock.
 *
 * <p>Each entry is a {@link TaskEnvelope}; the line moves it only by the envelope's transitions
 * that happen under the line's lock (WAITING to QUEUED, CANCELLED or CLOSED), so every state change
 * is atomic with the line's change.
 *
 * <h2>The ring</h2>
 * Entries sit in an array ring in line order (issue 33: an entry costs its envelope and one
 * reference, 36 bytes, against 56 for the envelope with links it replaced). A seat takes the entry
 * at the head, at the tail (LIFO) or the oldest pinned one, and its slot is cleared. A withdrawal
 * (cancel, expiry, a caller woken by shutdown) is O(1): it only moves the entry's state, and its
 * slot goes <em>stale</em> in place. A slot is live exactly while its entry is WAITING, so the entry
 * must never be WAITING again while its stale slot remains: a withdrawn entry is kept from reuse
 * ({@link TaskEnvelope#keepFromReuse}; only a serial lane reuses its entry), and gives up its task
 * (its {@code arg}), so that a stale slot keeps 32 bytes reachable, never the task and what it
 * captured (review r17, F2). A taker drops the stale slots it meets at the end it takes from
 * (lazily: it reads the entry it takes, never the one behind it); the ring is rebuilt without them
 * when it is full or they outnumber the live ones (amortized O(1) per withdrawal), cleared when the
 * line empties, given back after a burst, and shrunk when a burst's line stays short without ever
 * emptying (review r17, F1).
 *
 * <h2>Standing, and adaptive LIFO</h2>
 * A line made with a standing interval ({@code controlledDelay} or {@code adaptiveLifo}) keeps
 * time: it is <em>standing</em> when it has not once been empty during the last interval, where
 * empty means <em>the pool caught up</em>: a seat came free and found no entry to serve
 * ({@link #caughtUp}), and the line shed nothing during the last {@link #quietNanos} (the
 * controlled-delay target). A line that finishing workers drain to nothing, each taking an entry,
 * has not emptied in that sense: no seat went idle, the overload goes on, and the entry that joins
 * next joins a line that still stands (as CoDel judges by a dequeue that finds the queue empty, not
 * by the instant the last packet leaves). Nor has a line that emptied because it shed its entries
 * (a pause of every thread, a GC's, leaves the whole line overdue at once; the seats then find it
 * empty while the overload goes on). Without this, such an instant would let the entries of the
 * next whole interval wait up to the interval again. One
 * timestamp tracks standing, {@link #emptySince}: the time an entry joined the line after the
 * pool caught up. It is written only under the lock and only when an entry links into an empty
 * line, so a pool whose line never forms pays nothing, and a line without a standing interval
 * never reads the clock. Each entry records, as it links, when it joined and from when
 * the line stands if the entry is still in it ({@link Stamp#standsFrom}): while the entry is
 * in the line the line is not empty, so that instant cannot move until the entry leaves, which is
 * what lets {@link Admission} fix an entry's controlled-delay bound when it joins.
 *
 * <p>With {@code lifo}, while the line stands a freed seat goes to the newest entry ({@link #next});
 * FIFO otherwise. LIFO reorders only entries that a deadline can shed; work that can never be shed
 * ({@link Stamp#pinned}: admitted units, callers and tasks without a line deadline, a lane
 * admitted while its entry waits) is not starved: it is never served newest first, and once the
 * oldest such entry has waited a whole standing interval, it goes first, wherever it waits.
 */
final class WaitingLine {
  /**
   * What a line that keeps time records of an entry as it links ({@link TaskEnvelope#stamp()}): a
   * side object, so entries of lines that keep no time, most lines, do without it. Accessed under
   * the line's lock, and by the thread that linked the entry. A serial lane's reused entry reuses
   * its stamp.
   */
  static final class Stamp {
    /** When the entry joined ({@link System#nanoTime()}). */
    long joined;
    /** From when the line stands if the entry is still in it. */
    long standsFrom;
    /**
     * No deadline can take it out of the line (admitted work, a caller or task that joined
     * without a line deadline, a lane admitted while its entry waits): it leaves only by being
     * served or withdrawn, so adaptive LIFO must not starve it.
     */
    boolean pinned;
    /**
     * Its position in the ring of the line it joined, while it waits there: set as it links, moved
     * by every rebuild of a line that keeps time, so that {@link #pin} finds it in O(1).
     */
    int at;
  }

  /** The outcome of {@link #offer}. */
  enum Offer {
    LINKED,
    FULL,
    REFUSED
  }

  /** A ring not yet made, or given back after a burst: the first entry makes one. */
  private static final TaskEnvelope[] NO_RING = new TaskEnvelope[0];
  /** The smallest ring made (a power of two). */
  private static final int MIN_RING = 16;
  /** A ring longer than this is given back when the line empties (a burst's ring, 4 KB+). */
  private static final int KEEP_RING = 1024;

  private final ReentrantLock lock = new ReentrantLock();
  /**
   * Accessed only under lock: the entries in line order, at positions {@link #head} (the oldest) to
   * {@link #tail} (exclusive), in the slot {@code position & (ring.length - 1)}. Positions are ints
   * that may wrap; only their differences are compared.
   */
  private TaskEnvelope[] ring = NO_RING;
  /**
   * Accessed only under lock: the position of the oldest slot in use. Its slot holds the oldest
   * entry unless stale slots (withdrawn entries, {@link #dead}) lie before it: a taker drops them
   * ({@link #liveHead}).
   */
  private int head;
  /** Accessed only under lock: the position after the newest slot in use (as {@link #head}). */
  private int tail;
  /** Accessed only under lock: dead slots (cleared or stale) between head and tail. */
  private int dead;
  private volatile int size;
  /** Accessed only under lock: set by shutdown; only admitted work may still join. */
  private boolean closed;
  /** Accessed only under lock: set when the pool terminates; nothing may join. */
  private boolean terminated;
  /** How long the line must stay non-empty to stand, in nanos; 0: it keeps no time. */
  private final long standingNanos;
  /** Whether a standing line serves its newest entry first. */
  private final boolean lifo;
  /**
   * Accessed only under lock: when the line was last empty ({@link System#nanoTime()}), written as
   * an entry joins an empty line; read only while the line is not empty. Unused without
   * {@link #standingNanos}.
   */
  private long emptySince;
  /**
   * Whether a seat came free and found this line empty since {@link #emptySince} was last
   * written: the pool caught up. Written without the lock by whoever frees the seat (and only
   * when it is clear, so a pool whose line never forms keeps reading it, never writing it); read
   * and cleared under the lock as an entry joins an empty line. A racing write may reach the next
   * line that forms rather than this one: that only moves when the line counts as emptied.
   */
  private volatile boolean caughtUp = true;
  /** An empty line counts only if it shed nothing for this long (nanos); see the class notes. */
  private final long quietNanos;
  /** Accessed only under lock: when the line last shed an entry ({@link #expire}). */
  private long lastShed;
  /**
   * Accessed only under lock, and only by a LIFO line: the oldest pinned entry in line, or null,
   * and its position. It moves forward only when that entry leaves (to the next pinned one behind
   * it), so the stretches it passes over are disjoint: O(1) per entry over the line's life; it
   * moves back only when an entry ahead of it is pinned while it waits ({@link #pin}), once per
   * entry.
   */
  private TaskEnvelope oldestPinned;
  private int oldestPinnedAt;

  /** A FIFO line that keeps no time. */
  WaitingLine() {
    this(0L, false);
  }

  /**
   * A line that stands after {@code standingNanos} (> 0) without once being empty, and then, if
   * {@code lifo}, serves its newest entry first; {@code standingNanos == 0} keeps no time (FIFO).
   */
  WaitingLine(long standingNanos, boolean lifo) {
    this(standingNanos, lifo, standingNanos / 20);
  }

  /**
   * As above; an emptied line restarts the standing interval only if it shed nothing during the
   * last {@code quietNanos} (the controlled-delay target).
   */
  WaitingLine(long standingNanos, boolean lifo, long quietNanos) {
    this.standingNanos = standingNanos;
    this.lifo = lifo && standingNanos > 0;
    this.quietNanos = quietNanos;
    this.lastShed = standingNanos > 0 ? System.nanoTime() - quietNanos : 0L; // as if long ago
  }

  int size() {
    return size;
  }

  /** The entry that has waited longest, or null if the line is empty (for diagnostics and tests). */
  TaskEnvelope oldest() {
    lock.lock();
    try {
      return size == 0 ? null : at(liveHead());
    } finally {
      lock.unlock();
    }
  }

  /**
   * A seat came free and found the line empty: the pool caught up, so the next line that forms
   * starts to stand only after a whole interval.
   */
  void seatFoundNoEntry() {
    if (standingNanos > 0 && !caughtUp) {
      caughtUp = true;
    }
  }

  /** A free seat looked at this line after serving what it could: the pool caught up if it is empty. */
  void seatLookedIn() {
    if (size == 0) {
      seatFoundNoEntry();
    }
  }

  /**
   * Appends the entry unless the line holds {@code bound} entries already or is closed to it
   * (closed lines take only admitted work, terminated lines nothing). {@code sheddable}: a deadline
   * will be armed for it (after it links, so the line is told here, not by its timer).
   */
  Offer offer(TaskEnvelope e, int bound, boolean admitted, boolean sheddable) {
    lock.lock();
    try {
      if (terminated || (closed && !admitted)) {
        return Offer.REFUSED;
      }
      if (size >= bound) {
        return Offer.FULL;
      }
      link(e, !sheddable);
      return Offer.LINKED;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Takes the entry a freed seat goes to (now QUEUED: it holds a seat), or returns null: the head,
   * or the newest while a LIFO line stands ({@link #next}).
   */
  TaskEnvelope poll() {
    lock.lock();
    try {
      if (size == 0) {
        return null;
      }
      TaskEnvelope e = take(nextAt());
      e.state = TaskEnvelope.QUEUED;
      return e;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Takes the next entry for a sibling shard that has a seat for it: like {@link #poll}, with its
   * owner set to {@code taker} before it leaves WAITING (which publishes the owner).
   */
  TaskEnvelope pollFor(TaskEnvelope.Owner taker) {
    lock.lock();
    try {
      if (size == 0) {
        return null;
      }
      TaskEnvelope e = take(nextAt());
      e.owner = taker;
      e.state = TaskEnvelope.QUEUED;
      return e;
    } finally {
      lock.unlock();
    }
  }

  /**
   * The deadline timer ({@link Admission.Expiry}) of the entry {@link #poll} would take now, if it
   * is due at {@code now}: the entry stays in line, WAITING, for the caller to expire it (a seat
   * goes to the next entry instead). Null if the line is empty or that entry is not due.
   */
  Admission.Expiry overdue(long now) {
    lock.lock();
    try {
      // the expiry read here, under the lock: a cancel, a hand-back or a sibling's take may clear
      // the entry's field as soon as the lock is released
      if (size == 0) {
        return null;
      }
      return at(nextAt()).expiry() instanceof Admission.Expiry x && now - x.at >= 0 ? x : null;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Under lock, the line not empty: the position of the entry a freed seat goes to. FIFO, except
   * that a LIFO line that stands serves its newest entry. LIFO reorders only work that a deadline
   * can shed: pinned work can leave only by being served (guarantee 4), so it must not be starved.
   * Hence the newest goes first only if it can be shed (a lane that yields its seat and rejoins as
   * admitted work must not barge straight back in), and the oldest pinned entry goes first,
   * wherever it waits, once it has waited a whole standing interval.
   */
  private int nextAt() {
    if (!lifo || size == 1) {
      return liveHead(); // FIFO, or a line of one
    }
    long now = System.nanoTime();
    if (now - emptySince < standingNanos) {
      return liveHead(); // not standing
    }
    TaskEnvelope p = oldestPinned;
    if (p != null && now - p.stamp().joined >= standingNanos) {
      // Pinned work behind sheddable entries is not starved by newer ones: checked before the
      // newest entry's own pin, or a pinned newcomer would send it behind every entry LIFO
      // passed over while it waited (review r7, F2).
      return oldestPinnedAt;
    }
    int newest = liveTail();
    return at(newest).stamp().pinned ? liveHead() : newest; // one that cannot be shed waits its turn
  }

  /**
   * Pins an entry that is in this line (a lane admitted while its entry waits: its timer can no
   * longer shed it); false if it is not waiting (in a line that keeps time: not linked here). The
   * oldest-pinned pointer moves back to it if it waits ahead of the pointer. O(1): the entry's
   * stamp knows its place (review r17 saw the scan this replaced).
   */
  boolean pin(TaskEnvelope e) {
    lock.lock();
    try {
      if (e.state != TaskEnvelope.WAITING) {
        return false;
      }
      if (standingNanos == 0) {
        return true; // a line that keeps no time has no use for pins
      }
      Stamp st = e.stamp();
      int offset = st == null ? -1 : st.at - head;
      if (offset < 0 || offset >= tail - head || at(st.at) != e) {
        return false; // not (or no longer) linked here: nothing to pin
      }
      if (!st.pinned) {
        st.pinned = true;
        if (lifo && (oldestPinned == null || offset < oldestPinnedAt - head)) {
          oldestPinned = e;
          oldestPinnedAt = head + offset;
        }
      }
      return true;
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
      e.state = TaskEnvelope.CANCELLED;
      withdrawn(e);
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
      if (e.state != TaskEnvelope.WAITING || e.expiry() != deadline
          || !e.kind.expiring(e.arg, tasks)) {
        return false;
      }
      if (standingNanos > 0) {
        lastShed = System.nanoTime();
      }
      count.run();
      e.state = TaskEnvelope.EXPIRED;
      withdrawn(e);
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
      for (int p = head; p != tail; p++) {
        TaskEnvelope e = at(p);
        if (isLive(e) && e.caller() != null) {
          e.state = TaskEnvelope.CLOSED;
          e.keepFromReuse(); // its slot may stay stale (see the class notes)
          e.arg = null; // nor keep its task reachable: its caller has it
          callers.add(e);
          dead++;
          left(e, p);
        }
      }
      settle();
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
      for (int p = head; p != tail; p++) {
        TaskEnvelope e = at(p);
        if (isLive(e)) {
          e.state = e.caller() != null ? TaskEnvelope.CLOSED : TaskEnvelope.HANDED_BACK;
          all.add(e);
        }
      }
      ring = NO_RING;
      head = tail = dead = 0;
      oldestPinned = null;
      size = 0;
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
      caughtUp = true; // a rebooted pool starts with free seats
      reopen.run();
    } finally {
      lock.unlock();
    }
  }

  private void link(TaskEnvelope e, boolean pinned) {
    int length = ring.length;
    if (tail - head == length) {
      // Full (or not made yet): rebuilt without its dead slots, twice as long unless they were
      // half of it or more.
      rebuild(length == 0 ? MIN_RING : dead >= length / 2 ? length : 2 * length);
    }
    int p = tail;
    if (standingNanos > 0) {
      long now = System.nanoTime();
      if (size == 0 && caughtUp && now - lastShed >= quietNanos) {
        caughtUp = false;
        emptySince = now; // the pool caught up, and its line was empty until this instant
      }
      Stamp st = e.stamp();
      if (st == null) {
        st = new Stamp();
        e.stamp(st);
      }
      st.joined = now;
      st.standsFrom = emptySince + standingNanos;
      st.pinned = pinned;
      st.at = p;
      if (lifo && pinned && oldestPinned == null) {
        oldestPinned = e;
        oldestPinnedAt = p;
      }
    }
    ring[p & (ring.length - 1)] = e;
    tail = p + 1;
    size++;
  }

  /** Under lock: the entry at position {@code p}, or null (a cleared slot). */
  private TaskEnvelope at(int p) {
    return ring[p & (ring.length - 1)];
  }

  /** Whether a slot's entry is in line: a slot is live exactly while its entry is WAITING. */
  private static boolean isLive(TaskEnvelope x) {
    return x != null && x.state == TaskEnvelope.WAITING;
  }

  /**
   * Under lock, the line not empty: the position of the oldest entry, past dead slots at the head
   * (dropped here, lazily: a taker reads the entry it takes anyway, not the one behind it).
   */
  private int liveHead() {
    if (dead == 0) {
      return head; // nothing withdrawn: every slot is live (and its entry is not read here)
    }
    TaskEnvelope[] r = ring;
    int mask = r.length - 1;
    for (; !isLive(r[head & mask]); head++) {
      r[head & mask] = null;
      dead--;
    }
    return head;
  }

  /** Under lock, the line not empty: the position of the newest entry, as {@link #liveHead}. */
  private int liveTail() {
    if (dead == 0) {
      return tail - 1;
    }
    TaskEnvelope[] r = ring;
    int mask = r.length - 1;
    for (; !isLive(r[(tail - 1) & mask]); tail--) {
      r[(tail - 1) & mask] = null;
      dead--;
    }
    return tail - 1;
  }

  /** Under lock: takes the live entry at position {@code p} out of the line (its slot cleared). */
  private TaskEnvelope take(int p) {
    TaskEnvelope e = at(p);
    ring[p & (ring.length - 1)] = null;
    left(e, p); // before the ends move: it looks behind p, up to the tail
    if (p == head) {
      head++; // no dead slot: the common case, FIFO
    } else if (p == tail - 1) {
      tail--; // LIFO's
    } else {
      dead++; // the oldest pinned entry, from the middle
    }
    settle();
    return e;
  }

  /**
   * Under lock: {@code e}, which was WAITING in this line, left it by a withdrawal (its state
   * moved): its slot goes stale in place, so it must never be WAITING again (see the class notes).
   */
  private void withdrawn(TaskEnvelope e) {
    e.keepFromReuse();
    e.arg = null; // its stale slot must not keep the task reachable (review r17, F2)
    dead++;
    // Its position matters only to the oldest-pinned pointer, which knows it.
    left(e, oldestPinned == e ? oldestPinnedAt : head);
    settle();
  }

  /**
   * Under lock: the entry at position {@code p} left the line: the count moves, and the
   * oldest-pinned pointer moves on past it to the next pinned entry. Positions stay as they are
   * until {@link #settle}.
   */
  private void left(TaskEnvelope e, int p) {
    size--;
    if (e == oldestPinned) {
      oldestPinned = null;
      for (int q = p + 1; q != tail; q++) {
        TaskEnvelope x = at(q);
        if (isLive(x) && x.stamp().pinned) {
          oldestPinned = x;
          oldestPinnedAt = q;
          break;
        }
      }
    }
  }

  /**
   * Under lock, after entries left: clears the ring once the line is empty (a burst's ring given
   * back); shrinks a burst's ring (over {@link #KEEP_RING}) to between 4 and 8 slots per entry
   * once its line holds fewer than one entry per 8 slots, though the line never empties (review
   * r17, F1); or rebuilds it once its dead slots outnumber its live entries. Each follows at least
   * a fixed share as many departures as it visits slots: amortized O(1).
   */
  private void settle() {
    int n = size;
    int length = ring.length;
    if (length > KEEP_RING && n != 0 && n < length >>> 3) {
      int shrunk = MIN_RING;
      while (shrunk < 4 * n) {
        shrunk <<= 1;
      }
      rebuild(shrunk);
    } else if (n == 0) {
      if (ring.length > KEEP_RING) {
        ring = NO_RING;
      } else {
        for (int q = head; q != tail; q++) {
          ring[q & (ring.length - 1)] = null; // what stale slots still hold
        }
      }
      head = tail = dead = 0;
    } else if (dead > n + MIN_RING) {
      rebuild(ring.length);
    }
  }

  /** Under lock: copies the live entries, in line order, into a new ring of {@code length}. */
  private void rebuild(int length) {
    TaskEnvelope[] old = ring;
    TaskEnvelope[] r = new TaskEnvelope[length];
    if (dead == 0 && standingNanos == 0) {
      // A ring that grows: every slot is live, copied without reading the entries (a line that
      // keeps time moves each entry's recorded place below).
      int from = head & (old.length - 1);
      int n = tail - head;
      int first = Math.min(n, old.length - from);
      System.arraycopy(old, from, r, 0, first);
      System.arraycopy(old, 0, r, first, n - first);
      ring = r; // (no pins either: only a line that keeps time has them)
      head = 0;
      tail = n;
      return;
    }
    int n = 0;
    for (int p = head; p != tail; p++) {
      TaskEnvelope x = old[p & (old.length - 1)];
      if (isLive(x)) {
        if (x == oldestPinned) {
          oldestPinnedAt = n;
        }
        if (standingNanos > 0) {
          x.stamp().at = n;
        }
        r[n++] = x;
      }
    }
    ring = r;
    head = 0;
    tail = n;
    dead = 0;
  }
}
