package dev.warmpool;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Admission of one pool or subpool: its seats ({@link RunState}) and its FIFO waiting line, which
 * calls take a seat, wait, or are rejected. It is the one place that builds and counts a rejection.
 * What happens to a task once it holds a seat is the pool's ({@link Placement}): a pool queues it for
 * its workers, a subpool forwards it to its parent.
 *
 * <h2>Implementation notes</h2>
 * A task is accepted by taking a seat; it gives the seat back when it finishes. When every seat is
 * taken, blocking mode puts work in the line; whoever frees a seat hands it to the head of the line,
 * and new submitters take no seat while the line is not empty, so nobody barges. A joiner links
 * itself and then drains the line (a seat may have been freed between its try and its link); a
 * finisher gives its seat back and then drains: publish, then check, on both sides.
 */
final class Admission implements TaskEnvelope.Owner {

  /** What the pool does with a task that holds one of its seats. */
  interface Placement {
    /**
     * With a seat taken for the task: counts it, then hands it on. Returns false (after giving the
     * seat back) only in {@link Mode#TRY} or a probe, when something further on is full.
     */
    boolean place(TaskKind kind, Object arg, Mode mode);

    /** Like {@link #place} for a task that travels with its envelope (QUEUED). */
    boolean placeEntry(TaskEnvelope e, Mode mode);

    /**
     * A new envelope of this pool: a {@link TaskEnvelope.Full} one if {@code full} or it has a
     * {@code caller} (see {@link Admission#entry}), else a plain one.
     */
    TaskEnvelope newEntry(TaskKind kind, Object arg, Thread caller, int state, boolean full);

    /** A line entry was handed a seat (and its caller woken): send it on to run. */
    void handOff(TaskEnvelope e);

    /** A QUEUED envelope was withdrawn by its handle: what the pool must undo beyond the counts. */
    void withdrawnQueued(TaskEnvelope e);

    /** Tasks running now, for messages. */
    int busy();
  }

  /**
   * A shard's siblings in a sharded pool (guarantee 14): no entry waits in one shard's line while
   * another shard has a free seat. Both sides publish, then check: a joiner links its entry, then
   * looks for a sibling's free seat ({@link #joined}); a shard that gives back a seat with its own
   * line empty releases it, then looks at its siblings' lines ({@link #seatFreed}). Each side then
   * moves entries with {@link #serveFrom}.
   */
  interface Siblings {
    /** {@code shard} gave back a seat and its own line is empty: serve a sibling's waiters. */
    void seatFreed(Admission shard);

    /** An entry joined {@code shard}'s line: a sibling with a free seat takes its waiters. */
    void joined(Admission shard);
  }

  final String name;
  /** {@code pool "x"}, or {@code subpool "y" of pool "x"}: how messages name the pool. */
  final String description;
  final boolean nonblocking;
  final int maxWaiting;
  /** How long an entry may wait in line unless it says otherwise, in nanos; 0: no limit. */
  final long maxWaitInLineNanos;
  /**
   * Controlled delay (blocking mode; 0: off): while the line stands (not once empty for the
   * interval), an entry that waited longer than the target expires. See {@link #delayBound}.
   */
  final long delayTargetNanos;
  /**
   * Whether every envelope of this pool must be able to carry a line deadline or a standing stamp
   * (the pool's line has a deadline, a delay target or a standing interval).
   */
  private final boolean fullEntries;
  final long delayIntervalNanos;
  /** Whether a standing line serves its newest entry first (blocking mode). */
  final boolean adaptiveLifo;
  /** As configured (also in nonblocking mode): what a subpool inherits. */
  final LinePolicy policy;
  volatile int capacity;
  final RunState state = new RunState();
  final WaitingLine line;
  final Accounting accounting;
  /**
   * Whether a seated task may travel as a plain kind and argument (a pool), or always needs an
   * envelope (a subpool's {@link Subpool.Seat}).
   */
  private final boolean plainPlacement;
  /** The parent's admission, for a subpool: its line also counts as waiters. */
  private final Admission parent;
  private final Placement placement;
  /** Told when a seat or a line entry went away while the pool is shut down: it may terminate. */
  private final Runnable mayTerminate;
  /**
   * Holds on termination: expiry callbacks not yet run, and serial-lane dispatches in flight
   * ({@link #hold}); termination waits until there are none (see {@link #unheld}).
   */
  private final AtomicInteger holds = new AtomicInteger();
  /**
   * The sibling shards of a sharded pool's shard, else null (the one cost on an unsharded pool's
   * path: a null check when a seat goes back and when an entry joins the line). Set by the sharded
   * pool's constructor, before the pool is published.
   */
  Siblings siblings;

