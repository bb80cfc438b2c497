package dev.warmpool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The worker pool itself.
 *
 * <h2>Implementation notes</h2>
 * <b>Run state and worker count</b> share one int, {@code ctl}, as in {@code ThreadPoolExecutor}: the
 * top bits hold the state, the low bits the number of live workers (a slot is counted from its
 * reservation, before the thread starts, until the thread leaves {@link Worker#run}). Transitions:
 * <pre>
 *   RUNNING    -> SHUTDOWN    on shutdown() or shutdownNow()
 *   SHUTDOWN   -> TERMINATED  when the count is 0 and the waiting line is empty (under the line's lock)
 *   TERMINATED -> RUNNING     on reboot()
 * </pre>
 * A slot is reserved by CAS only while RUNNING, or while SHUTDOWN for entries still waiting in line,
 * so no worker can start after termination.
 *
 * <p><b>No lost wake-ups.</b> The idle stack and the waiting line are two places where a worker and a
 * task can miss each other. Both sides publish first and look second: a worker pushes itself and then
 * checks the line; a submitter joins the line and then checks the stack. Whoever looks second runs
 * {@link #drainLine}, which pairs idle workers (or new ones, when below capacity) with entries. The
 * same drain runs when a worker exits and when {@code resize} grows the pool.
 *
 * <p><b>Expiry.</b> The cleaner is a {@link SharedTimer} task, scheduled only while the pool has
 * workers: a worker start schedules it if it is not scheduled, the exit of the last worker cancels it,
 * and each run reschedules itself at the oldest idle worker's expiry time, but no sooner than
 * {@code maxIdle/16} later so that a wind-down costs at most 16 runs per {@code maxIdle}.
 */
final class BoundedPool extends AbstractWorkerPool {
  private static final int COUNT_BITS = 29;
  private static final int COUNT_MASK = (1 << COUNT_BITS) - 1;
  private static final int RUNNING = 0;
  private static final int SHUTDOWN = 1 << COUNT_BITS;
  private static final int TERMINATED = 2 << COUNT_BITS;

  private static final VarHandle CTL;

  static {
    try {
      CTL = MethodHandles.lookup().findVarHandle(BoundedPool.class, "ctl", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final String name;
  private final long maxIdleNanos;
  private final boolean nonblocking;
  private final int maxWaiting;
  private final ThreadFactory threadFactory;
  private final Thread.UncaughtExceptionHandler failureHandler;
  private final Ticker ticker;

  private volatile int ctl;
  private volatile int capacity;
  private volatile boolean stopping;
  private volatile CountDownLatch termination = new CountDownLatch(1);

  final IdleStack idle;
  final WaitingLine line = new WaitingLine();
  /** Started workers not yet known to be dead; pruned lazily, joined by awaitTermination. */
  private final Set<Worker> started = ConcurrentHashMap.newKeySet();
  private final Object resizeLock = new Object();
  private final CleanerTask cleaner = new CleanerTask();
  private final AtomicInteger threadNumber = new AtomicInteger();
  private static final int MAX_SPINNERS = Runtime.getRuntime().availableProcessors();
  /** Idle workers spinning now; at most MAX_SPINNERS. */
  private final AtomicInteger spinners = new AtomicInteger();

  private final LongAdder submitted = new LongAdder();
  private final LongAdder completed = new LongAdder();
  private final LongAdder failed = new LongAdder();
  private final LongAdder rejected = new LongAdder();
  private final LongAdder workersStarted = new LongAdder();
  private final LongAdder workersExpired = new LongAdder();
  private final LongAdder workersStopped = new LongAdder();
  /** Cleaner runs so far; for tests that check the cleaner stays quiet. */
  final LongAdder cleanerRuns = new LongAdder();

  BoundedPool(WorkerPool.Builder b) {
    this.name = b.name;
    this.capacity = b.capacity;
    this.maxIdleNanos = b.maxIdleNanos;
    this.nonblocking = b.nonblocking;
    this.maxWaiting = b.maxWaiting;
    this.ticker = b.ticker;
    this.failureHandler = b.failureHandler;
    this.threadFactory = b.threadFactory != null ? b.threadFactory : defaultFactory(b.daemon);
    this.idle = new IdleStack(b.capacity);
  }

  private ThreadFactory defaultFactory(boolean daemon) {
    return r -> {
      Thread t = new Thread(r, name + "-" + threadNumber.incrementAndGet());
      t.setDaemon(daemon);
      return t;
    };
  }

  private static int stateOf(int c) {
    return c & ~COUNT_MASK;
  }

  private static int countOf(int c) {
    return c & COUNT_MASK;
  }

  // ---------------------------------------------------------------------------------------------
  // Submission

  /**
   * Proceeds in three steps:
   * <ol>
   *   <li>Pop the idle stack; a popped worker is ours alone: write the task into its slot.</li>
   *   <li>Else reserve a slot below capacity by CAS and start a new worker with the task.</li>
   *   <li>Else the pool is full: reject (nonblocking, or TRY) or join the waiting line.</li>
   * </ol>
   */
  @Override
  boolean dispatch(Consumer<Object> fn, Object arg, int mode) {
    int state = stateOf(ctl);
    if (state != RUNNING && !(mode == ADMITTED && state == SHUTDOWN)) {
      throw closed();
    }
    if (takeNow(fn, arg, mode == ADMITTED)) {
      return true;
    }
    if (mode == TRY || mode == PROBE) {
      if (mode == TRY) {
        rejected.increment();
      }
      return false;
    }
    if (nonblocking && mode != ADMITTED) {
      throw overloaded();
    }
    if (mode == ENQUEUE || mode == ADMITTED) {
      join(new WaitingLine.Entry(fn, arg, null), mode == ADMITTED);
      return true;
    }
    return awaitTaken(join(new WaitingLine.Entry(fn, arg, Thread.currentThread()), false), false, 0L);
  }

  @Override
  boolean dispatchTimed(Consumer<Object> fn, Object arg, long nanos) throws InterruptedException {
    if (nonblocking || nanos == 0) {
      return dispatch(fn, arg, TRY);
    }
    if (stateOf(ctl) != RUNNING) {
      throw closed();
    }
    if (takeNow(fn, arg, false)) {
      return true;
    }
    long deadline = System.nanoTime() + Math.min(nanos, Long.MAX_VALUE / 4);
    WaitingLine.Entry e = join(new WaitingLine.Entry(fn, arg, Thread.currentThread()), false);
    try {
      return awaitTaken(e, true, deadline);
    } catch (InterruptedWaitException interrupted) {
      throw new InterruptedException("interrupted while waiting for a worker of pool '" + name + "'");
    }
  }

  /**
   * Steps 1 and 2 of dispatch: hands the task to the top idle worker, or starts a new worker for it
   * if below capacity. Returns false if the pool is full.
   */
  private boolean takeNow(Consumer<Object> fn, Object arg, boolean whileShutdown) {
    Worker w = idle.pop();
    if (w != null) {
      accepted(fn);
      w.handOff(fn, arg);
      return true;
    }
    if (reserveSlot(whileShutdown)) {
      startWorker(fn, arg);
      return true;
    }
    return false;
  }

  /** Puts the entry in line (or throws) and pairs the line with any worker that just went idle. */
  private WaitingLine.Entry join(WaitingLine.Entry e, boolean admitted) {
    int r = line.offer(e, admitted ? Integer.MAX_VALUE : maxWaiting, admitted);
    if (r == WaitingLine.FULL) {
      rejected.increment();
      throw new PoolOverloadedException("pool '" + name + "' is overloaded: all " + busyCount()
          + " workers are busy (capacity " + capacity + ", busy " + busyCount()
          + ") and the waiting line is full (maxWaiting " + maxWaiting + ")");
    }
    if (r == WaitingLine.REFUSED) {
      throw closed();
    }
    if (e.caller == null) {
      accepted(e.fn);
    }
    drainLine();
    return e;
  }

  /**
   * Parks the caller until a worker takes its entry, or until {@code deadline} if timed.
   *
   * @return true if taken, false on timeout
   */
  private boolean awaitTaken(WaitingLine.Entry e, boolean timed, long deadline) {
    // A busy worker usually finishes a tiny task within a microsecond and takes the entry at once;
    // spinning that long is much cheaper than a park/unpark round trip.
    for (int i = 0; i < Worker.SPINS && e.state == WaitingLine.WAITING; i++) {
      Thread.onSpinWait();
    }
    boolean interrupted = false;
    try {
      for (;;) {
        int s = e.state;
        if (s == WaitingLine.TAKEN) {
          return true;
        }
        if (s == WaitingLine.CLOSED) {
          throw closed();
        }
        interrupted |= Thread.interrupted();
        // A CLAIMED entry is being given to a worker that is starting: its outcome is not known
        // yet, so neither an interrupt nor a timeout can withdraw it; wait until it is resolved.
        if (s == WaitingLine.WAITING && interrupted && line.cancel(e)) {
          rejected.increment();
          if (timed) {
            interrupted = false; // reported by the InterruptedException instead
            throw new InterruptedWaitException();
          }
          throw new RejectedExecutionException("interrupted while waiting for a worker of pool '"
              + name + "'; the task was not accepted", new InterruptedException());
        }
        long left = timed ? deadline - System.nanoTime() : 1L;
        if (s == WaitingLine.WAITING && left <= 0) {
          if (line.cancel(e)) {
            rejected.increment();
            return false;
          }
          continue;
        }
        e.parked = true; // then re-check the state: a taker reads parked after writing state
        if (e.state != s) {
          continue;
        }
        if (timed && s == WaitingLine.WAITING) {
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

  private boolean reserveSlot(boolean whileShutdown) {
    for (;;) {
      int c = ctl;
      int state = stateOf(c);
      if (state == TERMINATED || (state == SHUTDOWN && !whileShutdown)) {
        return false;
      }
      if (countOf(c) >= capacity) {
        return false;
      }
      if (CTL.compareAndSet(this, c, c + 1)) {
        return true;
      }
    }
  }

  /** Gives back a reserved slot. */
  private void releaseSlot() {
    CTL.getAndAdd(this, -1);
  }

  /** Starts a worker with its first task in a reserved slot, or rejects the task with the cause. */
  private void startWorker(Consumer<Object> fn, Object arg) {
    Throwable failure = tryStartWorker(fn, arg);
    if (failure != null) {
      rejected.increment();
      throw new RejectedExecutionException("pool '" + name + "' could not start a worker thread",
          failure);
    }
    accepted(fn);
  }

  /** Counts an accepted task; a lane's carrier is not a task (the lane counts its own tasks). */
  private void accepted(Consumer<Object> fn) {
    if (fn != SerialLane.DRAIN) {
      submitted.increment();
    }
  }

  void laneTaskAccepted() {
    submitted.increment();
  }

  /** A lane task cancelled by closing its lane was never run: it no longer counts as accepted. */
  void laneTaskCancelled() {
    submitted.decrement();
  }

  /**
   * Starts a worker with its first task in a reserved slot. On failure gives the slot back and
   * returns the cause.
   */
  private Throwable tryStartWorker(Consumer<Object> fn, Object arg) {
    Worker w = new Worker(this, fn, arg);
    try {
      Thread t = threadFactory.newThread(w);
      if (t == null) {
        throw new NullPointerException("thread factory returned null");
      }
      w.thread = t;
      started.add(w);
      t.start();
    } catch (Throwable failure) {
      started.remove(w);
      releaseSlot();
      tryTerminate();
      return failure;
    }
    workersStarted.increment();
    updateCleaner();
    pruneStarted();
    return null;
  }

  /** Forgets exited workers once they clearly outnumber the live ones (keeps the set bounded). */
  private void pruneStarted() {
    if (started.size() > 2 * capacity + 16) {
      started.removeIf(s -> !s.thread.isAlive());
    }
  }

  /**
   * Pairs waiting entries with workers until the line is empty or no worker is free: an idle worker
   * is popped and handed the head entry; below capacity a new worker is started for it.
   */
  void drainLine() {
    while (line.size() > 0) {
      Worker w = idle.pop();
      if (w != null) {
        WaitingLine.Entry e = line.poll();
        if (e == null) {
          w.handOff(Worker.WAKE, Boolean.TRUE); // nothing left for it: let it go idle again
          return;
        }
        taken(e);
        w.handOff(e.fn, e.arg);
        continue;
      }
      if (!reserveSlot(true)) {
        return;
      }
      WaitingLine.Entry e = line.claim();
      if (e == null) {
        releaseSlot();
        tryTerminate();
        return;
      }
      if (tryStartWorker(e.fn, e.arg) != null) {
        // Nobody is rejected: the entry keeps its place (a caller blocked in a line that closed
        // meanwhile is woken with PoolClosedException) and the drain is retried later, since
        // with no worker left no other event may come to start one.
        line.requeueFirst(e);
        if (e.caller != null) {
          LockSupport.unpark(e.caller);
        }
        SharedTimer.INSTANCE.schedule(drainRetry, System.nanoTime() + DRAIN_RETRY_NANOS);
        return;
      }
      e.state = WaitingLine.TAKEN;
      taken(e);
    }
  }

  /** How long after a worker failed to start the line is drained again. */
  private static final long DRAIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  private final SharedTimer.Task drainRetry = new SharedTimer.Task() {
    @Override
    void fire() {
      drainLine();
    }
  };

  private void taken(WaitingLine.Entry e) {
    if (e.caller != null) {
      submitted.increment();
      if (e.parked) {
        LockSupport.unpark(e.caller);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Worker side

  void runTask(Worker w, Consumer<Object> fn, Object arg) {
    if (fn == SerialLane.DRAIN) {
      fn.accept(arg); // the lane runs and counts its tasks through runLaneTask
      return;
    }
    runCounted(fn, arg);
  }

  /** Runs one task of a serial lane on the current worker, counted like any task. */
  void runLaneTask(Runnable task) {
    runCounted(Worker.RUN, task);
  }

  private void runCounted(Consumer<Object> fn, Object arg) {
    if (!stopping) {
      Thread.interrupted(); // a stale interrupt must not leak into the next task
    }
    try {
      fn.accept(arg);
      completed.increment();
    } catch (Throwable t) {
      failed(t);
    }
  }

  private void failed(Throwable t) {
    failed.increment();
    Thread self = Thread.currentThread();
    Thread.UncaughtExceptionHandler h = failureHandler != null
        ? failureHandler : self.getUncaughtExceptionHandler();
    h.uncaughtException(self, t); // if this throws, the worker exits (replaced on demand)
  }

  /**
   * Called by a worker after each task: returns its next task argument (with {@code w.fn} set), or
   * null if the worker must exit.
   */
  Object nextTask(Worker w) {
    for (;;) {
      int c = ctl;
      if (countOf(c) <= capacity) {
        break;
      }
      if (CTL.compareAndSet(this, c, c - 1)) { // surplus after a shrinking resize
        w.countReleased = true;
        workersStopped.increment();
        return null;
      }
    }
    if (line.size() > 0) {
      WaitingLine.Entry e = line.poll();
      if (e != null) {
        taken(e);
        w.fn = e.fn;
        return e.arg;
      }
    }
    if (stateOf(ctl) != RUNNING) {
      workersStopped.increment();
      return null;
    }
    idle.push(w, ticker);
    if (line.size() > 0) {
      drainLine();
    }
    if (stateOf(ctl) != RUNNING) {
      stopIdle(); // shutdown may have emptied the stack before our push
    }
    Object a = w.awaitTask();
    return a == Worker.RETIRE ? null : a;
  }

  boolean tryStartSpinning() {
    for (int n = spinners.get(); n < MAX_SPINNERS; n = spinners.get()) {
      if (spinners.compareAndSet(n, n + 1)) {
        return true;
      }
    }
    return false;
  }

  void stopSpinning() {
    spinners.decrementAndGet();
  }

  void workerExited(Worker w, boolean normal) {
    if (!normal) {
      workersStopped.increment();
    }
    if (!w.countReleased) {
      releaseSlot();
    }
    if (countOf(ctl) == 0) {
      updateCleaner();
    }
    if (line.size() > 0) {
      drainLine();
    }
    tryTerminate();
  }

  private void stopIdle() {
    for (Worker w : idle.takeAll()) {
      workersStopped.increment();
      w.retire();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Expiry

  private final class CleanerTask extends SharedTimer.Task {
    /** Accessed only under synchronized(this). */
    boolean scheduled;

    @Override
    void fire() {
      synchronized (this) {
        scheduled = false;
      }
      retireExpired();
      updateCleaner();
    }
  }

  /** Retires every idle worker idle for at least maxIdle; the cleaner's work, callable by tests. */
  void retireExpired() {
    cleanerRuns.increment();
    Worker[] stale = idle.removeOldest(ticker.read() - maxIdleNanos);
    for (Worker w : stale) {
      workersExpired.increment();
      w.retire();
    }
    pruneStarted();
  }

  /**
   * Makes the cleaner's schedule match the worker count: scheduled iff there are workers. Every
   * decision re-reads the count under the cleaner's monitor, so the last caller's view wins.
   */
  private void updateCleaner() {
    synchronized (cleaner) {
      boolean hasWorkers = countOf(ctl) > 0 && stateOf(ctl) == RUNNING;
      if (hasWorkers && !cleaner.scheduled) {
        long oldest = idle.oldestLastUsed();
        long delay = oldest == Long.MAX_VALUE
            ? maxIdleNanos : oldest + maxIdleNanos - ticker.read();
        delay = Math.max(delay, maxIdleNanos / 16);
        cleaner.scheduled = true;
        SharedTimer.INSTANCE.schedule(cleaner, System.nanoTime() + delay);
      } else if (!hasWorkers && cleaner.scheduled) {
        cleaner.scheduled = false;
        SharedTimer.INSTANCE.cancel(cleaner);
      }
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
  public Duration maxIdle() {
    return Duration.ofNanos(maxIdleNanos);
  }

  @Override
  public boolean isNonblocking() {
    return nonblocking;
  }

  @Override
  public void resize(int newCapacity) {
    WorkerPool.Builder.checkCapacity(newCapacity);
    synchronized (resizeLock) {
      int old = capacity;
      idle.ensureLength(newCapacity);
      capacity = newCapacity;
      if (newCapacity > old) {
        drainLine();
        return;
      }
      for (;;) {
        int c = ctl;
        int surplus = countOf(c) - newCapacity;
        if (surplus <= 0) {
          return;
        }
        Worker[] ws = idle.removeOldestCount(surplus);
        if (ws.length == 0) {
          return; // busy surplus leaves after its current task
        }
        for (Worker w : ws) {
          w.countReleased = true;
          releaseSlot();
          workersStopped.increment();
          w.retire();
        }
      }
    }
  }

  int busyCount() {
    return Math.max(0, countOf(ctl) - idle.size());
  }

  @Override
  public PoolStats stats() {
    return new PoolStats(capacity, countOf(ctl), idle.size(), line.size(), submitted.sum(),
        completed.sum(), failed.sum(), rejected.sum(), workersStarted.sum(), workersExpired.sum(),
        workersStopped.sum());
  }

  private PoolOverloadedException overloaded() {
    rejected.increment();
    int cap = capacity;
    return new PoolOverloadedException("pool '" + name + "' is overloaded: no idle worker (capacity "
        + cap + ", busy " + Math.min(cap, busyCount()) + ")");
  }

  private PoolClosedException closed() {
    rejected.increment();
    return new PoolClosedException("pool '" + name + "' is shut down");
  }

  // ---------------------------------------------------------------------------------------------
  // Lifecycle

  @Override
  public void shutdown() {
    for (;;) {
      int c = ctl;
      if (stateOf(c) != RUNNING || CTL.compareAndSet(this, c, SHUTDOWN | countOf(c))) {
        break;
      }
    }
    for (WaitingLine.Entry e : line.close()) {
      LockSupport.unpark(e.caller);
    }
    cancelDelayed();
    drainLine();
    stopIdle();
    updateCleaner();
    tryTerminate();
  }

  @Override
  public List<Runnable> shutdownNow() {
    stopping = true;
    shutdown();
    List<Runnable> tasks = new ArrayList<>();
    for (WaitingLine.Entry e : line.drain()) {
      if (e.caller != null) {
        LockSupport.unpark(e.caller);
        continue;
      }
      Consumer<Object> fn = e.fn;
      if (fn == SerialLane.DRAIN) {
        ((SerialLane) e.arg).handBack(tasks);
        continue;
      }
      Object arg = e.arg;
      tasks.add(fn == Worker.RUN ? (Runnable) arg : () -> fn.accept(arg));
    }
    for (Worker w : started) {
      Thread t = w.thread;
      if (t.isAlive()) {
        t.interrupt();
      }
    }
    tryTerminate();
    return tasks;
  }

  private void tryTerminate() {
    int c = ctl;
    if (stateOf(c) != SHUTDOWN || countOf(c) != 0) {
      return;
    }
    if (line.terminateIfEmpty(() -> CTL.compareAndSet(this, SHUTDOWN, TERMINATED))) {
      termination.countDown();
    }
  }

  @Override
  void checkOpen() {
    if (stateOf(ctl) != RUNNING) {
      throw closed();
    }
  }

  @Override
  public boolean isShutdown() {
    return stateOf(ctl) != RUNNING;
  }

  @Override
  public boolean isTerminated() {
    return stateOf(ctl) == TERMINATED;
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    long deadline = System.nanoTime() + Math.min(unit.toNanos(timeout), Long.MAX_VALUE / 4);
    if (!termination.await(timeout, unit)) {
      return false;
    }
    for (Worker w : started) {
      long left = deadline - System.nanoTime();
      if (left <= 0 && w.thread.isAlive()) {
        return false;
      }
      TimeUnit.NANOSECONDS.timedJoin(w.thread, Math.max(1, left));
      if (w.thread.isAlive()) {
        return false;
      }
      started.remove(w);
    }
    return true;
  }

  @Override
  public void reboot() {
    synchronized (resizeLock) {
      if (stateOf(ctl) != TERMINATED) {
        throw new IllegalStateException("pool '" + name + "' is not terminated");
      }
      termination = new CountDownLatch(1);
      stopping = false;
      line.reopen();
      ctl = RUNNING;
    }
  }

  @Override
  public SerialExecutor newSerialExecutor() {
    return new SerialLane(this);
  }

}
