package dev.warmpool;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * Admission by seats and a FIFO waiting line, shared by a pool ({@link BoundedPool}) and a subpool
 * ({@link Subpool}): which calls take a seat, wait, or are rejected, and the run state that closes
 * both. What a seated task does next is the subclass's: a pool queues it for its workers, a subpool
 * forwards it to its parent.
 *
 * <h2>Implementation notes</h2>
 * A task is accepted by taking a seat ({@link RunState}); it gives the seat back when it finishes.
 * When every seat is taken, blocking mode puts work in the FIFO line; whoever frees a seat hands it to
 * the head of the line, and new submitters take no seat while the line is not empty, so nobody barges.
 * A joiner links itself and then drains the line (a seat may have been freed between its try and its
 * link); a finisher gives its seat back and then drains: publish, then check, on both sides.
 */
abstract class SeatPool extends AbstractWorkerPool implements TaskEnvelope.Owner {
  final String name;
  final boolean nonblocking;
  final int maxWaiting;
  volatile int capacity;
  /**
   * Completed when this generation of the pool terminates; a reboot installs a fresh one. Replaced
   * and completed only under the line's lock, together with the state change (see
   * {@link #tryTerminate}), so a reboot racing the end of termination can never have its fresh
   * generation completed by the old one.
   */
  private volatile CompletableFuture<Void> termination = new CompletableFuture<>();

  final RunState state = new RunState();
  final WaitingLine line = new WaitingLine();
  final Accounting accounting;
  final PoolCounters counters;
  /** Guards capacity changes against each other, and reboot. */
  final Object resizeLock = new Object();
  /**
   * Subpools not yet terminated; this pool terminates only after all of them. Held weakly: a subpool
   * nobody references has no work either (a task, lane or timer of a subpool references it), so
   * dropping it loses nothing, and a caller may make views freely. Guarded by itself.
   */
  private final Map<Subpool, Boolean> subpools = new WeakHashMap<>();

  SeatPool(String name, int capacity, boolean nonblocking, int maxWaiting, Accounting accounting) {
    this.name = name;
    this.capacity = capacity;
    this.nonblocking = nonblocking;
    this.maxWaiting = maxWaiting;
    this.accounting = accounting;
    this.counters = accounting.counters;
  }

  // ---------------------------------------------------------------------------------------------
  // What the subclass decides

  /**
   * With a seat taken for the task: counts it, then hands it on. Returns false (after giving the
   * seat back) only in {@link Mode#TRY} or {@link Mode#PROBE}, when something further on is full.
   */
  abstract boolean place(TaskKind kind, Object arg, Mode mode);

  /** Like {@link #place} for a task that travels with its handle; the entry is TAKEN. */
  abstract boolean placeEntry(TaskEnvelope e, Mode mode);

  /** A new handle-carrying entry of this pool. */
  abstract TaskEnvelope newEntry(TaskKind kind, Object arg, Thread caller, int state);

  /** A line entry was handed a seat (and its caller woken): send it on to run. */
  abstract void handOff(TaskEnvelope e);

  /** Whether nothing but the seats and the line keeps this pool from terminating (no workers). */
  abstract boolean quiescent();

  /** Called once when the pool has terminated. */
  abstract void terminated();

  // ---------------------------------------------------------------------------------------------
  // Submission

  /**
   * Proceeds in three steps: if nobody waits in line, take a free seat by CAS; with a seat, place
   * the task; without one, reject (nonblocking, TRY) or wait in line ({@link #whenFull}).
   */
  @Override
  boolean dispatch(TaskKind kind, Object arg, Mode mode) {
    if (line.size() == 0 && state.tryTakeSeat(capacity, mode == Mode.ADMITTED)) {
      return place(kind, arg, mode);
    }
    return whenFull(kind, arg, mode, null);
  }

  @Override
  TaskHandle enqueue(TaskKind kind, Object arg, Mode mode) {
    TaskEnvelope e = newEntry(kind, arg, null, TaskEnvelope.QUEUED);
    if (line.size() == 0 && state.tryTakeSeat(capacity, mode == Mode.ADMITTED)) {
      placeEntry(e, mode);
    } else {
      e.state = TaskEnvelope.WAITING;
      whenFull(kind, arg, mode, e);
    }
    return e;
  }