  Admission(String name, String description, int capacity, boolean nonblocking, int maxWaiting,
      long maxWaitInLineNanos, LinePolicy policy, Accounting accounting, Admission parent,
      boolean plainPlacement, Placement placement, Runnable mayTerminate) {
    this.maxWaitInLineNanos = maxWaitInLineNanos;
    this.policy = policy;
    // Blocking mode only, as line deadlines: a nonblocking pool's line holds admitted work only,
    // which never expires, and which LIFO would only reorder.
    this.delayTargetNanos = nonblocking ? 0L : policy.targetNanos();
    this.delayIntervalNanos = nonblocking ? 0L : policy.intervalNanos();
    this.adaptiveLifo = !nonblocking && policy.lifo();
    long standing = delayTargetNanos > 0 ? delayIntervalNanos
        : adaptiveLifo ? LinePolicy.LIFO_STANDING_NANOS : 0L;
    // An emptied line restarts its interval only after a quiet target (see WaitingLine).
    this.line = delayTargetNanos > 0
        ? new WaitingLine(standing, adaptiveLifo, delayTargetNanos)
        : new WaitingLine(standing, adaptiveLifo);
    this.fullEntries = maxWaitInLineNanos > 0 || delayTargetNanos > 0 || standing > 0;
    this.plainPlacement = plainPlacement;
    this.name = name;
    this.description = description;
    this.capacity = capacity;
    this.nonblocking = nonblocking;
    this.maxWaiting = maxWaiting;
    this.accounting = accounting;
    this.parent = parent;
    this.placement = placement;
    this.mayTerminate = mayTerminate;
  }

  // ---------------------------------------------------------------------------------------------
  // Submission

  /**
   * Proceeds in three steps: if nobody waits in line, take a free seat by CAS; with a seat, place
   * the task; without one, reject (nonblocking, TRY) or wait in line ({@link #whenFull}).
   */
  boolean dispatch(TaskKind kind, Object arg, Mode mode) {
    if (line.size() == 0 && state.tryTakeSeat(capacity, mode == Mode.ADMITTED)) {
      return placement.place(kind, arg, mode);
    }
    return whenFull(kind, arg, mode, null, 0L);
  }

  /**
   * Like {@link #dispatch} in {@link Mode#ENQUEUE} or {@link Mode#ADMITTED}, with a handle; an
   * entry that waits in line may wait {@code maxWaitNanos} (0: the pool's limit, if any).
   */
  TaskEnvelope enqueue(TaskKind kind, Object arg, Mode mode, long maxWaitNanos) {
    TaskEnvelope e = entry(kind, arg, null, TaskEnvelope.QUEUED, maxWaitNanos);
    if (line.size() == 0 && state.tryTakeSeat(capacity, mode == Mode.ADMITTED)) {
      if (parent != null) {
        // A subpool's task with a free seat here may still wait in the parent's line: its
        // deadline travels with it.
        ((Subpool.Seat) e).deadline = deadlineFor(kind, mode, maxWaitNanos);
      }
      placement.placeEntry(e, mode);
    } else {
      e.state = TaskEnvelope.WAITING;
      whenFull(kind, arg, mode, e, maxWaitNanos);
    }
    return e;
  }

  /**
   * Places an envelope of this pool (QUEUED, caller-less), or puts it in line: how a serial lane
   * dispatches its entry. Arms no line deadline (the lane arms its own, {@link #armLineDeadline}).
   *
   * @return true if it took a seat at once, false if it was put in line
   */
  boolean enqueue(TaskEnvelope e, Mode mode) {
    if (line.size() == 0 && state.tryTakeSeat(capacity, mode == Mode.ADMITTED)) {
      placement.placeEntry(e, mode);
      return true;
    }
    e.state = TaskEnvelope.WAITING;
    whenFull(e.kind, e.arg, mode, e, 0L);
    return false;
  }

  /**
   * Places the task if a seat is free now and it may travel without an envelope; false, with
   * nothing done, otherwise. A serial lane dispatches so, and uses its entry only to wait in line.
   */
  boolean tryPlacePlain(TaskKind kind, Object arg, Mode mode) {
    return plainPlacement && line.size() == 0
        && state.tryTakeSeat(capacity, mode == Mode.ADMITTED) && placement.place(kind, arg, mode);
  }

  /** A new caller-less envelope of this pool, QUEUED (a serial lane's entry). */
  TaskEnvelope newEntry(TaskKind kind, Object arg) {
    return placement.newEntry(kind, arg, null, TaskEnvelope.QUEUED, true); // reused, may expire
  }

  /**
   * A new envelope of this pool for a task (or a caller) that may wait in line with
   * {@code maxWaitNanos} (0: the pool's limit; -1: none). Plain (32 bytes) unless it may need what
   * only a {@link TaskEnvelope.Full} one carries: a blocked caller, a line deadline (the pool's or
   * the call's), or a stamp of a line that keeps time (issue 33: memory per task in line).
   */
  private TaskEnvelope entry(TaskKind kind, Object arg, Thread caller, int state,
      long maxWaitNanos) {
    return placement.newEntry(kind, arg, caller, state, fullEntries || maxWaitNanos > 0);
  }

