package dev.warmpool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;

/**
 * One task on its way through a pool, and its {@link TaskHandle}: a task put in the waiting line, a
 * caller blocked there, a task enqueued with a handle, a subpool's task on its way to the parent.
 * (A plain {@code execute} with a free seat travels without an envelope, as a kind and an argument.)
 * This is the one place of the task state machine; every other class moves an envelope only by the
 * transitions below.
 *
 * <h2>States</h2>
 * <pre>
 *   WAITING  -> QUEUED       it got a seat: queued for a worker or run at once (under the line's lock)
 *   WAITING  -> CANCELLED    withdrawn from the line: its handle, a caller's timeout or interrupt
 *                            (under the line's lock)
 *   WAITING  -> CLOSED       shutdown woke its blocked caller (under the line's lock)
 *   WAITING  -> HANDED_BACK  shutdownNow took its task from the line to hand back (under the lock)
 *   WAITING  -> EXPIRED      its line deadline passed: it leaves unrun, found by its timer (under
 *                            the line's lock)
 *   QUEUED   -> STARTED      a worker is about to run it; the runner is recorded first (CAS)
 *   QUEUED   -> CANCELLED    withdrawn by its handle; whoever reaches it skips it (CAS)
 *   QUEUED   -> HANDED_BACK  handed back by shutdownNow (CAS); a caller still blocked on it returns
 *                            normally, since the task was accepted
 *   QUEUED   -> CLOSED       a subpool's parent refused it; its submitting call rejects it (CAS)
 *   QUEUED   -> EXPIRED      a subpool's task, seated in its subpool, whose place in the parent's
 *                            line passed the task's deadline (CAS)
 *   STARTED  -> DONE         it ran (CAS)
 *   STARTED  -> INTERRUPTING -> STARTED   shutdownNow interrupts its runner (the handshake below)
 *   INTERRUPTING -> INTERRUPTING_AGAIN -> INTERRUPTING   asked again meanwhile: delivered again
 *   INTERRUPTING(_AGAIN) -> ENDING -> ENDED -> DONE   it ran while an interrupt was on its way: the
 *                            runner marks it ending, the interrupter ends its delivery, the runner
 *                            moves it to DONE
 * </pre>
 * A handle's {@link #cancel(boolean)} succeeds only from WAITING or QUEUED; from STARTED it may
 * interrupt the runner (the handshake below) and reports false.
 *
 * <h2>The interrupt handshake</h2>
 * An interrupt meant for this task must never reach a later task of the same thread. So an
 * interrupter moves STARTED to INTERRUPTING, interrupts the runner, and moves back; a finishing
 * runner waits out INTERRUPTING before it moves to DONE (as {@code FutureTask} does), and then
 * clears an interrupt that was meant for the task it just ran. A runner that finds an interrupt on
 * its way marks the task ENDING first, and no new interrupt starts after that: threads that call
 * {@code cancel(true)} in a loop cannot keep a finished task from ending (review r8, W1: each call
 * started a new interrupt, and the runner waited seconds for a moment with none on its way). A
 * request made from inside the delivery itself (the runner's thread's {@code interrupt()} calls
 * {@code cancel(true)}) joins that delivery ({@link Worker#delivering}; review r9, F1).
 */
class TaskEnvelope implements TaskHandle {
  static final int WAITING = 0;
  static final int QUEUED = 1;
  static final int STARTED = 2;
  static final int INTERRUPTING = 3;
  static final int DONE = 4;
  static final int CANCELLED = 5;
  static final int CLOSED = 6;
  static final int HANDED_BACK = 7;
  static final int EXPIRED = 8;
  /**
   * INTERRUPTING, and another interrupter asked meanwhile: the interrupt on its way may already
   * have landed and been handled, so the delivering interrupter delivers one more (review r7, F1).
   */
  static final int INTERRUPTING_AGAIN = 9;
  /**
   * The task returned while an interrupt was on its way: its interrupter ends the delivery (an
   * interrupt owed again is moot now), and no other starts.
   */
  static final int ENDING = 10;
  /** ENDING, and the delivery has ended: only the runner leaves it, to DONE. */
  static final int ENDED = 11;

  /** What a handle's cancel needs from the pool the envelope belongs to. */
  interface Owner {
    /** Takes a WAITING envelope out of the line; false if it is no longer waiting there. */
    boolean withdraw(TaskEnvelope e);