  /**
   * Places the task with its handle if a seat is free now; else null, which is not a rejection (a
   * sharded pool offering a task to each shard in turn).
   */
  TaskHandle tryEnqueue(TaskKind kind, Object arg) {
    if (line.size() == 0 && state.tryTakeSeat(capacity, false)) {
      TaskEnvelope e = newEntry(kind, arg, null, TaskEnvelope.QUEUED);
      return placeEntry(e, Mode.PROBE) ? e : null;
    }
    return null;
  }

  @Override
  boolean dispatchTimed(TaskKind kind, Object arg, long nanos) throws InterruptedException {
    if (nonblocking || nanos == 0) {
      return dispatch(kind, arg, Mode.TRY);
    }
    if (line.size() == 0 && state.tryTakeSeat(capacity, false)) {
      return place(kind, arg, Mode.EXECUTE);
    }
    if (!state.isRunning()) {
      throw closed();
    }
    long deadline = System.nanoTime() + Math.min(nanos, Long.MAX_VALUE / 4);
    TaskEnvelope e = join(newEntry(kind, arg, Thread.currentThread(), TaskEnvelope.WAITING),
        false);
    try {
      return awaitTaken(e, true, deadline);
    } catch (InterruptedWaitException interrupted) {
      throw new InterruptedException("interrupted while waiting for a seat in pool '" + name + "'");
    }
  }

  /** No seat was free (or the line was not empty): reject, or join the line. */
  boolean whenFull(TaskKind kind, Object arg, Mode mode, TaskEnvelope handle) {
    if (!state.isRunning() && !(mode == Mode.ADMITTED && !state.isTerminated())) {
      throw closed();
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
      return awaitTaken(join(newEntry(kind, arg, Thread.currentThread(), TaskEnvelope.WAITING),
          false), false, 0L);
    }
    join(handle != null ? handle : newEntry(kind, arg, null, TaskEnvelope.WAITING),
        mode == Mode.ADMITTED);
    return true;
  }

  /** Puts the entry in line (or throws), then drains: a seat may have come free meanwhile. */
  private TaskEnvelope join(TaskEnvelope e, boolean admitted) {
    switch (line.offer(e, admitted ? Integer.MAX_VALUE : maxWaiting, admitted)) {
      case FULL -> {
        accounting.rejected();
        throw new PoolOverloadedException(describe() + " is overloaded: every seat is taken"
            + " (capacity " + capacity + ", busy " + busy() + ") and the waiting line is full"
            + " (maxWaiting " + maxWaiting + ")");
      }
      case REFUSED -> throw closed();
      case LINKED -> {
        if (e.caller == null && e.kind.countsAsTask()) {
          accounting.accepted();
        }
      }
    }
    drainLine();
    return e;
  }