  /**
   * Places the task with its handle if a seat is free now; else null, which is not a rejection (a
   * sharded pool offering a task to each shard in turn).
   */
  TaskHandle tryEnqueue(TaskKind kind, Object arg) {
    if (line.size() == 0 && state.tryTakeSeat(capacity, false)) {
      TaskEnvelope e = entry(kind, arg, null, TaskEnvelope.QUEUED, 0L);
      return placement.placeEntry(e, Mode.PROBE) ? e : null;
    }
    return null;
  }

  /** Like {@link #dispatch} in blocking mode, giving up after {@code nanos}. */
  boolean dispatchTimed(TaskKind kind, Object arg, long nanos) throws InterruptedException {
    if (nonblocking || nanos == 0) {
      return dispatch(kind, arg, Mode.TRY);
    }
    if (line.size() == 0 && state.tryTakeSeat(capacity, false)) {
      return placement.place(kind, arg, Mode.EXECUTE);
    }
    if (!state.isRunning()) {
      throw closed();
    }
    // The pool's line deadline bounds a timed wait too; reaching either answers false.
    long wait = maxWaitInLineNanos > 0 ? Math.min(nanos, maxWaitInLineNanos) : nanos;
    long deadline = System.nanoTime() + Math.min(wait, Long.MAX_VALUE / 4);
    TaskEnvelope e = join(entry(kind, arg, Thread.currentThread(), TaskEnvelope.WAITING, -1L),
        false, -1L);
    if (delayTargetNanos > 0) {
      // Controlled delay bounds a timed wait as the line deadline does: false once it is reached.
      long bound = delayBound(e);
      if (bound - deadline < 0) {
        deadline = bound;
      }
    }
    try {
      return awaitTaken(e, true, deadline);
    } catch (InterruptedWaitException interrupted) {
      throw new InterruptedException("interrupted while waiting for a seat in " + description);
    }
  }

  /** No seat was free (or the line was not empty): reject, or join the line. */
  private boolean whenFull(TaskKind kind, Object arg, Mode mode, TaskEnvelope handle,
      long maxWaitNanos) {
    if (!state.isRunning() && !(mode == Mode.ADMITTED && !state.isTerminated())) {
      throw closed();
    }
    if (mode != Mode.PROBE && mode != Mode.PROBE_EXECUTE && mode != Mode.ADMITTED) {
      // A caller's held tasks hold seats (the engine's "Held tasks"): a task refused for want of
      // one, or about to wait, hands what it holds to idle workers now rather than at the watch.
      Engine.beforeBlocking();
    }
    if (mode == Mode.TRY) {
      accounting.rejected();
      return false;
    }
    if (mode == Mode.PROBE || mode == Mode.PROBE_EXECUTE) {
      return false;
    }
    if (nonblocking && mode != Mode.ADMITTED) {
      throw overloaded();
    }
    if (mode == Mode.EXECUTE) {
      return awaitTaken(join(entry(kind, arg, Thread.currentThread(), TaskEnvelope.WAITING, 0L),
          false, 0L), false, 0L);
    }
    join(handle != null ? handle : entry(kind, arg, null, TaskEnvelope.WAITING, maxWaitNanos),
        mode == Mode.ADMITTED, maxWaitNanos);
    return true;
  }

  /**
   * Puts the entry in line (or throws), arms its line deadline, then drains: a seat may have come
   * free meanwhile. {@code maxWaitNanos}: 0 for the pool's limit, -1 for none (a timed caller that
   * keeps its own time). Admitted work, and a unit that is not itself a task (a lane, a subpool's
   * forwarded task), gets no deadline here: a lane waiting for its first seat arms its own once it
   * has published its entry ({@link #armLineDeadline}); a subpool's forwarded task is admitted.
   */
  private TaskEnvelope join(TaskEnvelope e, boolean admitted, long maxWaitNanos) {
    long limit = maxWaitNanos != 0 ? maxWaitNanos : maxWaitInLineNanos;
    // Admitted work waits without a deadline, unless it brings its own: a subpool's task that
    // holds a seat there carries what is left of its deadline into this, its parent's, line.
    // Controlled delay sheds only what a line deadline could shed here, and never admitted work
    // (nor a timed caller, which keeps its own time: dispatchTimed).
    boolean controlled = delayTargetNanos > 0 && !admitted && maxWaitNanos >= 0;
    boolean armed = (limit > 0 || controlled)
        && (admitted ? maxWaitNanos > 0 : e.kind.countsAsTask());
    // A lane waiting for its first seat arms its own deadline once its entry is published.
    boolean sheddable = armed || (!admitted && !e.kind.countsAsTask() && shedsLine());
    switch (line.offer(e, admitted ? Integer.MAX_VALUE : maxWaiting, admitted, sheddable)) {
      case FULL -> {
        accounting.rejected();
        throw new PoolOverloadedException(name, description + " is full: " + occupancy()
            + " (the waiting line is full)");
      }
      case REFUSED -> throw closed();
      case LINKED -> {
        if (e.caller() == null && e.kind.countsAsTask()) {
          accounting.accepted();
        }
      }
    }
    if (armed) {
      armDeadline(e, limit, controlled);
    }
    drainLine();
    if (siblings != null && line.size() > 0) {
      siblings.joined(this); // publish (linked), then check a sibling's seats
    }
    return e;
  }

