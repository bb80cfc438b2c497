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
   * What a line that keeps time records of an entry as it links ({@link TaskEnvelope#stamp}): a
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
  }

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
   * Accessed only under lock, and only by a LIFO line: the oldest pinned entry in line, or null.
   * It moves forward only when that entry leaves (to the next pinned one behind it), so the
   * stretches it passes over are disjoint: O(1) per entry over the line's life; it moves back only
   * when an entry ahead of it is pinned while it waits ({@link #pin}), once per entry.
   */
  private TaskEnvelope oldestPinned;

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
      TaskEnvelope e = next();
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
   * Takes the next entry for a sibling shard that has a seat for it: like {@link #poll}, with its
   * owner set to {@code taker} before it leaves WAITING (which publishes the owner).
   */
  TaskEnvelope pollFor(TaskEnvelope.Owner taker) {
    lock.lock();
    try {
      TaskEnvelope e = next();
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
      TaskEnvelope e = next();
      return e != null && e.expiry instanceof Admission.Expiry x && now - x.at >= 0 ? x : null;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Under lock: the entry a freed seat goes to. FIFO, except that a LIFO line that stands serves
   * its newest entry. LIFO reorders only work that a deadline can shed: pinned work can leave only
   * by being served (guarantee 4), so it must not be starved. Hence the newest goes first only if
   * it can be shed (a lane that yields its seat and rejoins as admitted work must not barge straight
   * back in), and the oldest pinned entry goes first, wherever it waits, once it has waited a whole
   * standing interval.
   */
  private TaskEnvelope next() {
    TaskEnvelope h = head;
    TaskEnvelope t = tail;
    if (!lifo || h == t) {
      return h; // FIFO, an empty line, or a line of one
    }
    long now = System.nanoTime();
    if (now - emptySince < standingNanos) {
      return h; // not standing
    }
    TaskEnvelope p = oldestPinned;
    if (p != null && now - p.stamp.joined >= standingNanos) {
      // Pinned work behind sheddable entries is not starved by newer ones: checked before the
      // newest entry's own pin, or a pinned newcomer would send it behind every entry LIFO
      // passed over while it waited (review r7, F2).
      return p;
    }
    return t.stamp.pinned ? h : t; // a newest entry that cannot be shed does not barge in
  }

  /**
   * Pins an entry that is in this line (a lane admitted while its entry waits: its timer can no
   * longer shed it); false if it is not linked here. The oldest-pinned pointer moves back to it if
   * it waits ahead of the pointer.
   */
  boolean pin(TaskEnvelope e) {
    lock.lock();
    try {
      if (e.state != TaskEnvelope.WAITING || (head != e && e.prev == null)) {
        return false; // not (or no longer) linked: nothing to pin
      }
      Stamp st = e.stamp;
      if (standingNanos > 0 && !st.pinned) { // a line that keeps no time has no use for pins
        st.pinned = true;
        if (lifo) {
          TaskEnvelope p = oldestPinned;
          if (p == null || isAhead(e, p)) {
            oldestPinned = e;
          }
        }
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** Under lock, both linked: whether {@code a} waits ahead of {@code b}. */
  private static boolean isAhead(TaskEnvelope a, TaskEnvelope b) {
    for (TaskEnvelope x = a.next; x != null; x = x.next) {
      if (x == b) {
        return true;
      }
    }
    return false;
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
      if (standingNanos > 0) {
        lastShed = System.nanoTime();
      }
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
      caughtUp = true; // a rebooted pool starts with free seats
      reopen.run();
    } finally {
      lock.unlock();
    }
  }

  private void link(TaskEnvelope e, boolean pinned) {
    if (standingNanos > 0) {
      long now = System.nanoTime();
      if (head == null && caughtUp && now - lastShed >= quietNanos) {
        caughtUp = false;
        emptySince = now; // the pool caught up, and its line was empty until this instant
      }
      Stamp st = e.stamp;
      if (st == null) {
        e.stamp = st = new Stamp();
      }
      st.joined = now;
      st.standsFrom = emptySince + standingNanos;
      st.pinned = pinned;
      if (lifo && pinned && oldestPinned == null) {
        oldestPinned = e;
      }
    }
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
    if (e == oldestPinned) {
      TaskEnvelope a = n;
      while (a != null && !a.stamp.pinned) {
        a = a.next;
      }
      oldestPinned = a;
    }
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
