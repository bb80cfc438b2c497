package dev.warmpool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RunnableScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * A delayed or periodic task: a future that waits on the {@link SharedTimer} and, when due, is handed
 * to its pool or lane by {@code onDue} as an accepted task (admitted work: never rejected for being
 * full). A periodic task is re-armed only after its run returned, so it never overlaps itself; a run
 * that throws completes the future exceptionally and stops it. Cancelling removes it from the timer at
 * once, or withdraws its hand-off if it is due and has not started.
 *
 * <h2>Footprint</h2>
 * One object per timer (issue 33: idle Reactor and RxJava workers holding a timer may be many): it is
 * its own entry on the shared timer, its own future (the states and the interrupt handshake of
 * {@code FutureTask}, which it used to extend with an entry and a callable of their own), and it
 * keeps the handle of its hand-off in a field ({@link LateBound}) and when it became due in its
 * entry's {@code seq} ({@link #markDue}): 72 bytes, where a {@code FutureTask}, an entry and a late
 * handle cost 152. A one-shot runnable's timer is this class; a callable's ({@link OfCallable}) and
 * a periodic task's ({@link Periodic}) are subclasses, so that a one-shot runnable pays for neither.
 *
 * <h2>States</h2>
 * One state, {@link #state}, says both where the task is and how its future ended:
 * <pre>
 *   PENDING -> DUE          the timer fired, its owners open: handed on as an accepted task (CAS)
 *   DUE     -> PENDING      a periodic run returned: re-armed, then it re-checks its owners (CAS)
 *   PENDING|DUE -> COMPLETING -> NORMAL       the (last) run returned a value
 *   PENDING|DUE -> COMPLETING -> EXCEPTIONAL  the run threw (a periodic task stops)
 *   PENDING|DUE -> CANCELLED                  cancel(false), a lane's close; a pool's (PENDING only)
 *   PENDING|DUE -> INTERRUPTING -> INTERRUPTED cancel(true): the running thread is interrupted
 * </pre>
 * PENDING and DUE are {@code FutureTask}'s NEW: not done. Closing an owner ({@link Timers#close})
 * cancels only PENDING timers: a due timer is an accepted task and runs under {@code shutdown()}, or
 * is handed back by {@code shutdownNow()} (guarantee 7). A schedule refused because an owner closed
 * goes PENDING -> CANCELLED too, unseen (the caller throws, nobody holds the future).
 *
 * <p><b>The interrupt handshake</b> ({@code FutureTask}'s): {@code cancel(true)} takes INTERRUPTING
 * before it reads {@code runner} and sets INTERRUPTED after the interrupt; a run clears
 * {@code runner}, then waits out INTERRUPTING, so that the interrupt lands while this task is still
 * the thread's (the worker clears a stale interrupt before its next task). A run starts only while
 * not done, after claiming {@code runner} (CAS from null: never two runs at once), and reads the
 * state again after the claim (publish, then check against a cancel).
 *
 * <p><b>The hand-off's handle</b> is bound after the hand-off and a cancel may come first: the
 * late-bound-handle rule ({@link LateBound}), with a cancelled state as the cancel mark.
 */
class DelayedTask<V> extends SharedTimer.Task
    implements RunnableScheduledFuture<V>, Timers.Timer, FailureAware, LateBound {
  /**
   * Where a due task goes: its pool, or its lane. An interface the owner implements itself, so a
   * lane pays no object per lane for it (idle lanes with a pending timer may be many).
   */
  interface Owner {
    /**
     * Hands the due task on as admitted work; returns its handle there, null if a closed lane
     * refused it, or throws if the pool terminated.
     */
    TaskHandle due(DelayedTask<?> task);
  }

  /**
   * An owner that also keeps its pending timers, so that closing it cancels them all, due or not
   * (DESIGN.md section 5: closing a lane cancels its pending tasks): a serial lane, which is its own
   * timer set (idle lanes with a pending timer may be many: no object per lane for it). The same
   * publish-then-check rule as {@link Timers}: a timer registers, then reads {@link #isClosed};
   * closing sets the flag, then cancels every registered timer.
   */
  interface Lane extends Owner {
    /** Publishes a pending timer of this lane. */
    void register(DelayedTask<?> task);

    /** The timer is done (ran its last run, or was cancelled). */
    void forget(DelayedTask<?> task);

    /** Whether the lane is closed: its timers cancel themselves. */
    boolean isClosed();
  }

  private static final int PENDING = 0;
  private static final int DUE = 1;
  private static final int COMPLETING = 2;
  private static final int NORMAL = 3;
  private static final int EXCEPTIONAL = 4;
  private static final int CANCELLED = 5;
  private static final int INTERRUPTING = 6;
  private static final int INTERRUPTED = 7;

  private static final VarHandle STATE;
  private static final VarHandle RUNNER;
  private static final VarHandle WAITERS;
  private static final VarHandle HAND_OFF;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      STATE = l.findVarHandle(DelayedTask.class, "state", int.class);
      RUNNER = l.findVarHandle(DelayedTask.class, "runner", Thread.class);
      WAITERS = l.findVarHandle(DelayedTask.class, "waiters", Waiter.class);
      HAND_OFF = l.findVarHandle(DelayedTask.class, "handOff", TaskHandle.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** See the class notes. */
  private volatile int state = PENDING;
  /**
   * The runnable as scheduled, or a callable ({@link OfCallable}). A runnable is also who hears of
   * a cancellation if it is a {@link CancellationAware}, and who reports its failures if it is a
   * {@link FailureAware} (looked up then, not kept in fields: idle timers may be many).
   */
  final Object job;
  /** The run's value (NORMAL) or exception (EXCEPTIONAL); written before the final state. */
  private Object outcome;
  /** The thread running the task, claimed by CAS; null between runs. */
  private volatile Thread runner;
  /** Threads waiting in {@code get}: a stack, pushed by CAS, drained when the future completes. */
  private volatile Waiter waiters;
  /**
   * Hands the due task to its pool or lane; returns its handle there, null if a closed lane refused
   * it, or throws if the pool terminated. A lane ({@link Lane}) also keeps the timer while it is
   * pending (closing the lane cancels it).
   */
  private final Owner onDue;
  /** Its pool: whose timers keep it (closed by shutdown), and whose task timers hear of each run. */
  private final AbstractWorkerPool pool;
  /** The handle of the latest hand-off ({@link LateBound}), null until bound. */
  private volatile TaskHandle handOff;
  /** Its links in its pool's timers ({@link Timers}, under that lock). */
  private Timers.Timer prevTimer;
  private Timers.Timer nextTimer;

  /** A thread waiting for the future (a node of {@link #waiters}). */
  private static final class Waiter {
    volatile Thread thread = Thread.currentThread();
    volatile Waiter next;
  }

  /** A one-shot timer of a runnable, handed to {@code onDue} when due. */
  DelayedTask(Runnable task, Owner onDue, AbstractWorkerPool pool) {
    this((Object) Objects.requireNonNull(task), onDue, pool);
  }

  private DelayedTask(Object job, Owner onDue, AbstractWorkerPool pool) {
    this.job = job;
    this.onDue = onDue;
    this.pool = pool;
  }

  /** A one-shot timer of a callable: its value is the future's. */
  static final class OfCallable<V> extends DelayedTask<V> {
    OfCallable(Callable<V> task, Owner onDue, AbstractWorkerPool pool) {
      super((Object) Objects.requireNonNull(task), onDue, pool);
    }

    @Override
    @SuppressWarnings("unchecked")
    V call() throws Exception {
      return ((Callable<V>) job).call();
    }

    @Override
    Runnable runnable() {
      return null;
    }
  }

  /** A periodic timer of a runnable: re-armed after each run that returned. */
  static final class Periodic extends DelayedTask<Void> {
    /** > 0: fixed rate; < 0: fixed delay of {@code -period}. */
    private final long period;

    Periodic(Runnable task, long period, Owner onDue, AbstractWorkerPool pool) {
      super(task, onDue, pool);
      this.period = period;
    }

    @Override
    long period() {
      return period;
    }
  }

  /** Runs the task once; a one-shot runnable's value is null. */
  @SuppressWarnings("unchecked")
  V call() throws Exception {
    ((Runnable) job).run();
    return null;
  }

  /** The runnable as scheduled, or null for a callable. */
  Runnable runnable() {
    return (Runnable) job;
  }

  /** 0: one-shot; > 0: fixed rate; < 0: fixed delay of {@code -period}. */
  long period() {
    return 0;
  }

  /** On the timer thread (or the scheduler's, for a task due now): the task is due. */
  @Override
  final void fire() {
    Timers owner = pool.timers;
    // The fire holds the pool's timers open until the task is handed on: the pool does not
    // terminate in between, so the hand-off is accepted or the future completes first.
    if (!owner.tryBeginFire()) {
      // Closing raced this fire: the timer was not due when it closed. The close's sweep (or,
      // for a periodic re-arm the sweep saw DUE, the re-arm's own check) cancels it: it stays
      // registered and PENDING until then. Not here: this fire is not counted, so the close
      // would not wait for it, and a cancel begun here lost the sweep's CAS and let the pool
      // report terminated with this timer's future not done (guarantee 7). The close waits for
      // its own sweep.
      return;
    }
    try {
      if (onDue instanceof Lane lane && lane.isClosed()) {
        cancelIfPending();
      } else if (STATE.compareAndSet(this, PENDING, DUE)) {
        handToOwner();
      }
    } finally {
      owner.endFire();
    }
  }

  /**
   * A run threw and the pool has no failure handler of its own: the task reports it if it is a
   * {@link FailureAware}, else the thread's uncaught-exception handler hears of it, as for any task.
   */
  @Override
  public void onFailure(Throwable t) {
    if (runnable() instanceof FailureAware r) {
      r.onFailure(t);
    } else {
      Thread self = Thread.currentThread();
      self.getUncaughtExceptionHandler().uncaughtException(self, t);
    }
  }

  /**
   * Registers the task with its owners and puts it on the timer; {@code delayNanos <= 0} means due
   * now, and then the caller's thread hands it on at once, as the timer would (admitted work, never
   * refused for load), without a trip through the timer thread. So "at once, or a timer if the pool
   * is full" is one call, decorated once: an adapter needs no immediate attempt of its own that a
   * full pool refuses before it falls back to a timer (guarantee 15). Returns null if an owner is
   * closed (the schedule is refused: the caller throws); a close that raced the registration may
   * instead have cancelled it, and then the cancelled future is returned.
   */
  final DelayedTask<V> start(long delayNanos) {
    pool.timers.register(this);
    if (onDue instanceof Lane lane) {
      lane.register(this);
    }
    if (ownerClosed()) { // publish, then check: a close that swept before our register
      if (STATE.compareAndSet(this, PENDING, CANCELLED)) {
        forget();
        return null; // never armed, never accepted, and nobody will hold this future
      }
      return this; // the close's sweep cancelled it
    }
    long now = System.nanoTime();
    if (delayNanos <= 0) {
      deadline = now; // off the timer: a fixed rate counts its next run from here
      fire(); // as the timer fires it: a close racing us cancels it, or it is handed on
    } else {
      try {
        arm(now + clamp(delayNanos));
      } catch (RuntimeException | Error noTimer) {
        // The shared timer's thread could not start: the schedule throws that to its caller, so
        // nothing may keep the timer (review r11, F2: a close would later cancel a schedule that
        // had thrown, a second answer to one call). A close's sweep that cancelled it first wins,
        // as above.
        if (STATE.compareAndSet(this, PENDING, CANCELLED)) {
          forget();
          throw noTimer;
        }
      }
    }
    return this;
  }

  /** The task's entry on the timer, whose {@code fire} runs on the timer thread; for tests. */
  final SharedTimer.Task timerEntry() {
    return this;
  }

  private boolean ownerClosed() {
    return pool.timers.isClosed() || (onDue instanceof Lane lane && lane.isClosed());
  }

  /** On the timer thread: the task is due; hands it on, and binds its handle there. */
  private void handToOwner() {
    TaskHandle h;
    markDue(); // before the hand-off: the run may start at once
    try {
      h = onDue.due(this);
    } catch (RuntimeException terminated) { // the pool terminated before the task came due
      h = null;
    }
    if (h == null) {
      cancel(false);
      return;
    }
    // Withdraws it at once if it was cancelled meanwhile. Later periods are handed on and bound
    // by the timer thread alone, one after another; only a first period due at once is handed on
    // by the scheduling thread, whose bind may come after the second period's.
    if (SharedTimer.isTimerThread()) {
      bindLate(h);
    } else {
      bindLateFirst(h);
    }
  }

  /**
   * Notes when the current run became due and was handed on (System.nanoTime): a timer is accepted
   * work from then, so its wait is measured from there, not from the schedule call. Kept in the
   * timer entry's {@code seq}, which is free while the task is off the timer (it is, from its fire
   * until its run re-arms it): written before the hand-off, read by the run before it re-arms.
   */
  private void markDue() {
    seq = System.nanoTime();
  }

  /**
   * Checks the arguments of a periodic schedule and returns its period in nanoseconds, positive for
   * a fixed rate ({@code sign} 1) and negative for a fixed delay ({@code sign} -1).
   */
  static long checkPeriodic(Runnable task, long period, TimeUnit unit, String what, int sign) {
    Objects.requireNonNull(task, "task must not be null");
    Objects.requireNonNull(unit, "unit must not be null");
    if (period <= 0) {
      throw new IllegalArgumentException(what + " must be > 0, was " + period);
    }
    return sign * Math.max(1, clamp(unit.toNanos(period)));
  }

  static long clamp(long delayNanos) {
    return Math.max(0, Math.min(delayNanos, Long.MAX_VALUE >> 2));
  }

  private void arm(long deadline) {
    SharedTimer.INSTANCE.schedule(this, deadline);
    if (isDone()) {
      SharedTimer.INSTANCE.cancel(this); // cancelled while arming
    }
  }

  /**
   * Runs once (or one period). A run that throws completes the future exceptionally, as
   * {@code ScheduledExecutorService} requires, and the exception is then rethrown so that the pool
   * counts it as failed and passes it to its failure handler.
   */
  @Override
  public final void run() {
    AbstractWorkerPool p = pool;
    if (!p.timed()) {
      runOnce();
      return;
    }
    long start = System.nanoTime();
    long waited = start - seq; // when it became due (markDue); read before a re-arm reuses it
    try {
      runOnce();
    } finally {
      p.taskRan(waited, System.nanoTime() - start);
    }
  }

  private void runOnce() {
    if (state > DUE || !RUNNER.compareAndSet(this, null, Thread.currentThread())) {
      return; // done, or running elsewhere
    }
    boolean ran = false;
    Throwable failure = null;
    V value = null;
    int s;
    try {
      if (state <= DUE) { // claimed, then check: a cancel that came first wins
        try {
          value = call();
          ran = true;
        } catch (Throwable t) {
          failure = t;
        }
      }
      if (failure != null) {
        complete(failure, EXCEPTIONAL);
      } else if (ran && period() == 0) {
        complete(value, NORMAL);
      }
    } finally {
      runner = null;
      s = state;
      while (s == INTERRUPTING) {
        Thread.onSpinWait(); // a cancel(true) is delivering its interrupt: let it land here
        s = state;
      }
    }
    if (ran && period() != 0 && s <= DUE) {
      Throwable noTimer = rearm();
      if (failure == null) {
        failure = noTimer; // the task stopped: the pool counts this run failed and reports why
      }
    } else {
      forget(); // its last run (or cancelled before or during it: a second forget is a no-op)
    }
    if (failure != null) {
      throw DelayedTask.<RuntimeException>sneaky(failure);
    }
  }

  /** Completes the future unless it is done already (cancelled meanwhile). */
  private boolean complete(Object result, int end) {
    for (;;) {
      int s = state;
      if (s > DUE) {
        return false;
      }
      if (STATE.compareAndSet(this, s, COMPLETING)) {
        break;
      }
    }
    outcome = result;
    STATE.setRelease(this, end);
    wakeWaiters();
    return true;
  }

  /**
   * A periodic run returned: arm the next, then check the owners (publish, then check). Returns
   * why the task cannot run again if the timer could not take it, else null.
   */
  private Throwable rearm() {
    if (!STATE.compareAndSet(this, DUE, PENDING)) {
      return null; // cancelled during the run
    }
    long period = period();
    if (!ownerClosed()) {
      try {
        arm(period > 0 ? deadline + period : System.nanoTime() - period);
      } catch (RuntimeException | Error noTimer) {
        // The shared timer's thread could not be started for the next period (a schedule call
        // would throw this to its caller): the task cannot run again, so its future fails with
        // it rather than stay pending for ever (review r10, F5), and the run that re-armed
        // throws it, so that the pool counts and reports it as a schedule's failure: a periodic
        // future is seldom read (review r11, F3).
        boolean failed = complete(noTimer, EXCEPTIONAL); // else cancelled while arming: so it ended
        forget();
        return failed ? noTimer : null;
      }
    }
    if (ownerClosed()) { // publish (PENDING, armed), then check: a close that swept before
      cancelIfPending();
    }
    return null;
  }

  @SuppressWarnings("unchecked")
  private static <E extends Throwable> E sneaky(Throwable t) throws E {
    throw (E) t;
  }

  private void forget() {
    pool.timers.forget(this);
    if (onDue instanceof Lane lane) {
      lane.forget(this);
    }
  }

  /**
   * The end of a {@code shutdownNow()}: each due timer among the tasks it hands back is replaced by
   * its task as scheduled (undecorated), which the caller may still run, and its future completes
   * cancelled, telling a {@link CancellationAware} task; so no future of a due timer stays pending
   * on a terminated pool, and an adapter waiting on one learns it will not run here (guarantee 7).
   * A callable's timer stays as it is: its future is the only way to run it. Runs on the caller's
   * thread, under no lock.
   */
  static void handedBack(List<Runnable> tasks) {
    for (int i = 0; i < tasks.size(); i++) {
      if (tasks.get(i) instanceof DelayedTask<?> d && d.runnable() != null) {
        tasks.set(i, DecoratedTask.original(d.runnable()));
        d.cancel(false);
      }
    }
  }

  @Override
  public final Timers.Timer prevTimer() {
    return prevTimer;
  }

  @Override
  public final Timers.Timer nextTimer() {
    return nextTimer;
  }

  @Override
  public final void linkTimer(Timers.Timer prev, Timers.Timer next) {
    prevTimer = prev;
    nextTimer = next;
  }

  @Override
  public final TaskHandle lateHandle() {
    return handOff;
  }

  @Override
  public final void storeLateHandle(TaskHandle h) {
    handOff = h;
  }

  @Override
  public final boolean replaceLateHandle(TaskHandle expected, TaskHandle h) {
    return HAND_OFF.compareAndSet(this, expected, h);
  }

  /** The cancel mark of the late-bound-handle rule: the future was cancelled. */
  @Override
  public final boolean lateCancelled() {
    return state >= CANCELLED;
  }

  /** Closing an owner: cancels the task if it is not due (a due task is accepted work). */
  @Override
  public final void cancelIfPending() {
    if (STATE.compareAndSet(this, PENDING, CANCELLED)) {
      cancelled();
    }
  }

  /**
   * Cancels the future: takes the task off the timer, or withdraws its hand-off if it is due and has
   * not started (then it counts in none of the pool's task counters), and tells a
   * {@link CancellationAware} task. With {@code mayInterruptIfRunning}, a run in progress is
   * interrupted (see the handshake in the class notes).
   */
  @Override
  public final boolean cancel(boolean mayInterruptIfRunning) {
    boolean won = false;
    for (int s = state; s <= DUE; s = state) {
      if (STATE.compareAndSet(this, s, mayInterruptIfRunning ? INTERRUPTING : CANCELLED)) {
        won = true;
        break;
      }
    }
    if (!won) {
      // Done already. Still leave the timer and the owners' sets: a one-shot run that completed
      // forgets itself a moment later, and a second forget is a no-op.
      SharedTimer.INSTANCE.cancel(this);
      forget();
      return false;
    }
    if (mayInterruptIfRunning) {
      Thread t = runner;
      if (t != null) {
        // Never throws: a thread whose interrupt() throws must not keep the waiters in get()
        // asleep (review r10, F1); a request from inside that interrupt() joins it (r9, F1).
        Worker.interrupt(t);
      }
      STATE.setRelease(this, INTERRUPTED);
    }
    cancelled();
    return true;
  }

  /** After this thread cancelled the future: wakes its waiters and takes the task out everywhere. */
  private void cancelled() {
    wakeWaiters();
    SharedTimer.INSTANCE.cancel(this);
    forget();
    withdrawLate();
    if (runnable() instanceof CancellationAware l) {
      if (SharedTimer.isTimerThread()) {
        ThreadStarter.ASYNC.execute(() -> tell(l)); // no user code on the timer thread
      } else {
        tell(l);
      }
    }
  }

  private static void tell(CancellationAware l) {
    try {
      l.onCancel();
    } catch (Throwable t) {
      Thread self = Thread.currentThread();
      self.getUncaughtExceptionHandler().uncaughtException(self, t);
    }
  }

  @Override
  public final boolean isPeriodic() {
    return period() != 0;
  }

  @Override
  public final boolean isCancelled() {
    return state >= CANCELLED;
  }

  @Override
  public final boolean isDone() {
    return state > DUE;
  }

  /** A task that waits for its own due timer publishes what it holds first (as submit's get). */
  @Override
  public final V get() throws InterruptedException, ExecutionException {
    int s = state;
    if (s <= COMPLETING) {
      if (s <= DUE) {
        Engine.beforeBlocking();
      }
      s = awaitDone(false, 0L);
    }
    return report(s);
  }

  @Override
  public final V get(long timeout, TimeUnit unit)
      throws InterruptedException, ExecutionException, TimeoutException {
    Objects.requireNonNull(unit, "unit must not be null");
    long nanos = unit.toNanos(timeout);
    int s = state;
    if (s <= COMPLETING) {
      if (s <= DUE) {
        Engine.beforeBlocking();
      }
      s = awaitDone(true, nanos);
      if (s <= COMPLETING) {
        throw new TimeoutException();
      }
    }
    return report(s);
  }

  @SuppressWarnings("unchecked")
  private V report(int s) throws ExecutionException {
    if (s == NORMAL) {
      return (V) outcome;
    }
    if (s >= CANCELLED) {
      throw new CancellationException();
    }
    throw new ExecutionException((Throwable) outcome);
  }

  /**
   * Waits until the future completes, the wait times out (then returns the state, not done), or the
   * thread is interrupted (then throws). A waiter pushes itself on {@link #waiters} and parks; the
   * completing thread, after setting the final state, drains the stack and unparks each waiter
   * (publish, then check: a waiter re-reads the state after it pushed itself).
   */
  private int awaitDone(boolean timed, long nanos) throws InterruptedException {
    long deadlineNanos = timed ? System.nanoTime() + nanos : 0L;
    Waiter w = null;
    boolean pushed = false;
    for (;;) {
      int s = state;
      if (s > COMPLETING) {
        if (w != null) {
          w.thread = null;
        }
        return s;
      }
      if (s == COMPLETING) {
        Thread.yield(); // the outcome is being written: a moment
      } else if (Thread.interrupted()) {
        unlink(w);
        throw new InterruptedException();
      } else if (w == null) {
        if (timed && nanos <= 0L) {
          return s;
        }
        w = new Waiter();
      } else if (!pushed) {
        Waiter top = waiters;
        w.next = top;
        pushed = WAITERS.compareAndSet(this, top, w);
      } else if (timed) {
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0L) {
          unlink(w);
          return state;
        }
        LockSupport.parkNanos(this, left);
      } else {
        LockSupport.park(this);
      }
    }
  }

  /** A waiter gave up (interrupted, timed out): drops it and any other left-behind node. */
  private void unlink(Waiter w) {
    if (w == null) {
      return;
    }
    w.thread = null;
    retry:
    for (;;) {
      Waiter prev = null;
      for (Waiter q = waiters; q != null; ) {
        Waiter next = q.next;
        if (q.thread != null) {
          prev = q;
        } else if (prev != null) {
          prev.next = next;
          if (prev.thread == null) {
            continue retry; // prev gave up meanwhile: start over
          }
        } else if (!WAITERS.compareAndSet(this, q, next)) {
          continue retry;
        }
        q = next;
      }
      return;
    }
  }

  /** The future completed: every waiter wakes (each re-reads the state). */
  private void wakeWaiters() {
    for (Waiter w; (w = waiters) != null; ) {
      if (WAITERS.weakCompareAndSet(this, w, null)) {
        for (; w != null; w = w.next) {
          Thread t = w.thread;
          if (t != null) {
            w.thread = null;
            LockSupport.unpark(t);
          }
        }
        return;
      }
    }
  }

  @Override
  public long getDelay(TimeUnit unit) {
    return unit.convert(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
  }

  @Override
  public int compareTo(Delayed other) {
    if (other == this) {
      return 0;
    }
    if (other instanceof DelayedTask<?> o) {
      // One reading for both sides: two timers due at the same instant compare equal (review
      // r10, F2: each side read the clock, so each could compare greater than the other).
      return Long.signum(deadline - o.deadline);
    }
    return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
  }

  @Override
  public String toString() {
    int s = state;
    String status = s == NORMAL ? "[Completed normally]"
        : s == EXCEPTIONAL ? "[Completed exceptionally: " + outcome + "]"
        : s >= CANCELLED ? "[Cancelled]"
        : "[Not completed, task = " + job + "]";
    return super.toString() + status;
  }
}