  // ---------------------------------------------------------------------------------------------
  // Line deadlines

  /**
   * An entry's line deadline (or controlled-delay bound) on the shared timer: found by the timer,
   * not by the next hand-off (under controlled delay, by the hand-off too: {@link #shedOverdue}).
   */
  final class Expiry extends SharedTimer.Task {
    final TaskEnvelope entry;
    final long joined;
    final long limit;
    /** When it is due ({@link System#nanoTime()}): the hand-off checks it too. */
    final long at;
    /** Whether controlled delay, not the line deadline {@link #limit}, set {@link #at}. */
    final boolean byDelay;

    Expiry(TaskEnvelope entry, long joined, long limit, long at, boolean byDelay) {
      this.entry = entry;
      this.joined = joined;
      this.limit = limit;
      this.at = at;
      this.byDelay = byDelay;
    }

    @Override
    void fire() {
      expire(this);
    }

    /** The rejection its task or caller hears: how long it waited, and why. */
    PoolOverloadedException failure() {
      long waited = System.nanoTime() - joined;
      String why = byDelay
          ? "past the controlled-delay target of "
              + AbstractWorkerPool.formatDuration(Duration.ofNanos(delayTargetNanos))
              + " while the line stood (not once empty for "
              + AbstractWorkerPool.formatDuration(Duration.ofNanos(delayIntervalNanos)) + ")"
          : "past its deadline of " + AbstractWorkerPool.formatDuration(Duration.ofNanos(limit));
      return new PoolOverloadedException(name, description + " is overloaded: the task waited "
          + TimeUnit.NANOSECONDS.toMillis(waited) + " ms in line, " + why + "; " + occupancy());
    }
  }

  /**
   * Arms the deadline of an entry that is in line (publish, then arm: a hand-off before the timer
   * is armed leaves a timer that finds the entry gone). If no timer thread can be started, the
   * entry is taken back out and the call is rejected: a deadline is never silently dropped.
   */
  private void armDeadline(TaskEnvelope e, long limit, boolean controlled) {
    long now = System.nanoTime();
    long at = 0L;
    if (limit > 0) {
      // Only a line deadline is the entry's own, carried on into a parent's line (leftToWait);
      // controlled delay judges each line by its own standing.
      at = now + Math.min(limit, Long.MAX_VALUE / 4);
      if (e instanceof Subpool.Seat seat) {
        seat.deadline = at;
      }
    }
    boolean byDelay = false;
    if (controlled) {
      long bound = delayBound(e);
      if (limit <= 0 || bound - at < 0) {
        at = bound;
        byDelay = true;
      }
    }
    Expiry x = new Expiry(e, now, limit, at, byDelay);
    e.expiry(x);
    try {
      SharedTimer.INSTANCE.schedule(x, at);
      if (e.state != TaskEnvelope.WAITING && e.state != TaskEnvelope.EXPIRED) {
        // Publish (the timer), then check: the entry got a seat (or left) before its timer was
        // set, and whoever took it found no timer to disarm. An armed timer would hold the entry,
        // and through it the pool, until the deadline.
        SharedTimer.INSTANCE.cancel(x);
      }
    } catch (RuntimeException | Error noTimer) {
      if (line.cancel(e)) {
        if (e.caller() == null && e.kind.countsAsTask()) {
          accounting.withdrawn();
        }
        accounting.rejected();
        throw new RejectedExecutionException(description + " could not arm the task's line"
            + " deadline; the task was not accepted", noTimer);
      }
    }
  }

  /**
   * Arms the pool's line deadline, if it has one, on a serial lane's entry that waits in line for
   * the lane's first seat; the lane arms it only after publishing the entry, so that every party
   * that can expire it finds it where the lane keeps it. An entry that left the line meanwhile
   * (publish, then check) takes its timer back out. Throws, with the entry taken back out of the
   * line, if no timer thread can be started.
   */
  void armLineDeadline(TaskEnvelope e) {
    if (shedsLine() && e.state == TaskEnvelope.WAITING) {
      armDeadline(e, maxWaitInLineNanos, delayTargetNanos > 0);
      if (e.state != TaskEnvelope.WAITING) {
        disarm(e);
      }
    }
  }

