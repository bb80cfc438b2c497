package dev.warmpool;

import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The worker loop and the wake-up protocol of a pool, end to end: how an accepted task reaches a
 * worker (run queue, spinners, the idle stack, thread starts) and what a worker does between tasks
 * (take, spin, park, finish, retire). {@link Worker} is the thread and calls {@link #runWorker}, as
 * {@code ThreadPoolExecutor.Worker.run} calls {@code runWorker}. What the engine needs from the pool
 * above it (seats, the waiting line, the run state) is the small {@link Host} role.
 *
 * <h2>Seats and the run queue</h2>
 * A task reaches the engine holding a seat ({@link #place}); it waits in the run queue until a worker
 * takes it, and gives its seat back when it finishes ({@link #finishTask}). Seats bound queued plus
 * running tasks by the capacity, so the queue never overflows. A worker that finishes a task hands
 * its seat to the head of the waiting line, if any, and runs that entry next; else it takes the next
 * task from the queue before it thinks of parking, so a stream of tasks is carried by the workers
 * already running.
 *
 * <h2>Signal only when needed</h2>
 * After Go's scheduler ({@code wakep}, {@code nmspinning}). {@link #spinning} counts workers spinning
 * plus workers being woken to spin. After queueing a task ({@link #signalWork}): if some worker
 * spins, nobody is woken; else the count is taken (0 to 1) and handed to the most recently parked
 * worker, which is unparked; else, with nobody idle, a new worker is started. A woken spinner that
 * finds work wakes the next one if it was the last spinner and tasks remain ({@link #foundWork}). So
 * about one wake-up is in flight per burst. Four publish-then-check pairs, each a volatile write
 * followed by a volatile read on both sides, make sure no wake-up is lost:
 * <ul>
 *   <li>producer: publish in the queue, read the spinner count / spinner: drop the count, read the
 *       queue;</li>
 *   <li>waker: give the count back, read the idle stack / parking worker: push itself, read the
 *       queue;</li>
 *   <li>producer: publish, reserve a slot / exiting worker: release its slot, read the queue;</li>
 *   <li>producer (or a grow, after moving the queue): publish, read {@link #starting} / a start
 *       that found the queue empty: give back its slot and {@code starting}, read the queue.</li>
 * </ul>
 *
 * <h2>Held tasks</h2>
 * A task that queues work on its own pool (a reactive pipeline's drain loop, which subscribes the next
 * inner source from inside the task that finished the previous one) does not publish it or wake
 * anyone: its worker holds it ({@link HeldTasks}) and, when the task ends, runs the first itself and
 * publishes the rest with one signal (Go's {@code runnext}, Tokio's LIFO slot). Published at once,
 * it would be taken by a spinner while its producer is still running, and the two threads would
 * contend for the pipeline's state; a fixed pool, whose queue is rarely empty, avoids that by
 * accident. A held task holds its seat, so the pool's bounds and termination are unchanged.
 * A task may block after it queued work (it may even wait for it), so held work never waits long:
 * <ul>
 *   <li>the first hold arms a <b>hold watch</b> on the shared timer ({@link #HOLD_WATCH_NANOS}); when
 *       it fires, every worker's held tasks are published and signalled;</li>
 *   <li>a worker that is about to block on this library (waiting in line for a seat, in
 *       {@code Future.get} of a task it submitted or of {@code invokeAll}, in a subpool's
 *       {@code awaitTermination}) publishes its held tasks first ({@link #beforeBlocking}), and
 *       {@code invokeAny} holds nothing; a wait outside the library (a latch, a
 *       {@code CompletableFuture.join}, Reactor's {@code block()}) is freed only by the watch, so
 *       it costs at least {@link #HOLD_WATCH_NANOS} (review 5 measured 1.07 ms against 2.6 us
 *       before held tasks); so when the watch finds a task that held work for most of a period,
 *       the engine stops holding for a while ({@link #holdOff}: from {@link #HOLD_OFF_NANOS},
 *       doubled each time the pattern is found again, up to {@link #MAX_HOLD_OFF_NANOS}): a
 *       pattern that waits for its own subtasks pays one period per hold-off, not per wait;</li>
 *   <li>a worker runs at most {@link #HELD_RUNS_BUDGET} held tasks in a row while tasks wait in
 *       the run queue, so a chain of tasks that each queue the next does not keep it from them;</li>
 *   <li>a call that finds its pool full (refused, or about to wait in line) publishes what its
 *       caller holds first ({@code Admission.whenFull}): held tasks hold seats, so they may cost
 *       a nonblocking rejection as queued tasks do, but idle workers start on them at once;</li>
 *   <li>{@code shutdownNow} hands them back with the queued tasks; a worker that exits (shrink,
 *       a failure handler that threw) publishes them.</li>
 * </ul>
 * A task queued by a thread that is not a worker of this pool (a caller, another pool, the timer)
 * is published and signalled at once, so a burst from outside wakes a worker per task as before.
 *
 * <h2>Thread starts hold no token</h2>
 * A thread factory is user code and may block, so nobody calls it while holding the spinner count or
 * a lock: a blocked factory must delay only the task that needs its thread, never one an idle or
 * running worker could take (guarantee 12). A start for queued tasks counts in {@link #starting},
 * "a new worker is on its way and will look at the queue": producers start no more workers than
 * tasks are queued beyond those on their way (no start storm; one blocked start does not stop the
 * next), and still wake idle workers. The new worker takes the spinner count itself when it first
 * runs and only then leaves {@code starting} (take, then leave: no window where neither counts it),
 * then reads the queue. Whoever wins the worker's life CAS ({@link Worker#abandon}) settles it: the
 * worker when it runs, the starter when the start failed.
 *
 * <p><b>Who calls the factory.</b> Only a caller of {@code execute} or {@code tryExecute} (the
 * calls that answer at once: accepted, or rejected with the factory's failure), on its own thread,
 * when that is neither a worker of any pool nor the timer thread ({@link ThreadStarter#mayStartHere}).
 * Every other start (for {@code enqueue}, {@code submit}, a line entry handed a seat, a spinner that
 * found work, a worker that parks or exits, a due timer) is handed to {@link #background}: so
 * {@code enqueue} never blocks its caller, and a worker that holds a task or a seat never waits for
 * a factory.
 *
 * <p>Such a call also starts a worker directly, with its task as the worker's first (as
 * {@code ThreadPoolExecutor} does), when nobody spins, nobody is idle and a slot is free: the thread
 * is needed anyway, the factory then blocks only the caller that needs it, and a failure rejects that
 * one task at its own call. The price (a known limitation): if the factory blocks, that one task
 * waits for it even if another worker frees up meanwhile. shutdownNow hands such a task back
 * ({@link Worker#claimFirst}).
 *
 * <h2>Idle, retire, exit</h2>
 * A worker that found nothing pushes itself on the {@link IdleStack} and parks until whoever pops it
 * writes its signal ({@link Worker.Wake}): WAKE to spin, RETIRE to exit. Whoever retires a worker
 * gives its slot back at once, before the thread even wakes, so an idle nonblocking pool never
 * rejects because a worker is expiring. The {@link Cleaner} retires the stale bottom of the stack;
 * shutdown retires every idle worker; a shrinking resize retires idle surplus now and busy surplus
 * after its task.
 */
final class Engine {

  /** What the engine needs from the pool above it: its seats, waiting line and run state. */
  interface Host {
    /** The current capacity: the bound on seats and on worker slots. */
    int capacity();

    /** Whether the pool accepts new tasks (not shut down). */
    boolean isRunning();

    /** Whether work waits in the waiting line for a seat. */
    boolean hasWaiters();

    /**
     * Passes the seat of a task that just finished to the head of the waiting line; returns that
     * entry (now TAKEN, its caller woken), or null if nobody waits or the pool is over capacity.
     */
    TaskEnvelope passSeat();

    /** Gives one seat back, serves the line with it, and terminates the pool if it may. */
    void releaseSeat();

    /** Seats held now: tasks queued or running. */
    int seats();

    /** Terminates the pool if it is shut down and nothing holds it any more. */
    void tryTerminate();
  }

  /** How an idle worker waits for its signal; the model check replaces the park. */
  interface Parking {
    Worker.Wake await(Worker w);
  }

  /** What a worker does after its task. */
  enum AfterTask {
    /**
     * Its slot holds the next task: the head of the waiting line, handed the seat of its task, or
     * the first task that its task queued (held).
     */
    RUN_NEXT,
    /** Its seat is given back: take the next task, spin, or park. */
    LOOK_FOR_WORK,
    /** It is surplus after a shrinking resize: exit. */
    EXIT
  }

  /** At most this many idle workers spin at once: more would take the CPU from busy threads. */
  static final int MAX_SPINNERS = Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
  /**
   * Spin iterations of a caller blocked for a seat before it parks: about 10 us on the 2-vCPU
   * machine of the benchmarks (19 ns a pause), under a park/unpark round trip.
   */
  static final int SPINS = Runtime.getRuntime().availableProcessors() > 1 ? 1 << 9 : 0;
  /**
   * Spin iterations of an idle worker before it parks: about 2.5 us there. A spinning worker takes
   * a core (or its SMT sibling) from the thread that will need it next: with 512, as callers spin,
   * a task that joins a subtask on its own pool waited 42-45 us at p50 against 27-28 us with 128
   * (capacity 2, one call per 2 ms, medians of 9, three runs each); no spin at all left every
   * hand-off to a park/unpark (blocking {@code execute} at capacity 2 fell 3.5x).
   */
  static final int WORKER_SPINS = Runtime.getRuntime().availableProcessors() > 1 ? 1 << 7 : 0;
  /**
   * How many held tasks a worker runs next in a row while tasks wait in the run queue (Tokio caps
   * its LIFO slot likewise): a task queued from outside is never left to the hold watch.
   */
  static final int HELD_RUNS_BUDGET = 64;
  /** How long a running task may hold the tasks it queued before the watch publishes them. */
  static final long HOLD_WATCH_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
  /** How long holding first stays off after the watch found a holder that waited (holdOff). */
  static final long HOLD_OFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  /** The longest hold-off: a steady pattern of waits then pays one watch period per 10 s. */
  static final long MAX_HOLD_OFF_NANOS = TimeUnit.SECONDS.toNanos(10);
  /** How long after a worker failed to start a start is tried again. */
  private static final long START_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  private final Host host;
  private final Accounting accounting;
  private final PoolCounters counters;
  final RunQueue runQueue;
  final IdleStack idle;
  private final ThreadStarter starter;
  final Cleaner cleaner;
  /** The cleaner's view of the idle workers. */
  final Cleaner.Workers idleWorkers;
  private final SharedTimer timer;
  /** Where starts that may not run on the calling thread go (workers, the timer thread). */
  private final Executor background;
  private final Parking parking;
  private final int spins;
  final Ticker ticker;

  /** Workers spinning now, plus workers being woken to spin. */
  private final AtomicInteger spinning = new AtomicInteger();
  /** Workers started for queued tasks that have not yet looked at the queue (see class notes). */
  private final AtomicInteger starting = new AtomicInteger();
  /** A background start is submitted and has not begun yet. */
  private final AtomicBoolean backgroundPending = new AtomicBoolean();
  /** The hold watch is on the timer (see the class notes). */
  private final AtomicBoolean holdWatchArmed = new AtomicBoolean();
  /** Holding is off for a while: a holder was found waiting (see {@link #holdOff}). */
  private volatile boolean holdingOff;
  /** How many times holding went off; for tests. */
  private volatile int holdOffs;
  /**
   * How long the next hold-off lasts: doubled by each holder found waiting, halved (not below
   * {@link #HOLD_OFF_NANOS}) by each stretch of holding as long as it with no holder found waiting.
   * Only the watch and the resume write it (timer thread).
   */
  private long holdOffNanos = HOLD_OFF_NANOS;
  /** Since when holding has been on with no holder found waiting (timer thread). */
  private long holdingWellSince;
  /** How many times the watch found tasks held (and published them); for tests. */
  private volatile int watchFoundHeld;
  private final SharedTimer.Task holdResume = new SharedTimer.Task() {
    @Override
    void fire() {
      holdingWellSince = timer.now();
      holdingOff = false;
    }
  };
  private final SharedTimer.Task holdWatch = new SharedTimer.Task() {
    @Override
    void fire() {
      publishAllHeld();
    }
  };
  /** Serializes trimming surplus workers, so two trims do not both retire the same surplus. */
  private final Object trimLock = new Object();
  private final SharedTimer.Task startRetry = new SharedTimer.Task() {
    @Override
    void fire() {
      startInBackground();
    }
  };

  Engine(Host host, Accounting accounting, int capacity, long maxIdleNanos, Ticker ticker,
      ThreadStarter starter, SharedTimer timer, Executor background, Parking parking, int spins) {
    this.host = host;
    this.accounting = accounting;
    this.counters = accounting.counters;
    this.ticker = ticker;
    this.idle = new IdleStack(capacity);
    this.runQueue = new RunQueue(capacity);
    this.starter = starter;
    this.timer = timer;
    this.background = background;
    this.parking = parking;
    this.spins = spins;
    this.idleWorkers = new IdleWorkers();
    this.cleaner = new Cleaner(idleWorkers, maxIdleNanos, timer);
  }

  // ---------------------------------------------------------------------------------------------
  // Producer side

  /**
   * Hands a task that holds a seat to a worker: starts one for it directly if nobody spins, nobody
   * is idle, a slot is free and the caller may wait for a factory; else queues it and signals.
   *
   * @param admitted whether the task is admitted work: a failed start then queues it and retries
   *     later instead of failing
   * @param callerMayBlock whether the caller answers at once and may wait for a factory
   *     ({@code execute}, {@code tryExecute}): only then is the factory called on the caller's
   *     thread, and never on a worker or the timer thread
   * @return null if placed; the start failure if a direct start failed and the task is not
   *     {@code admitted} (the caller then rejects the task, whose seat is still held)
   */
  Throwable place(TaskKind kind, Object arg, boolean admitted, boolean callerMayBlock) {
    if (callerMayBlock && spinning.get() == 0 && idle.size() == 0
        && ThreadStarter.mayStartHere() && starter.tryReserve(host.capacity())) {
      Worker w = new Worker(this, kind, arg);
      Throwable failure = startWorker(w);
      if (failure == null) {
        return null;
      }
      if (!w.claimFirst()) {
        // A shutdownNow handed the task back while the factory ran: it was accepted. The failed
        // start's slot may have been all that kept the pool from terminating.
        host.tryTerminate();
        return null;
      }
      if (!admitted) {
        return failure;
      }
      scheduleStartRetry(); // admitted work is never rejected: it waits for a worker
    }
    if (hold(kind, arg)) {
      return null;
    }
    runQueue.offer(kind, arg);
    signalWork(callerMayBlock);
    return null;
  }

  /** Queues a task that holds a seat (a line entry handed a seat) and signals. */
  void queue(TaskKind kind, Object arg) {
    if (hold(kind, arg)) {
      return;
    }
    runQueue.offer(kind, arg);
    signalWork(false);
  }

  /**
   * Holds a task queued by a running task of this engine on its worker, to run or publish when that
   * task ends (see the class notes); false if the caller is not such a task.
   */
  private boolean hold(TaskKind kind, Object arg) {
    Worker me = Worker.current();
    if (me == null || me.engine != this || !me.inTask || holdingOff) {
      return false;
    }
    if (me.held.add(kind, arg, timer) && !holdWatchArmed.get() && holdWatchArmed.compareAndSet(false, true)) {
      try {
        timer.scheduleIn(holdWatch, HOLD_WATCH_NANOS);
      } catch (Throwable noTimerThread) {
        // The timer could not start its thread (no native thread left): nothing will fire, so
        // nothing may stay held (ours, nor what others held meanwhile relying on this watch), and
        // the watch must be free to arm on a later hold. The task was accepted: publish it
        // instead of failing the call.
        publishAllHeld();
      }
    }
    return true;
  }

  /**
   * Publishes what {@code w} holds, if anything, and signals; {@code keepFirst}: the first goes to
   * w's slot. The emptiness look is the volatile read the watch's ordering relies on.
   */
  private void publishHeld(Worker w, boolean keepFirst) {
    if (!w.held.isEmpty() && w.held.drainTo(keepFirst ? w : null, runQueue) != 0) {
      signalWork(false);
    }
  }

  /** The hold watch fired: every held task is published now. */
  void publishAllHeld() {
    // Publish (the flag cleared), then check (each worker's size): a holder adds (writes its
    // size), then reads the flag. Both are volatile, so one of us sees the other; with a plain size
    // both could miss (a store-load reorder, which x86 allows) and leave a task held unwatched.
    holdWatchArmed.set(false);
    long stuckIfSince = timer.now() - HOLD_WATCH_NANOS / 2;
    boolean wasOff = holdingOff;
    starter.forEachWorker(w -> {
      if (!holdingOff && w.held.heldSince(stuckIfSince)) {
        holdOff(); // before the publish: what the waiter does next must see holding off
      }
      if (!w.held.isEmpty()) {
        watchFoundHeld++; // before the publish, so a test that sees the task run sees it counted
      }
      publishHeld(w, false);
    });
    if (!wasOff && !holdingOff && timer.now() - holdingWellSince >= holdOffNanos) {
      // as long as the next hold-off with no holder waiting: forget the pattern as fast as it grew
      holdOffNanos = Math.max(HOLD_OFF_NANOS, holdOffNanos / 2);
      holdingWellSince = timer.now();
    }
  }

  /**
   * A task held work for most of a watch period: it is probably waiting for that work outside this
   * library (a latch, {@code CompletableFuture.join}, Reactor's {@code block()}), which costs a
   * whole period each time. So the engine stops holding for a while and publishes at once, as
   * before held tasks; such a pattern then pays one period per hold-off, not per wait. Each hold-off
   * that ends only to find a waiting holder again lasts twice as long as the last (from
   * {@link #HOLD_OFF_NANOS} up to {@link #MAX_HOLD_OFF_NANOS}): a task that joins its subtask every
   * few milliseconds soon pays one period per 10 s, under its p99 (review 5 measured a p99 of
   * 1.6-3.6 ms against 0.6-1.3 ms for a fixed pool with a fixed 100 ms hold-off).
   */
  private void holdOff() {
    holdOffs++; // only the timer thread writes it
    holdingOff = true;
    long length = holdOffNanos;
    holdOffNanos = Math.min(MAX_HOLD_OFF_NANOS, length * 2);
    try {
      timer.scheduleIn(holdResume, length);
    } catch (Throwable noTimerThread) {
      // nothing would resume holding: it stays off, which is only the old, slower policy
    }
  }

  /**
   * The calling thread is about to block (waiting for a seat, or for a future of this library):
   * if it is a worker whose task holds tasks, they are published first, as they may be what it
   * waits for.
   */
  static void beforeBlocking() {
    Worker me = Worker.current();
    if (me != null) {
      me.engine.publishHeld(me, false);
    }
  }

  /**
   * The calling task is about to queue work it waits for at once, where no hook of ours sees the
   * wait ({@code invokeAny}): publishes what it holds and stops it holding. Returns its worker, to
   * hand to {@link #resumeHolding}, or null if the caller is not a task of a pool.
   */
  static Worker stopHolding() {
    beforeBlocking();
    Worker me = Worker.current();
    if (me == null || !me.inTask) {
      return null;
    }
    me.inTask = false;
    return me;
  }

  /** Undoes {@link #stopHolding}. */
  static void resumeHolding(Worker me) {
    if (me != null) {
      me.inTask = true;
    }
  }

  /**
   * Makes sure a worker will look at the queue: nothing if one spins; else takes the spinner count
   * and wakes the top idle worker; else starts one, on this thread only if {@code inline} (the
   * caller is an {@code execute}) and it is neither a worker nor the timer thread.
   */
  private void signalWork(boolean inline) {
    for (;;) {
      if (spinning.get() != 0 || runQueue.isEmpty()) {
        return;
      }
      if (idle.size() != 0) {
        if (!spinning.compareAndSet(0, 1)) {
          return; // somebody spins now, and reads the queue after its count change
        }
        Worker w = idle.pop();
        if (w != null) {
          w.wake(Worker.Wake.WAKE); // the spinner count goes with it
          return;
        }
        spinning.decrementAndGet();
        // Give the count back, then check the stack: a worker that pushed itself after our pop
        // saw our count and relied on us.
        continue;
      }
      // Nobody spins and nobody is idle. If every slot is taken, every worker is running (each
      // reads the queue after its task) or about to park (it reads the queue after its push) or
      // exiting (it reads the queue after its release): nobody to wake or start.
      if (starter.workers() >= host.capacity()) {
        return;
      }
      int inFlight = starting.get();
      if (inFlight >= runQueue.size()) {
        return; // a worker on its way for each queued task: each reads the queue once it runs
      }
      if (!inline || !ThreadStarter.mayStartHere()) {
        startInBackground();
        return;
      }
      if (!starting.compareAndSet(inFlight, inFlight + 1)) {
        continue;
      }
      if (!starter.tryReserve(host.capacity())) {
        starting.decrementAndGet(); // then check again: a slot may have come free meanwhile
        continue;
      }
      if (runQueue.isEmpty()) {
        // Publish (the slot), then check: the tasks went meanwhile (a worker took them, or
        // shutdownNow handed them back and the pool may have terminated), so no thread may start.
        abortStart();
        // Publish (`starting` dropped), then check: our look came before the drop, so a producer
        // that queued after the look saw this start in flight and relied on it. So did a grow
        // (`grown`) whose moved tasks our look missed: it read the old ring (its tasks moved out)
        // or the new one (not yet moved in).
        if (runQueue.isEmpty()) {
          return;
        }
        continue;
      }
      Worker w = new Worker(this, null, null);
      w.opensStarting = true; // before the factory sees it: a factory may start it at once
      Throwable failure = startWorker(w);
      if (failure == null) {
        return; // the worker opens `starting`, then reads the queue
      }
      starting.decrementAndGet();
      scheduleStartRetry(); // the task stays queued: admitted, never rejected after acceptance
      host.tryTerminate(); // the slot it held may have been all that kept a shut-down pool open
      if (idle.size() == 0) {
        return;
      }
    }
  }

  /** Gives back a slot reserved for a start that is no longer needed. */
  private void abortStart() {
    starter.release();
    starting.decrementAndGet();
    host.tryTerminate();
  }

  /** Starts a worker in a reserved slot and schedules the cleaner; returns the cause on failure. */
  private Throwable startWorker(Worker w) {
    Throwable failure = starter.start(w);
    if (failure == null) {
      cleaner.update();
    }
    return failure;
  }

  /** Signals from another thread, which may call the factory; retries later if none is available. */
  private void startInBackground() {
    if (!backgroundPending.compareAndSet(false, true)) {
      return; // one is on its way and signals after it begins
    }
    try {
      background.execute(() -> {
        backgroundPending.set(false);
        signalWork(true);
      });
    } catch (Throwable noThread) { // RejectedExecutionException, OutOfMemoryError
      backgroundPending.set(false);
      scheduleStartRetry();
    }
  }

  private void scheduleStartRetry() {
    timer.scheduleIn(startRetry, START_RETRY_NANOS);
  }

  // ---------------------------------------------------------------------------------------------
  // Worker side

  /** The worker's life: runs tasks until it must exit. Called by {@link Worker#run}. */
  void runWorker(Worker w) {
    // Counted before the worker can count its own stop (the starter counts it before
    // Thread.start, or a factory that started the thread itself got here first).
    if (w.markCounted()) {
      counters.workersStarted.increment();
    }
    boolean normal = false;
    try {
      boolean hasTask = w.kind != null && w.claimFirst();
      if (w.kind != null && !hasTask) { // a shutdownNow handed its first task back, and its seat
        w.clear();
        w.holdsSeat = false;
      }
      for (;;) {
        if (!hasTask && !findTask(w)) {
          break;
        }
        runTask(w);
        AfterTask next = finishTask(w);
        if (next == AfterTask.EXIT) {
          break;
        }
        hasTask = next == AfterTask.RUN_NEXT;
      }
      normal = true;
    } finally {
      workerExited(w, normal);
    }
  }

  /** Runs the task in the worker's slot, counted under this pool's accounting. */
  void runTask(Worker w) {
    TaskKind k = w.kind;
    Object a = w.arg;
    w.clear();
    w.inTask = true;
    try {
      k.run(a, accounting, w);
    } finally {
      w.inTask = false;
    }
  }

  /**
   * Takes the next task into the worker's slot: from the queue, spinning a moment, then parked on
   * the idle stack until woken; false if the worker must exit.
   */
  boolean findTask(Worker w) {
    if (w.opensStarting) {
      // Take the count, then open: producers that saw `starting` relied on us to look.
      w.opensStarting = false;
      w.spinner = tryStartSpinning();
      starting.decrementAndGet();
    }
    for (;;) {
      if (takeFrom(w)) {
        return true;
      }
      if (mayExitIdle()) {
        dropSpinner(w);
        return false;
      }
      if (w.spinner || (w.spinner = tryStartSpinning())) {
        for (int i = 0; i < spins; i++) {
          Thread.onSpinWait();
          if (runQueue.size() != 0 && takeFrom(w)) {
            return true;
          }
        }
        dropSpinner(w);
        // Publish (the count dropped), then check: a producer that saw this worker spinning
        // relied on it. If work is there, spin again; if another spinner exists, it covers it.
        if (!runQueue.isEmpty() && (w.spinner = tryStartSpinning())) {
          continue;
        }
      }
      if (!parkIdle(w)) {
        return false;
      }
    }
  }

  private boolean takeFrom(Worker w) {
    if (!runQueue.poll(w)) {
      return false;
    }
    w.holdsSeat = true;
    if (w.spinner) {
      w.spinner = false;
      foundWork();
    }
    return true;
  }

  private boolean tryStartSpinning() {
    for (int n = spinning.get(); n < MAX_SPINNERS; n = spinning.get()) {
      if (spinning.compareAndSet(n, n + 1)) {
        return true;
      }
    }
    return false;
  }

  private void dropSpinner(Worker w) {
    if (w.spinner) {
      w.spinner = false;
      spinning.decrementAndGet();
    }
  }

  /** A spinner found a task: if it was the last spinner and tasks remain, another must look. */
  private void foundWork() {
    if (spinning.decrementAndGet() == 0 && !runQueue.isEmpty()) {
      signalWork(false);
    }
  }

  /** Whether a worker that found the queue empty after shutdown may exit. */
  private boolean mayExitIdle() {
    if (host.isRunning() || !runQueue.isEmpty() || host.hasWaiters()) {
      return false;
    }
    counters.workersStopped.increment();
    return true;
  }

  /**
   * Pushes the worker on the idle stack and parks it until its signal; true if woken to spin (the
   * waker took the spinner count for it), false if retired.
   */
  private boolean parkIdle(Worker w) {
    idle.push(w, ticker);
    // Publish, then check: work queued after our last look, a shutdown that emptied the stack
    // before our push, or a shrink that found nothing idle before it.
    if (!runQueue.isEmpty()) {
      signalWork(false);
    }
    if (!host.isRunning()) {
      retireAllIdle();
    } else if (starter.workers() > host.capacity()) {
      trimSurplus();
    }
    return woken(w, parking.await(w));
  }

  /** What a worker does with its signal: spin (the waker took the count for it) or exit. */
  boolean woken(Worker w, Worker.Wake signal) {
    if (signal == Worker.Wake.WAKE) {
      w.spinner = true;
      return true;
    }
    return false;
  }

  /** Settles the seat of the task the worker just ran. */
  AfterTask finishTask(Worker w) {
    int capacity = host.capacity();
    if (starter.workers() > capacity && starter.tryReleaseSurplus(capacity)) {
      w.slotReleased = true; // surplus after a shrinking resize
      counters.workersStopped.increment();
      publishHeld(w, false); // before the seat goes: the pool cannot terminate with them held
      w.holdsSeat = false;
      host.releaseSeat();
      return AfterTask.EXIT;
    }
    TaskEnvelope e = host.passSeat();
    if (e != null) { // the seat passes to the head of the line, and this worker runs it
      w.kind = TaskEnvelope.KIND;
      w.arg = e;
      publishHeld(w, false);
      return AfterTask.RUN_NEXT;
    }
    w.holdsSeat = false;
    host.releaseSeat();
    if (!w.held.isEmpty()) {
      // It runs the first task its task queued (warm, with no wake-up), and publishes the rest;
      // but a chain of tasks that each queue the next would keep it from the run queue for good,
      // so after HELD_RUNS_BUDGET in a row, with tasks queued there, the held go behind them.
      publishHeld(w, w.heldRunsInARow < HELD_RUNS_BUDGET || runQueue.isEmpty());
      if (w.kind != null) {
        w.heldRunsInARow++;
        w.holdsSeat = true;
        return AfterTask.RUN_NEXT;
      }
    }
    w.heldRunsInARow = 0;
    return AfterTask.LOOK_FOR_WORK;
  }

  /** The worker's loop ended: normally, or because its failure handler threw. */
  void workerExited(Worker w, boolean normal) {
    if (!normal) {
      counters.workersStopped.increment();
    }
    dropSpinner(w);
    publishHeld(w, false); // held only if its task's failure handler threw
    if (w.opensStarting) { // it exited before its first look (shutdown): open for the next start
      w.opensStarting = false;
      starting.decrementAndGet();
    }
    if (w.holdsSeat) {
      w.holdsSeat = false;
      host.releaseSeat();
    }
    w.lane = null;
    int left = w.slotReleased ? starter.workers() : starter.release();
    // Publish (the slot is free), then check: a producer that found no free slot relied on us.
    if (!runQueue.isEmpty()) {
      signalWork(false);
    }
    if (left == 0) {
      cleaner.update();
      leaveTimer();
    }
    host.tryTerminate();
  }

  // ---------------------------------------------------------------------------------------------
  // Retiring idle workers

  /**
   * Takes an idle worker's slot at once, counts why it leaves, and tells it to exit: in that order,
   * so nobody sees it counted before its slot is free, nor its thread gone before it is counted.
   */
  private void retire(Worker w, LongAdder why) {
    w.slotReleased = true;
    starter.release();
    why.increment();
    w.wake(Worker.Wake.RETIRE);
  }

  /** The cleaner's work: retires the idle workers last used at or before {@code cutoff}. */
  void retireIdleSince(long cutoff) {
    for (Worker w : idle.removeOldest(cutoff)) {
      retire(w, counters.workersExpired);
    }
  }

  /** Part of shutdown: stops every idle worker now. */
  void retireAllIdle() {
    for (Worker w : idle.takeAll()) {
      retire(w, counters.workersStopped);
    }
    host.tryTerminate();
  }

  /** Retires the oldest idle workers while there are more workers than the capacity. */
  private void trimSurplus() {
    synchronized (trimLock) {
      int surplus = starter.workers() - host.capacity();
      if (surplus > 0) {
        for (Worker w : idle.removeOldestCount(surplus)) {
          retire(w, counters.workersStopped);
        }
      }
    }
  }

  /** What the cleaner sees of this engine: the idle stack's age, and the retiring. */
  private final class IdleWorkers implements Cleaner.Workers {
    @Override
    public boolean wantsCleaner() {
      return starter.workers() > 0 && host.isRunning();
    }

    @Override
    public long oldestLastUsed() {
      return idle.oldestLastUsed();
    }

    @Override
    public long now() {
      return ticker.read();
    }

    @Override
    public void retireIdleSince(long cutoff) {
      Engine.this.retireIdleSince(cutoff);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Resize, shutdown, stats

  /** Makes room for a larger capacity; called under the pool's resize lock, before it is written. */
  void grow(int newCapacity) {
    idle.ensureLength(newCapacity);
    runQueue.ensureCapacity(newCapacity);
  }

  /** After a grow: tasks the queue's growth moved may need a worker. */
  void grown() {
    signalWork(false);
  }

  /** After a shrink: idle surplus leaves now; busy surplus after its task ({@link #finishTask}). */
  void shrunk() {
    trimSurplus();
  }

  /**
   * Part of shutdownNow: hands back the queued tasks (giving back their seats), the first task of a
   * worker whose start is still in progress, and the queues of the lanes that workers are draining,
   * then interrupts every worker.
   */
  void handBackAndInterrupt(List<Runnable> out) {
    // Held tasks first: a worker that publishes its own meanwhile puts them in the queue, drained next.
    starter.forEachWorker(w -> {
      for (int n = w.held.handBack(out); n > 0; n--) {
        host.releaseSeat();
      }
    });
    TaskSlot slot = new TaskSlot();
    while (runQueue.poll(slot)) {
      slot.kind.handBack(slot.arg, out);
      slot.clear();
      host.releaseSeat();
    }
    starter.forEachWorker(w -> {
      TaskKind first = w.kind; // read before the claim: a worker that lost it clears its slot
      Object arg = w.arg;
      if (first != null && w.takeFirstBack()) { // its factory is still making its thread
        first.handBack(arg, out);
        host.releaseSeat();
      }
      Worker.Draining lane = w.lane;
      if (lane != null) {
        lane.handBackQueued(out);
      }
    });
    starter.interruptAll();
  }

  /**
   * The last worker is gone (shut down, or every one expired): a pending hold-off resume (a
   * hold-off lasts up to 10 s) must not keep the shared timer thread alive for a pool with no
   * thread, so it is taken back and done here (holding on; the pattern is forgotten). The watch
   * stays: it fires within a period, and a worker started meanwhile may rely on it.
   */
  private void leaveTimer() {
    if (timer.cancel(holdResume)) {
      holdingOff = false;
    }
  }

  /** Whether a hold-off's resume is on the timer; for tests. */
  boolean onTimer() {
    return timer.isScheduled(holdResume);
  }

  /** Whether holding is off after a holder was found waiting; for tests. */
  boolean isHoldingOff() {
    return holdingOff;
  }

  /** How many times holding went off; for tests. */
  int holdOffs() {
    return holdOffs;
  }

  /** How long the next hold-off will last; for tests (a racy read of a timer-thread field). */
  long nextHoldOffNanos() {
    return holdOffNanos;
  }

  /** How many times the hold watch found tasks held and published them; for tests. */
  int watchFoundHeld() {
    return watchFoundHeld;
  }

  /** Workers spinning or being woken to spin; for the model check. */
  int spinners() {
    return spinning.get();
  }

  /** Started workers that have not yet opened {@code starting}; for the model check. */
  int startsInFlight() {
    return starting.get();
  }

  /** Live workers, counted from the reservation of their slot until they exit. */
  int workers() {
    return starter.workers();
  }

  /** Tasks running now: seats held minus tasks still queued. */
  /** Closes the worker slots if no worker lives (a terminating pool); see ThreadStarter. */
  boolean closeIfNoWorkers() {
    return starter.tryClose();
  }

  /** Reopens the worker slots after a reboot (or a termination that did not happen). */
  void reopenSlots() {
    starter.reopen();
  }

  int busy() {
    return Math.max(0, host.seats() - runQueue.size());
  }

  /** Waits until every started worker thread has ended, at most until {@code deadline}. */
  boolean joinAll(long deadline) throws InterruptedException {
    return starter.joinAll(deadline);
  }
}