    /** A QUEUED envelope was cancelled by its handle: it leaves the counts (and its place). */
    void withdrawnQueued(TaskEnvelope e);
  }

  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(TaskEnvelope.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** The kind under which an envelope travels through the run queue: it runs unless withdrawn. */
  static final TaskKind KIND = new TaskKind() {
    @Override
    void run(Object arg, Accounting accounting, Worker worker) {
      TaskEnvelope e = (TaskEnvelope) arg;
      if (e.start(worker)) {
        try {
          e.kind.run(e.arg, accounting, worker);
        } finally {
          e.finish(); // a cancel(true) landing as the task ends: the next task's run clears it
        }
      }
    }

    @Override
    void handBack(Object arg, List<Runnable> out) {
      TaskEnvelope e = (TaskEnvelope) arg;
      if (e.transition(QUEUED, HANDED_BACK)) {
        e.kind.handBack(e.arg, out);
      }
    }
  };

  /**
   * Whose handle this is: the pool (or lane) whose counts a withdrawal moves. Changes only when a
   * sharded pool moves a waiting entry to a sibling shard ({@link WaitingLine#pollFor}), under the
   * line's lock and before the entry leaves WAITING, so whoever reads QUEUED reads the new owner.
   */
  Owner owner;
  final TaskKind kind;
  /**
   * The task (or the unit: a lane, a subpool's task). Cleared under the line's lock when the
   * entry is withdrawn from the line ({@link WaitingLine}: its slot may stay behind, stale, and
   * must not keep the task reachable; review r17, F2); nothing reads it after that.
   */
  Object arg;
  volatile int state;
  /**
   * The worker running it (a shutdownNow or cancel(true) interrupt goes through its shield, see
   * {@link Worker#interruptToStop}), or the thread, if a thread that is no worker runs it: written
   * before the CAS to STARTED, which publishes it.
   */
  private Object runner;

  /**
   * A plain envelope: no blocked caller, no line deadline, no standing stamp, never reused. Its 32
   * bytes and its slot in the line's ring are what a task waiting in line costs (issue 33: 36
   * bytes, against 56 with the links and fields every envelope carried before). What may need more
   * is a {@link Full} one.
   */
  TaskEnvelope(Owner owner, TaskKind kind, Object arg, int state) {
    this.owner = owner;
    this.kind = kind;
    this.arg = arg;
    this.state = state;
  }

  /** Moves the state from {@code from} to {@code to} atomically; false if it was not {@code from}. */
  final boolean transition(int from, int to) {
    return STATE.compareAndSet(this, from, to);
  }

  /**
   * QUEUED -> STARTED on the current thread, the loop of {@code worker} (or null: no worker's);
   * false if it was withdrawn or handed back.
   */
  final boolean start(Worker worker) {
    runner = worker != null ? worker : Thread.currentThread();
    return transition(QUEUED, STARTED);
  }

  /** STARTED -> DONE, after an interrupt on its way has landed. */
  final void finish() {
    // A CAS from STARTED, not a plain write: an interrupter may begin between our read and our
    // write, and must not find the task ended.
    for (;;) {
      int s = state;
      if (s == STARTED) {
        if (transition(STARTED, DONE)) {
          break;
        }
      } else if (s == INTERRUPTING || s == INTERRUPTING_AGAIN) {
        transition(s, ENDING); // the interrupt on its way lands; none starts after it
      } else if (s == ENDED) {
        state = DONE; // only the runner leaves ENDED
        break;
      } else {
        Thread.onSpinWait(); // ENDING: the interrupt is on its way; let it land
      }
    }
    runner = null;
  }

  /** Interrupts the runner if the task is running now; never a later task of that thread. */
  final void interrupt() {
    for (;;) {
      int s = state;
      if (s == STARTED) {
        if (transition(STARTED, INTERRUPTING)) {
          deliverInterrupts();
          return;
        }
      } else if (s == INTERRUPTING) {
        if (Worker.delivering(runnerThread()) // asked from inside that delivery: it joins it
            || transition(INTERRUPTING, INTERRUPTING_AGAIN)) {
          return; // the interrupter on its way delivers ours too, after its own
        }
      } else {
        return; // not running, ending, or an interrupt that follows our request is owed already
      }
    }
  }

  /** The thread running this task, if known now. */
  private Thread runnerThread() {
    Object r = runner;
    return r instanceof Worker w ? w.thread : (Thread) r;
  }

  /** Under INTERRUPTING: interrupts the runner, again for each request that came meanwhile. */
  private void deliverInterrupts() {
    for (;;) {
      Object r = runner;
      if (r instanceof Worker w) {
        w.interruptToStop(); // owed, not landed, while the task runs termination dependents
      } else {
        Worker.interrupt((Thread) r); // never throws
      }
      for (;;) { // while this interrupter delivers, only the states below can be current
        if (transition(INTERRUPTING, STARTED) || transition(ENDING, ENDED)) {
          return;
        }
        if (transition(INTERRUPTING_AGAIN, INTERRUPTING)) {
          break; // asked again meanwhile: deliver once more
        }
      }
    }
  }

  /** Whether the task runs now (an interrupt may be on its way). */
  final boolean isRunning() {
    int s = state;
    return s == STARTED || s == INTERRUPTING || s == INTERRUPTING_AGAIN || s == ENDING
        || s == ENDED;
  }

  /**
   * Makes an envelope whose last trip has ended QUEUED again for its next one; false if it may not
   * be reused. A plain envelope never is; see {@link Full#reset}.
   */
  boolean reset() {
    return false;
  }

  /** Keeps this envelope from reuse; by its owner, before it publishes the envelope. */
  void keepFromReuse() {
    // a plain envelope is never reused
  }

  /** The caller blocked in {@code execute} on this envelope, or null for a task waiting alone. */
  Thread caller() {
    return null;
  }

  /** Whether its blocked caller has parked (set just before it parks); false without a caller. */
  boolean parked() {
    return false;
  }

  /** Its line-deadline timer while it waits in line with a deadline; else null. */
  SharedTimer.Task expiry() {
    return null;
  }

  /** Sets or clears its line-deadline timer; only a {@link Full} envelope carries one. */
  void expiry(SharedTimer.Task x) {
    if (x != null) {
      throw new IllegalStateException("a plain task envelope carries no line deadline");
    }
  }

  /** Its standing stamp ({@link WaitingLine.Stamp}) once it joined a line that keeps time. */
  WaitingLine.Stamp stamp() {
    return null;
  }

  /** Gives it a standing stamp; only a {@link Full} envelope carries one. */
  void stamp(WaitingLine.Stamp st) {
    throw new IllegalStateException("a plain task envelope joins no line that keeps time");
  }

  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    for (;;) {
      int s = state;
      if (s == WAITING) {
        if (owner.withdraw(this)) {
          return true;
        }
      } else if (s == QUEUED) {
        keepFromReuse(); // before the CAS, which publishes it; a lost CAS only wastes it
        if (transition(QUEUED, CANCELLED)) {
          owner.withdrawnQueued(this);
          return true;
        }
      } else {
        if (mayInterruptIfRunning) {
          interrupt(); // only while STARTED: the handshake keeps it from a later task
        }
        return false;
      }
    }
  }