  /**
   * A serial lane admitted while its entry waits in this shard's line: no deadline can shed the
   * entry any more, so adaptive LIFO must not pass it over ({@link WaitingLine#pin}).
   */
  void pin(TaskEnvelope e) {
    if (e.owner == this) {
      line.pin(e);
    }
  }

  /** Whether entries that may be shed get a timer in this line: a line deadline, or controlled delay. */
  boolean shedsLine() {
    return maxWaitInLineNanos > 0 || delayTargetNanos > 0;
  }

  /**
   * Controlled delay: when an entry in line must leave it, fixed as it joins. It expires once it
   * has waited longer than the target while the line stands; the line stands once it has not been
   * empty for the interval. While the entry is in line the line is not empty, so the instant the
   * line starts to stand ({@link WaitingLine.Stamp#standsFrom}) cannot move before the entry leaves:
   * the bound is the later of the two instants, known at the join, and one timer (a line
   * deadline's) finds it. So an entry that joins a line not standing may wait up to the interval,
   * and one that joins a standing line about the target.
   */
  long delayBound(TaskEnvelope e) {
    WaitingLine.Stamp st = e.stamp();
    long byTarget = st.joined + delayTargetNanos;
    return byTarget - st.standsFrom > 0 ? byTarget : st.standsFrom;
  }

  /**
   * The deadline a task placed with a free seat carries on (for a subpool's task, into its parent's
   * line): as {@link #join} would give it; 0 for none.
   */
  long deadlineFor(TaskKind kind, Mode mode, long maxWaitNanos) {
    long limit;
    if (mode == Mode.ADMITTED) {
      limit = maxWaitNanos; // only what a subpool's task brings along (a nested subpool's)
    } else if (mode == Mode.ENQUEUE && kind.countsAsTask()) {
      limit = maxWaitNanos != 0 ? maxWaitNanos : maxWaitInLineNanos;
    } else {
      // execute and tryExecute return once the task holds a seat here: a later expiry in the
      // parent's line would reach nobody (a plain Runnable has no handle), so they carry none.
      return 0L;
    }
    if (limit <= 0) {
      return 0L;
    }
    long at = System.nanoTime() + Math.min(limit, Long.MAX_VALUE / 4);
    return at != 0L ? at : 1L;
  }

  /**
   * The entry left the line (a seat, a withdrawal, a shutdown, an interrupt): its deadline timer
   * goes now, rather than holding the entry, its task and the pool on the shared timer until the
   * deadline (it would find the entry gone anyway).
   */
  static void disarm(TaskEnvelope e) {
    SharedTimer.Task x = e.expiry();
    if (x != null) {
      e.expiry(null);
      SharedTimer.INSTANCE.cancel(x);
    }
  }

  /**
   * On the timer thread: the entry waited past its deadline. If it is still waiting, it leaves the
   * line unrun (EXPIRED), counts in {@code expired} and leaves {@code submitted}; a blocked caller
   * wakes and throws; a task's future fails or its {@link CancellationAware} hears of it, on a
   * helper thread (no user code on the timer thread). A serial lane not yet admitted expires with
   * each task queued in it: each counts as one expired task and hears of it the same way.
   */
  private boolean expire(Expiry x) {
    TaskEnvelope e = x.entry;
    // Read before the line takes it out: an expired entry gives up its task (its stale slot must
    // not keep it reachable, review r17 F2); read racily, but only a withdrawal clears it, and then
    // the expiry below fails.
    Object arg = e.arg;
    // Held before the entry leaves the line (tryTerminate reads it under the line's lock): the
    // pool does not terminate while whoever waits for this entry has not yet heard of its end.
    holds.incrementAndGet();
    List<Runnable> laneTasks = e.kind.countsAsTask() ? List.of() : new ArrayList<>();
    if (!line.expire(e, x, laneTasks, () -> countExpired(e))) {
      releaseHere(); // a termination that saw our hold meanwhile relies on us to look again
      return false;
    }
    if (e.caller() != null) {
      LockSupport.unpark(e.caller()); // it reads EXPIRED and throws
      releaseHere();
      return true;
    }
    Runnable tell;
    if (e.kind.countsAsTask()) {
      PoolOverloadedException cause = x.failure();
      tell = e.kind.expiredAtOnce(arg, cause) ? () -> e.kind.expired(arg, cause) : null;
    } else if (!laneTasks.isEmpty()) {
      List<Runnable> toTell = new ArrayList<>();
      for (Runnable t : laneTasks) {
        if (TaskKind.RUNNABLE.expiredAtOnce(t, x.failure())) {
          toTell.add(t);
        }
      }
      tell = toTell.isEmpty() ? null : () -> tellExpired(toTell, x);
    } else {
      // A kind that counts what expired with it (a subpool's task, in its subpool).
      PoolOverloadedException cause = x.failure();
      tell = e.kind.expiredAtOnce(arg, cause) ? () -> e.kind.expired(arg, cause) : null;
    }
    if (tell == null) {
      releaseHere();
      return true;
    }
    try {
      ThreadStarter.ASYNC.execute(() -> {
        try {
          tell.run();
        } finally {
          releaseHere();
        }
      });
    } catch (RuntimeException | Error noThread) {
      releaseHere(); // nothing can run the callback; the entry's handle still reads expired
      throw noThread;
    }
    return true;
  }

