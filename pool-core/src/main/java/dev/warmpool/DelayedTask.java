package dev.warmpool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RunnableScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A delayed or periodic task: a future that waits on the {@link SharedTimer} and, when due, is handed
 * to its pool or lane by {@code onDue} as an accepted task (admitted work: never rejected for being
 * full). A periodic task is re-armed only after its run returned, so it never overlaps itself; a run
 * that throws completes the future exceptionally and stops it. Cancelling removes it from the timer at
 * once, or withdraws its hand-off if it is due and has not started.
 *
 * <h2>Phases</h2>
 * Beside the future's own state, {@link #phase} says where the task is:
 * <pre>
 *   PENDING -> DUE      the timer fired, its owners open: handed on as an accepted task (CAS)
 *   PENDING -> OFF      cancelled before it was due: by its future, or by closing an owner (CAS)
 *   DUE     -> PENDING  a periodic run returned: re-armed, then it re-checks its owners (CAS)
 *   DUE     -> OFF      cancelled while due (its hand-off is withdrawn), or its last run ended
 * </pre>
 * Closing an owner ({@link Timers#close}) cancels only PENDING timers: a due timer is an accepted
 * task and runs under {@code shutdown()}, or is handed back by {@code shutdownNow()} (guarantee 7).
 * The hand-off's handle is bound after the hand-off and a cancel may come first: {@link LateHandle}.
 */
final class DelayedTask<V> extends FutureTask<V>
    implements RunnableScheduledFuture<V>, Timers.Timer, FailureAware {
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
  private static final int OFF = 2;
  private static final VarHandle PHASE;

  static {
    try {
      PHASE = MethodHandles.lookup().findVarHandle(DelayedTask.class, "phase", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** Its place on the timer, and the callable its future runs (no adapter object of its own). */
  private final Entry<V> entry;
  /** 0: one-shot; > 0: fixed rate; < 0: fixed delay of {@code -period}. */
  private final long period;
  /**
   * Hands the due task to its pool or lane; returns its handle there, null if a closed lane refused
   * it, or throws if the pool terminated. A lane ({@link Lane}) also keeps the timer while it is
   * pending (closing the lane cancels it).
   */
  private final Owner onDue;
  /** The pool's timers (closed by shutdown). */
  private final Timers owner;
  private final LateHandle handOff = new LateHandle();
  @SuppressWarnings("unused") // accessed through PHASE
  private volatile int phase = PENDING;
  /** The exception of the current run, rethrown so that the pool counts and reports it. */
  private Throwable failure;
  /**
   * The runnable as scheduled (run by {@link Entry#call}, and for a hand-back), or null for a
   * callable. It is also who hears of a cancellation if it is a {@link CancellationAware}, and who
   * reports its failures if it is a {@link FailureAware} (looked up then, not kept in fields: idle
   * timers may be many).
   */
  private final Runnable runnable;
  /** The pool whose task timers hear of each run (set before the timer starts). */
  AbstractWorkerPool timedBy;
  /**
   * When the current run became due and was handed on (System.nanoTime): a timer is accepted work
   * from then, so its wait is measured from there, not from the schedule call.
   */
  private volatile long dueAt;
  /** Its links in its pool's timers ({@link Timers}, under that lock). */
  private Timers.Timer prevTimer;
  private Timers.Timer nextTimer;

  /**
   * The task's entry on the shared timer and the callable its future runs: one object for both,
   * where an inner entry and {@code Executors.callable}'s adapter were two.
   */
  private static final class Entry<V> extends SharedTimer.Task implements Callable<V> {
    /** Set once, in the task's constructor, before the task is published. */
    DelayedTask<V> task;
    /** The callable as scheduled; null for a runnable (the task's {@code runnable}). */
    private final Callable<V> callable;

    Entry(Callable<V> callable) {
      this.callable = callable;
    }

    @Override
    void fire() {
      task.fire();
    }

    @Override
    public V call() throws Exception {
      if (callable != null) {
        return callable.call();
      }
      task.runnable.run();
      return null;
    }
  }

  /** On the timer thread (or the scheduler's, for a task due now): the task is due. */
  private void fire() {
    // The fire holds the pool's timers open until the task is handed on: the pool does not
    // terminate in between, so the hand-off is accepted or the future completes first.
    if (!owner.tryBeginFire()) {
      // Closing raced this fire: the timer was not due when it closed. The close's sweep (or,
      // for a periodic re-arm the sweep saw DUE, the re-arm's own check) cancels it: it stays
      // registered and PENDING until then. Not here: this fire is not counted, so the close
      // would not wait for it, and a cancel begun here (phase taken, future not yet cancelled)
      // lost the sweep's CAS and let the pool report terminated with this timer's future not
      // done (guarantee 7). The close waits for its own sweep.
      return;
    }
    try {
      if (onDue instanceof Lane lane && lane.isClosed()) {
        cancelIfPending();
      } else if (PHASE.compareAndSet(this, PENDING, DUE)) {
        handToOwner();
      }
    } finally {
      owner.endFire();
    }
  }

  DelayedTask(Callable<V> callable, long period, Owner onDue, Timers owner) {
    this(new Entry<>(java.util.Objects.requireNonNull(callable)), null, period, onDue, owner);
  }

  DelayedTask(Runnable runnable, long period, Owner onDue, Timers owner) {
    this(new Entry<>(null), java.util.Objects.requireNonNull(runnable), period, onDue, owner);
  }

  private DelayedTask(Entry<V> entry, Runnable runnable, long period, Owner onDue, Timers owner) {
    super(entry);
    this.entry = entry;
    entry.task = this; // before the task is published (start), so before any fire or run
    this.runnable = runnable;
    this.period = period;
    this.onDue = onDue;
    this.owner = owner;
  }

  /**
   * A run threw and the pool has no failure handler of its own: the task reports it if it is a
   * {@link FailureAware}, else the thread's uncaught-exception handler hears of it, as for any task.
   */
  @Override
  public void onFailure(Throwable t) {
    if (runnable instanceof FailureAware r) {
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
  DelayedTask<V> start(long delayNanos) {
    owner.register(this);
    if (onDue instanceof Lane lane) {
      lane.register(this);
    }
    if (ownerClosed()) { // publish, then check: a close that swept before our register
      if (PHASE.compareAndSet(this, PENDING, OFF)) {
        forget();
        return null; // never armed, never accepted
      }
      return this; // the close's sweep cancelled it
    }
    long now = System.nanoTime();
    if (delayNanos <= 0) {
      entry.deadline = now; // off the timer: a fixed rate counts its next run from here
      entry.fire(); // as the timer fires it: a close racing us cancels it, or it is handed on
    } else {
      arm(now + clamp(delayNanos));
    }
    return this;
  }

  /** The task's entry on the timer, whose {@code fire} runs on the timer thread; for tests. */
  SharedTimer.Task timerEntry() {
    return entry;
  }

  private boolean ownerClosed() {
    return owner.isClosed() || (onDue instanceof Lane lane && lane.isClosed());
  }

  /** On the timer thread: the task is due; hands it on, and binds its handle there. */
  private void handToOwner() {
    TaskHandle h;
    dueAt = System.nanoTime(); // before the hand-off: the run may start at once
    try {
      h = onDue.due(this);
    } catch (RuntimeException terminated) { // the pool terminated before the task came due
      h = null;
    }
    if (h == null) {
      cancel(false);
      return;
    }
    handOff.bind(h); // withdraws it at once if it was cancelled meanwhile
  }

  /**
   * Checks the arguments of a periodic schedule and returns its period in nanoseconds, positive for
   * a fixed rate ({@code sign} 1) and negative for a fixed delay ({@code sign} -1).
   */
  static long checkPeriodic(Runnable task, long period, TimeUnit unit, String what, int sign) {
    java.util.Objects.requireNonNull(task, "task must not be null");
    java.util.Objects.requireNonNull(unit, "unit must not be null");
    if (period <= 0) {
      throw new IllegalArgumentException(what + " must be > 0, was " + period);
    }
    return sign * Math.max(1, clamp(unit.toNanos(period)));
  }

  static long clamp(long delayNanos) {
    return Math.max(0, Math.min(delayNanos, Long.MAX_VALUE >> 2));
  }

  private void arm(long deadline) {
    SharedTimer.INSTANCE.schedule(entry, deadline);
    if (isDone()) {
      SharedTimer.INSTANCE.cancel(entry); // cancelled while arming
    }
  }

  /**
   * Runs once (or one period). A run that throws completes the future exceptionally, as
   * {@code ScheduledExecutorService} requires, and the exception is then rethrown so that the pool
   * counts it as failed and passes it to its failure handler.
   */
  @Override
  public void run() {
    AbstractWorkerPool pool = timedBy;
    if (pool == null || !pool.timed()) {
      runOnce();
      return;
    }
    long start = System.nanoTime();
    try {
      runOnce();
    } finally {
      pool.taskRan(start - dueAt, System.nanoTime() - start);
    }
  }

  private void runOnce() {
    if (period == 0) {
      super.run();
      finish();
    } else if (runAndReset()) {
      rearm();
    } else {
      finish();
    }
    Throwable t = failure;
    if (t != null) {
      failure = null;
      throw DelayedTask.<RuntimeException>sneaky(t);
    }
  }

  /** A periodic run returned: arm the next, then check the owners (publish, then check). */
  private void rearm() {
    if (!PHASE.compareAndSet(this, DUE, PENDING)) {
      return; // cancelled during the run
    }
    if (!ownerClosed()) {
      arm(period > 0 ? entry.deadline + period : System.nanoTime() - period);
    }
    if (ownerClosed()) { // publish (PENDING, armed), then check: a close that swept before
      cancelIfPending();
    }
  }

  private void finish() {
    phase = OFF;
    forget();
  }

  @Override
  protected void setException(Throwable t) {
    failure = t;
    super.setException(t);
  }

  @SuppressWarnings("unchecked")
  private static <E extends Throwable> E sneaky(Throwable t) throws E {
    throw (E) t;
  }

  private void forget() {
    owner.forget(this);
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
      if (tasks.get(i) instanceof DelayedTask<?> d && d.runnable != null) {
        tasks.set(i, DecoratedTask.original(d.runnable));
        d.cancel(false);
      }
    }
  }

  @Override
  public Timers.Timer prevTimer() {
    return prevTimer;
  }

  @Override
  public Timers.Timer nextTimer() {
    return nextTimer;
  }

  @Override
  public void linkTimer(Timers.Timer prev, Timers.Timer next) {
    prevTimer = prev;
    nextTimer = next;
  }

  /** Closing an owner: cancels the task if it is not due (a due task is accepted work). */
  @Override
  public void cancelIfPending() {
    if (PHASE.compareAndSet(this, PENDING, OFF)) {
      cancel(false);
    }
  }

  /**
   * Cancels the future: takes the task off the timer, or withdraws its hand-off if it is due and has
   * not started (then it counts in none of the pool's task counters), and tells a
   * {@link CancellationAware} task.
   */
  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    boolean cancelled = super.cancel(mayInterruptIfRunning);
    phase = OFF;
    SharedTimer.INSTANCE.cancel(entry);
    forget();
    if (cancelled) {
      handOff.cancel();
      if (runnable instanceof CancellationAware l) {
        if (SharedTimer.isTimerThread()) {
          ThreadStarter.ASYNC.execute(() -> tell(l)); // no user code on the timer thread
        } else {
          tell(l);
        }
      }
    }
    return cancelled;
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
  public boolean isPeriodic() {
    return period != 0;
  }

  /** A task that waits for its own due timer publishes what it holds first (as submit's get). */
  @Override
  public V get() throws InterruptedException, java.util.concurrent.ExecutionException {
    if (!isDone()) {
      Engine.beforeBlocking();
    }
    return super.get();
  }

  @Override
  public V get(long timeout, TimeUnit unit) throws InterruptedException,
      java.util.concurrent.ExecutionException, java.util.concurrent.TimeoutException {
    if (!isDone()) {
      Engine.beforeBlocking();
    }
    return super.get(timeout, unit);
  }

  @Override
  public long getDelay(TimeUnit unit) {
    return unit.convert(entry.deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
  }

  @Override
  public int compareTo(Delayed other) {
    if (other == this) {
      return 0;
    }
    return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
  }
}