  @Override
  public boolean isExpired() {
    return state == EXPIRED;
  }

  @Override
  public boolean isDone() {
    int s = state;
    return s == DONE || s == CANCELLED || s == EXPIRED || s == HANDED_BACK || s == CLOSED;
  }

  @Override
  public boolean isCancelled() {
    return state == CANCELLED;
  }

  @Override
  public String toString() {
    return "TaskHandle[" + switch (state) {
      case WAITING -> "waiting";
      case QUEUED -> "queued";
      case STARTED, INTERRUPTING, INTERRUPTING_AGAIN, ENDING, ENDED -> "started";
      case DONE -> "done";
      case CANCELLED -> "cancelled";
      case EXPIRED -> "expired";
      default -> "handed back";
    } + "]";
  }

  /**
   * An envelope that may carry what a plain one does without: a blocked caller, a line deadline, a
   * standing stamp, or a next trip (a serial lane's entry). {@code Admission} makes one whenever the
   * task may need any of them: a blocked caller, a deadline (the pool's or the call's), a line that
   * keeps time, a lane's entry.
   */
  static class Full extends TaskEnvelope {
    /** The caller blocked in {@code execute} on this envelope, or null for a task waiting alone. */
    private final Thread caller;
    /** Set by the caller just before it parks, so that a taker unparks only a parked caller. */
    private volatile boolean parked;
    /**
     * Never reused: set by a cancel from QUEUED (a reference may stay in the run queue), or by a
     * lane before it publishes an entry that will carry a line deadline (a timer armed on one trip
     * must never find the next).
     */
    private boolean notReusable;
    /** Its line-deadline timer while it waits in line with a deadline; else null. */
    private volatile SharedTimer.Task expiry;
    /**
     * When it joined a line that keeps time, from when that line stands, and whether a deadline
     * can shed it; null until it joins such a line. Accessed under the line's lock, and by the
     * thread that linked it.
     */
    private WaitingLine.Stamp stamp;

    Full(Owner owner, TaskKind kind, Object arg, Thread caller, int state) {
      super(owner, kind, arg, state);
      this.caller = caller;
    }

    /**
     * Makes an envelope whose last trip has ended (done, cancelled, handed back or closed) QUEUED
     * again for its next one; false if it is still on its way, or may still be referenced by the
     * run queue (it was cancelled while queued: the worker that reaches that reference would start
     * the next trip while its dispatcher still moves it, found by review 3). Only a serial lane
     * reuses its entry, and only the thread that owns it at that moment calls this (see
     * {@code SerialLane.place}); so a reused entry is referenced by nobody else, and a plain write
     * suffices.
     */
    @Override
    boolean reset() {
      int s = state;
      if (!notReusable
          && (s == DONE || s == CANCELLED || s == HANDED_BACK || s == CLOSED)) {
        state = QUEUED;
        return true;
      }
      return false;
    }

    @Override
    final void keepFromReuse() {
      notReusable = true;
    }

    @Override
    final Thread caller() {
      return caller;
    }

    @Override
    final boolean parked() {
      return parked;
    }

    /** Its caller is about to park: a taker that moves the state after this unparks it. */
    final void markParked() {
      parked = true;
    }

    @Override
    final SharedTimer.Task expiry() {
      return expiry;
    }

    @Override
    final void expiry(SharedTimer.Task x) {
      expiry = x;
    }

    @Override
    final WaitingLine.Stamp stamp() {
      return stamp;
    }

    @Override
    final void stamp(WaitingLine.Stamp st) {
      stamp = st;
    }
  }
}