  /**
   * Controlled delay at the hand-off: the entry a freed seat would go to is expired instead if its
   * bound has passed, and the seat goes on to the next. The timer finds every such entry too, but
   * it may be late by its slack; checking here means no seat ever serves an entry that the rule
   * has already refused. The same path as the timer's ({@link #expire}): the entry ends exactly
   * one way whoever finds it first. Runs no user code (callbacks go to a helper thread).
   */
  private void shedOverdue() {
    Expiry x;
    while ((x = line.overdue(System.nanoTime())) != null) {
      boolean expired;
      try {
        expired = expire(x);
      } catch (RuntimeException | Error noThread) {
        // Expired and counted, but no helper thread could tell its task: as on the timer
        // thread, reported here; the handle reads expired.
        Thread me = Thread.currentThread();
        me.getUncaughtExceptionHandler().uncaughtException(me, noThread);
        expired = true;
      }
      if (!expired) {
        return; // it left meanwhile, or its kind keeps it (a lane admitted meanwhile): poll decides
      }
      SharedTimer.INSTANCE.cancel(x); // not disarm: a woken caller reads how long it waited there
    }
  }

  /**
   * Under the line's lock, before the entry reads EXPIRED (and before a shutdown can see the line
   * empty and terminate): a blocked caller or a task counts as one expired entry. A lane not yet
   * admitted counts each task queued in it as it marks it, and a subpool's task counts in its
   * subpool as it hears of the expiry: each before its own handle can read EXPIRED.
   */
  private void countExpired(TaskEnvelope e) {
    if (e.caller() != null) {
      accounting.expired();
    } else if (e.kind.countsAsTask()) {
      accounting.expired();
      accounting.withdrawn();
    }
  }

  /**
   * Keeps this pool from terminating until {@link #release}: a serial lane takes it before it
   * marks itself dispatched and gives it back once its dispatch has landed (a seat, a line entry)
   * or was refused, so that a task riding along on that dispatch (its caller returned, the lane
   * dispatched) is never outlived by a terminated pool that saw nothing of the lane (review r14).
   * Publish, then check: counted first, then the run state read; a shut-down pool is confirmed
   * not terminated under the line's lock, where termination reads the holds. False, with no hold
   * taken, if this pool is terminated.
   */
  boolean hold() {
    holds.incrementAndGet();
    if (state.isRunning() || line.underLock(() -> !state.isTerminated())) {
      return true;
    }
    // Terminated when we looked; but a reboot and a shutdown since may have seen our count and
    // left termination to us: give it back as release() does (review r15, F2).
    release();
    return false;
  }

  /**
   * Gives back a {@link #hold}; a shut-down pool may terminate now. It is given back on the thread
   * of a call into a lane (any caller's, not only the pool's or a shutdown's): a termination it
   * reaches completes its stage on an executor of the pool's choosing, never here (review r15, F1).
   */
  void release() {
    holds.decrementAndGet();
    if (!state.isRunning()) {
      Lifecycle.endingOffThisThread(mayTerminate);
    }
  }

  /**
   * Gives back a hold where a termination it reaches may complete on this thread: an expiry's
   * notice (given on the timer thread, whose terminations complete off it anyway, or on a helper
   * thread), and the caller of {@code shutdownNow} (one of the threads DESIGN allows).
   */
  void releaseHere() {
    holds.decrementAndGet();
    if (!state.isRunning()) {
      mayTerminate.run();
    }
  }

  /** On a helper thread: each task of an expired lane hears of it; one that throws stops no other. */
  private static void tellExpired(List<Runnable> tasks, Expiry x) {
    for (Runnable t : tasks) {
      try {
        TaskKind.RUNNABLE.expired(t, x.failure());
      } catch (RuntimeException | Error failure) {
        Thread me = Thread.currentThread();
        me.getUncaughtExceptionHandler().uncaughtException(me, failure);
      }
    }
  }