  /**
   * Parks the caller until its entry gets a seat, or until {@code deadline} if timed.
   *
   * @return true if taken, false on timeout
   */
  private boolean awaitTaken(TaskEnvelope e, boolean timed, long deadline) {
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
        if (s != TaskEnvelope.WAITING) {
          return true;
        }
        interrupted |= Thread.interrupted();
        if (interrupted && line.cancel(e)) {
          accounting.rejected();
          if (timed) {
            interrupted = false; // reported by the InterruptedException instead
            throw new InterruptedWaitException();
          }
          throw new RejectedExecutionException("interrupted while waiting for a seat in "
              + describe() + "; the task was not accepted", new InterruptedException());
        }
        long left = timed ? deadline - System.nanoTime() : 1L;
        if (left <= 0) {
          if (line.cancel(e)) {
            accounting.rejected();
            return false;
          }
          continue;
        }
        e.parked = true; // then re-check the state: a taker reads parked after writing state
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

  /** Withdraws a waiting entry through its handle; false if it is no longer waiting. */
  @Override
  public boolean withdraw(TaskEnvelope e) {
    if (!line.cancel(e)) {
      return false;
    }
    if (e.kind.countsAsTask()) {
      accounting.withdrawn();
    }
    leftLine();
    return true;
  }

  /** An entry that held a seat was withdrawn by its handle before a worker reached it. */
  @Override
  public void withdrawnQueued(TaskEnvelope e) {
    if (e.kind.countsAsTask()) {
      accounting.withdrawn();
    }
  }

  /** A closing lane takes its carrier out of the line; false if it was not waiting there. */
  boolean withdrawCarrier(SerialLane lane) {
    if (!line.cancelCarrier(lane)) {
      return false;
    }
    leftLine();
    return true;
  }

  /** An entry left the line without a seat: a shutdown may have been waiting for the line only. */
  private void leftLine() {
    if (!state.isRunning()) {
      tryTerminate();
    }
  }

  boolean hasWaiters() {
    return line.size() > 0;
  }

  /** Pairs line entries with free seats, oldest first, and hands them off. */
  void drainLine() {
    while (line.size() > 0) {
      if (!state.tryTakeSeat(capacity, true)) { // line entries were accepted: also while shutting down
        return;
      }
      TaskEnvelope e = line.poll();
      if (e == null) {
        state.releaseSeat();
        tryTerminate();
        continue;
      }
      taken(e);
      handOff(e);
    }
  }

  /** An entry got a seat: a blocked caller's task now counts as accepted and the caller wakes. */
  void taken(TaskEnvelope e) {
    if (e.caller != null) {
      accounting.accepted();
      if (e.parked) {
        LockSupport.unpark(e.caller);
      }
    }
  }

  /** Gives back one seat and serves the line with it. */
  void giveBackSeat() {
    state.releaseSeat();
    if (line.size() > 0) {
      drainLine();
    }
    if (!state.isRunning()) {
      tryTerminate();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Configuration and stats

  @Override
  public String name() {
    return name;
  }

  @Override
  public int capacity() {
    return capacity;
  }

  @Override
  public boolean isNonblocking() {
    return nonblocking;
  }

  /** Tasks running now. */
  abstract int busy();

  /** "pool 'x'", or "subpool 'y' of pool 'x'": how messages name this pool. */
  String describe() {
    return "pool '" + name + "'";
  }

  PoolOverloadedException overloaded() {
    accounting.rejected();
    return new PoolOverloadedException(describe() + " is overloaded: every seat is taken"
        + " (capacity " + capacity + ", busy " + busy() + ")");
  }

  /** Counts a rejection by a closed serial lane of this pool and returns its exception. */
  RejectedExecutionException laneClosed() {
    accounting.rejected();
    return new RejectedExecutionException("serial lane of " + describe() + " is closed");
  }

  @Override
  PoolClosedException closed() {
    accounting.rejected();
    return new PoolClosedException(describe() + " is shut down");
  }

  // ---------------------------------------------------------------------------------------------
  // Subpools

  @Override
  public WorkerPool newSubpool(String name, int capacity) {
    return newSubpool(name, capacity, nonblocking, maxWaiting);
  }

  @Override
  public WorkerPool newSubpool(String name, int capacity, boolean nonblocking, int maxWaiting) {
    Objects.requireNonNull(name, "name must not be null");
    WorkerPool.Builder.checkCapacity(capacity);
    if (maxWaiting < 0) {
      throw new IllegalArgumentException("maxWaiting must be >= 0, was " + maxWaiting);
    }
    checkOpen();
    Subpool sub = new Subpool(this, name, capacity, nonblocking, maxWaiting);
    addSubpool(sub);
    if (isShutdown()) { // a shutdown that ran between our check and our add did not see it
      sub.shutdown();
      checkOpen();
    }
    return sub;
  }

  void addSubpool(Subpool s) {
    synchronized (subpools) {
      subpools.put(s, Boolean.TRUE);
    }
  }

  /** Whether a subpool has not terminated yet. */
  boolean hasSubpools() {
    synchronized (subpools) {
      return !subpools.isEmpty();
    }
  }

  private List<Subpool> subpools() {
    synchronized (subpools) {
      return new ArrayList<>(subpools.keySet());
    }
  }

  /** Part of shutdown: subpools shut down first, so their accepted work still reaches this pool. */
  private void shutdownSubpools() {
    for (Subpool s : subpools()) {
      s.shutdown();
    }
  }

  /** Part of shutdownNow: each subpool hands back its own work first. */
  private List<Runnable> shutdownNowSubpools() {
    List<Runnable> tasks = new ArrayList<>();
    for (Subpool s : subpools()) {
      tasks.addAll(s.shutdownNow());
    }
    return tasks;
  }

  /** A subpool terminated: it no longer holds this pool open. */
  void subpoolTerminated(Subpool s) {
    synchronized (subpools) {
      if (s.isTerminated()) { // not if a reboot reopened it since: it holds this pool open again
        subpools.remove(s);
      }
    }
    tryTerminate();
  }

  // ---------------------------------------------------------------------------------------------
  // Lifecycle

  /**
   * Closes the line and the state: callers blocked in line wake with {@link PoolClosedException},
   * entries without a caller stay to run; delayed tasks are cancelled; subpools shut down first.
   */
  @Override
  public void shutdown() {
    shutdownSubpools();
    state.shutdown();
    // Publish, then check, against newSubpool and a subpool's reboot (they add, then check our
    // state): one made or rebooted during the first sweep saw us open and is not in it.
    shutdownSubpools();
    for (TaskEnvelope e : line.close()) {
      LockSupport.unpark(e.caller);
    }
    timers.close();
    drainLine();
    afterShutdown();
    tryTerminate();
  }

  /** What the subclass does once the line is closed (stop idle workers). */
  void afterShutdown() {}

  /**
   * The first half of shutdownNow: hands back the subpools' work and the line's, marks the pool
   * stopping and closes it. The subclass then hands back what it holds beyond the line.
   */
  List<Runnable> shutdownLine() {
    List<Runnable> tasks = shutdownNowSubpools();
    accounting.stopping = true;
    shutdown();
    for (TaskEnvelope e : line.drain()) {
      if (e.caller != null) {
        LockSupport.unpark(e.caller);
      } else {
        e.kind.handBack(e.arg, tasks);
      }
    }
    return tasks;
  }

  /**
   * Terminates if shut down with no seat held, its timers closed, no subpool open, nothing in line
   * and quiescent.
   *
   * <p>The last checks, the state change and the read of this generation's {@code termination} are
   * one step under the line's lock, as is a reboot's reopening: so a reboot that races the end of
   * termination either comes after it (and installs a fresh generation that only its own
   * termination completes) or finds the pool not terminated, and a caller whose first checks saw an
   * earlier generation cannot terminate a later one.
   */
  void tryTerminate() {
    // Not before shutdown has swept the timers and no fire is handing one on: a timer that could
    // still complete would be pending on a terminated pool.
    if (state.state() != RunState.SHUTDOWN || state.seats() != 0 || !timers.isQuiet()
        || hasSubpools() || !quiescent()) {
      return;
    }
    CompletableFuture<Void> ended = line.terminateIfEmpty(
        () -> !hasSubpools() && quiescent() && state.terminate() ? termination : null);
    if (ended != null) {
      terminated();
      ended.complete(null);
    }
  }

  @Override
  void timersQuiet() {
    tryTerminate();
  }

  @Override
  void checkOpen() {
    if (!state.isRunning()) {
      throw closed();
    }
  }

  @Override
  public boolean isShutdown() {
    return !state.isRunning();
  }

  @Override
  public boolean isTerminated() {
    return state.isTerminated();
  }

  /** Waits for the terminated state, not for the threads (see the pool's override). */
  boolean awaitTerminated(long timeout, TimeUnit unit) throws InterruptedException {
    CompletableFuture<Void> t = termination;
    try {
      t.get(timeout, unit);
      return true;
    } catch (TimeoutException notYet) {
      return false;
    } catch (ExecutionException never) {
      throw new AssertionError(never); // completed only normally
    }
  }

  @Override
  public void reboot() {
    synchronized (resizeLock) {
      if (!state.isTerminated()) {
        throw new IllegalStateException(describe() + " is not terminated");
      }
      accounting.stopping = false;
      timers.reopen();
      line.reopen(() -> {
        termination = new CompletableFuture<>();
        state.reopen();
      });
    }
  }


  @Override
  public SerialExecutor newSerialExecutor() {
    return new SerialLane(this);
  }
}