  /**
   * Whether every expired entry's waiter has heard of it and no lane dispatch is in flight; read
   * under the line's lock by termination, so an entry that expires after this read was still in
   * the line then, and a hold taken after it finds the pool terminated.
   */
  boolean unheld() {
    return holds.get() == 0;
  }

  /**
   * Parks the caller until its entry gets a seat, or until {@code deadline} if timed.
   *
   * @return true if taken, false on timeout
   */
  private boolean awaitTaken(TaskEnvelope e, boolean timed, long deadline) {
    Engine.beforeBlocking(); // a worker's held tasks hold seats: they must not wait for ours
    // A busy worker usually finishes a tiny task within a microsecond and takes the entry at once;
    // spinning that long is much cheaper than a park/unpark round trip.
    for (int i = 0; i < Engine.SPINS && e.state == TaskEnvelope.WAITING; i++) {
      Thread.onSpinWait();
    }
    boolean interrupted = false;
    try {
      for (;;) {
        int s = e.state;
        if (s == TaskEnvelope.CLOSED) {
          throw closed();
        }
        if (s == TaskEnvelope.EXPIRED) {
          // Only its own timer expires an entry, and nothing clears that timer from an entry
          // that left the line expired: it is there to say how long the caller waited.
          throw ((Expiry) e.expiry()).failure();
        }
        if (s != TaskEnvelope.WAITING) {
          return true;
        }
        interrupted |= Thread.interrupted();
        if (interrupted && line.cancel(e)) {
          disarm(e);
          accounting.rejected();
          if (timed) {
            interrupted = false; // reported by the InterruptedException instead
            throw new InterruptedWaitException();
          }
          throw new RejectedExecutionException("interrupted while waiting for a seat in "
              + description + "; the task was not accepted", new InterruptedException());
        }
        long left = timed ? deadline - System.nanoTime() : 1L;
        if (left <= 0) {
          if (line.cancel(e)) {
            disarm(e);
            accounting.rejected();
            return false;
          }
          continue;
        }
        ((TaskEnvelope.Full) e).markParked(); // then re-check the state: a taker reads parked after writing state
        if (e.state != TaskEnvelope.WAITING) {
          continue;
        }
        if (timed) {
          LockSupport.parkNanos(this, left);
        } else {
          LockSupport.park(this);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Signals an interrupt of a timed wait through awaitTaken, which cannot throw it directly. */
  private static final class InterruptedWaitException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    InterruptedWaitException() {
      super(null, null, false, false);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Withdrawal, seats and the line

  /** Withdraws a waiting entry through its handle; false if it is no longer waiting. */
  @Override
  public boolean withdraw(TaskEnvelope e) {
    if (!line.cancel(e)) {
      return false;
    }
    disarm(e);
    if (e.kind.countsAsTask()) {
      accounting.withdrawn();
    }
    if (!state.isRunning()) {
      // A shutdown may have been waiting for the line only; a termination reached here, on the
      // canceller's thread, completes off it (review r16, F2).
      Lifecycle.endingOffThisThread(mayTerminate);
    }
    return true;
  }

  /**
   * An entry that held a seat was withdrawn by its handle before a worker reached it. Its seat goes
   * back on the canceller's thread: a termination that reaches completes off it (review r16, F2).
   */
  @Override
  public void withdrawnQueued(TaskEnvelope e) {
    if (e.kind.countsAsTask()) {
      accounting.withdrawn();
    }
    Lifecycle.endingOffThisThread(() -> placement.withdrawnQueued(e));
  }

  /** Whether work waits for a seat, here or (for a subpool) in the parent's line. */
  boolean hasWaiters() {
    return line.size() > 0 || (parent != null && parent.hasWaiters());
  }

  /**
   * Pairs line entries with free seats, oldest first (newest first while a LIFO line stands), and
   * hands them off.
   */
  void drainLine() {
    while (line.size() > 0) {
      if (!state.tryTakeSeat(capacity, true)) { // line entries were accepted: also while shutting down
        return;
      }
      if (delayTargetNanos > 0) {
        shedOverdue();
      }
      TaskEnvelope e = line.poll();
      if (e == null) {
        state.releaseSeat();
        line.seatFoundNoEntry();
        mayTerminate.run();
        continue;
      }
      disarm(e);
      taken(e);
      placement.handOff(e);
    }
  }

  /**
   * A finished task's seat goes straight to the head of the line, if there is one and the seats
   * are within capacity (after a shrink they are not): returns the entry, now holding that seat.
   */
  TaskEnvelope passSeat() {
    if (line.size() > 0 && state.seats() <= capacity) {
      if (delayTargetNanos > 0) {
        shedOverdue();
      }
      TaskEnvelope e = line.poll();
      if (e != null) {
        disarm(e);
        taken(e);
        return e;
      }
    }
    return null;
  }

  /** An entry got a seat: a blocked caller's task now counts as accepted and the caller wakes. */
  private void taken(TaskEnvelope e) {
    if (e.caller() != null) {
      accounting.accepted();
      if (e.parked()) {
        LockSupport.unpark(e.caller());
      }
    }
  }

  /**
   * Gives back one seat and serves the line with it; a shard whose own line is empty serves a
   * sibling's line instead, before its worker goes idle.
   */
  void giveBackSeat() {
    state.releaseSeat();
    if (line.size() > 0) {
      drainLine();
    } else {
      line.seatFoundNoEntry(); // the pool caught up: controlled delay's "empty"
    }
    if (siblings != null && line.size() == 0) {
      siblings.seatFreed(this); // publish (the seat), then check the siblings' lines
    }
    if (!state.isRunning()) {
      mayTerminate.run();
    }
  }

  /** Seats were added (a growing resize): they serve this line first, then a sibling's. */
  void seatsGrew() {
    drainLine();
    line.seatLookedIn();
    if (siblings != null && line.size() == 0) {
      siblings.seatFreed(this);
    }
  }

  /**
   * A sharded pool's shard: if this shard's own line is empty and it has a free seat, the head of
   * {@code from}'s line moves here and runs with that seat (it never takes a seat here while this
   * shard is shut down: entries of a closing shard run where they waited). The entry is counted
   * once: it leaves {@code from}'s counts and enters ours before it is handed on, and its handle
   * then withdraws it from ours. Returns whether one moved.
   */
  boolean serveFrom(Admission from) {
    if (from.line.size() == 0 || line.size() != 0 || !state.tryTakeSeat(capacity, false)) {
      return false;
    }
    TaskEnvelope e = from.moveHeadTo(this);
    if (e == null) {
      // The line emptied meanwhile: the seat goes back, and serves whoever joined since.
      giveBackSeat();
      return false;
    }
    placement.handOff(e);
    return true;
  }

  /**
   * Takes the head of this line for a sibling shard that holds a seat for it; null if the line is
   * empty. Counts move before the entry's caller wakes (count, then signal).
   */
  private TaskEnvelope moveHeadTo(Admission taker) {
    if (delayTargetNanos > 0) {
      shedOverdue(); // a sibling's seat serves no entry its own shard would have shed
    }
    TaskEnvelope e = line.pollFor(taker);
    if (e == null) {
      return null;
    }
    disarm(e);
    if (e.caller() != null) {
      taker.accounting.accepted();
      if (e.parked()) {
        LockSupport.unpark(e.caller());
      }
    } else if (e.kind.countsAsTask()) {
      taker.accounting.accepted(); // first: the sum over the shards never dips
      accounting.withdrawn();
    }
    if (!state.isRunning()) {
      mayTerminate.run(); // a shutdown may have been waiting for this line only
    }
    return e;
  }

  // ---------------------------------------------------------------------------------------------
  // Rejections: each is counted once, here, and names the pool

  PoolOverloadedException overloaded() {
    accounting.rejected();
    return new PoolOverloadedException(name, description + " is full: " + occupancy());
  }

  /**
   * What is full, in the words of {@link PoolStats}: {@code 4 of 4 seats taken (2 running, 2 queued
   * for a worker), line 0 of 0}. A seat is held by a running task and by one queued for a worker, so
   * "running" alone may read below the capacity of a full pool. A snapshot: the parts are read one
   * after another, racing the workers.
   */
  String occupancy() {
    int taken = Math.min(state.seats(), capacity);
    int running = Math.min(placement.busy(), taken);
    return taken + " of " + capacity + " seats taken (" + running + " running, " + (taken - running)
        + " queued for a worker), line " + line.size() + " of " + (nonblocking ? 0 : maxWaiting);
  }

  /** A subpool's seated task that its full parent refused. */
  PoolOverloadedException parentFull(Admission parentAdmission) {
    accounting.rejected();
    return new PoolOverloadedException(name, description + " is full: its parent "
        + parentAdmission.description + " has " + parentAdmission.occupancy());
  }

  /** A task that got a seat, but no worker thread could be started for it. */
  RejectedExecutionException noThread(Throwable failure) {
    accounting.rejected();
    return new RejectedExecutionException(description + " could not start a worker thread",
        failure);
  }

  /** A rejection by a closed serial lane of this pool. */
  RejectedExecutionException laneClosed() {
    accounting.rejected();
    return new RejectedExecutionException("serial lane of " + description + " is closed");
  }

  PoolClosedException closed() {
    accounting.rejected();
    return new PoolClosedException(name, description + " is shut down");
  }

  /** Throws {@link PoolClosedException} if the pool is shut down. */
  void checkOpen() {
    if (!state.isRunning()) {
      throw closed();
    }
  }
}
