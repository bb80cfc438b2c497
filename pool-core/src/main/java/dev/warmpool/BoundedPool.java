package dev.warmpool;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The worker pool: submission, the wake-up protocol, resize and lifecycle. The pieces it combines
 * each live in a file of their own: {@link RunState} (run state and seats), {@link RunQueue},
 * {@link IdleStack}, {@link WaitingLine}, {@link Worker} (the worker loop), {@link ThreadStarter}
 * (factory calls and started threads), {@link Cleaner} (expiry) and {@link PoolCounters}.
 *
 * <h2>Implementation notes</h2>
 * <b>Seats and the run queue.</b> A task is accepted by taking a seat ({@link RunState}); it then
 * waits in the run queue until a worker takes it, and gives its seat back when it finishes. Seats
 * bound queued plus running tasks by the capacity, so the queue never overflows and nonblocking mode
 * rejects exactly when every seat is taken. A worker that finishes a task takes the next one from the
 * queue before it thinks of parking, so a stream of tasks is carried by the workers already running.
 *
 * <p><b>Signal only when needed</b> ({@link #signalWork}), after Go's scheduler: after queueing a
 * task, if some worker is spinning nobody is woken; else the spinner count is taken (0 to 1) and
 * handed to the most recently parked worker, which is unparked, or to a new worker. So at most one
 * wake-up is in flight; a woken spinner that finds work wakes the next one if it was the last
 * spinner and tasks remain. The protocol rests on three publish-then-check pairs, each a volatile
 * write followed by a volatile read on both sides, so one side always sees the other:
 * <ul>
 *   <li>producer: publish in the queue, read the spinner count / spinner: drop the count, read the
 *       queue;</li>
 *   <li>producer (in {@code signalWork}): give the count back, read the idle stack / parking worker:
 *       push itself, read the queue;</li>
 *   <li>producer: publish, reserve a worker slot / exiting worker: release its slot, read the
 *       queue.</li>
 * </ul>
 * A new task also starts a worker directly, with the task as its first (as {@code
 * ThreadPoolExecutor} does), when nobody spins, nobody is idle and a slot is free: the thread is
 * needed anyway, and a failure to start it then rejects that one task at its own call.
 *
 * <p><b>Waiting line.</b> When every seat is taken, blocking mode puts work in the FIFO line. A
 * finishing worker hands its seat to the head of the line and runs that entry next; new submitters
 * take no seat while the line is not empty, so nobody barges. A joiner links itself and then drains
 * the line (a seat may have been freed between its try and its link); a worker gives its seat back
 * and then drains: publish, then check, again.
 *
 * <p><b>Never on the timer thread.</b> Due timers and the cleaner run on the shared timer thread;
 * any worker start they would need is handed to {@link ThreadStarter#ASYNC}.
 */
final class BoundedPool extends AbstractWorkerPool {
  /** At most this many idle workers spin at once: more would take the CPU from busy threads. */
  static final int MAX_SPINNERS = Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
  /** How long after a worker failed to start in the background a start is tried again. */
  private static final long START_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  private final String name;
  private final long maxIdleNanos;
  private final boolean nonblocking;
  private final int maxWaiting;
  private final Thread.UncaughtExceptionHandler failureHandler;
  final Ticker ticker;

  private volatile int capacity;
  private volatile boolean stopping;
  private volatile CountDownLatch termination = new CountDownLatch(1);

  final RunState state = new RunState();
  final RunQueue runQueue;
  final IdleStack idle;
  final WaitingLine line = new WaitingLine();
  final PoolCounters counters = new PoolCounters();
  private final ThreadStarter starter;
  final Cleaner cleaner;
  /** Workers spinning now, plus workers being woken or started to spin. */
  private final AtomicInteger spinning = new AtomicInteger();
  private final Object resizeLock = new Object();
  private final AtomicInteger threadNumber = new AtomicInteger();
  private final SharedTimer.Task startRetry = new SharedTimer.Task() {
    @Override
    void fire() {
      startInBackground();
    }
  };

  BoundedPool(WorkerPool.Builder b) {
    this.name = b.name;
    this.capacity = b.capacity;
    this.maxIdleNanos = b.maxIdleNanos;
    this.nonblocking = b.nonblocking;
    this.maxWaiting = b.maxWaiting;
    this.ticker = b.ticker;
    this.failureHandler = b.failureHandler;
    this.idle = new IdleStack(b.capacity);
    this.runQueue = new RunQueue(b.capacity);
    ThreadFactory factory = b.threadFactory != null ? b.threadFactory : defaultFactory(b.daemon);
    this.starter = new ThreadStarter(factory, counters);
    this.cleaner = new Cleaner(this, b.maxIdleNanos);
  }

  private ThreadFactory defaultFactory(boolean daemon) {
    return r -> {
      Thread t = new Thread(r, name + "-" + Integer.toUnsignedString(threadNumber.incrementAndGet()));
      t.setDaemon(daemon);
      return t;
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Submission

  /**
   * Proceeds in three steps:
   * <ol>
   *   <li>If nobody waits in line, take a free seat by CAS.</li>
   *   <li>With a seat: start a worker for the task if that is the only way it will run soon, else
   *       queue it and signal ({@link #place}).</li>
   *   <li>Without one: reject (nonblocking, TRY), or wait in line ({@link #whenFull}).</li>
   * </ol>
   */
  @Override
  boolean dispatch(TaskKind kind, Object arg, Mode mode) {
    if (line.size() == 0 && state.tryTakeSeat(capacity, mode == Mode.ADMITTED)) {
      place(kind, arg, mode);
      return true;
    }
    return whenFull(kind, arg, mode, null);
  }

  @Override
  TaskHandle enqueue(TaskKind kind, Object arg, Mode mode) {
    WaitingLine.Entry e = new WaitingLine.Entry(this, kind, arg, null, WaitingLine.TAKEN);
    if (line.size() == 0 && state.tryTakeSeat(capacity, mode == Mode.ADMITTED)) {
      place(WaitingLine.Entry.KIND, e, mode);
    } else {
      e.state = WaitingLine.WAITING;
      whenFull(kind, arg, mode, e);
    }
    return e;
  }

  @Override
  boolean dispatchTimed(TaskKind kind, Object arg, long nanos) throws InterruptedException {
    if (nonblocking || nanos == 0) {
      return dispatch(kind, arg, Mode.TRY);
    }
    if (line.size() == 0 && state.tryTakeSeat(capacity, false)) {
      place(kind, arg, Mode.EXECUTE);
      return true;
    }
    if (!state.isRunning()) {
      throw closed();
    }
    long deadline = System.nanoTime() + Math.min(nanos, Long.MAX_VALUE / 4);
    WaitingLine.Entry e = join(new WaitingLine.Entry(this, kind, arg, Thread.currentThread(),
        WaitingLine.WAITING), false);
    try {
      return awaitTaken(e, true, deadline);
    } catch (InterruptedWaitException interrupted) {
      throw new InterruptedException("interrupted while waiting for a seat in pool '" + name + "'");
    }
  }

  /** With a seat taken for the task: counts it, then starts a worker for it or queues it. */
  private void place(TaskKind kind, Object arg, Mode mode) {
    boolean counted = kind.countsAsTask();
    if (counted) {
      counters.submitted.increment(); // before the hand-off: no snapshot shows it completed first
    }
    if (spinning.get() == 0 && idle.size() == 0 && ThreadStarter.mayStartHere()
        && starter.tryReserve(capacity)) {
      Throwable failure = startWorker(new Worker(this, kind, arg));
      if (failure == null) {
        return;
      }
      if (mode != Mode.ADMITTED) {
        if (counted) {
          counters.submitted.decrement();
        }
        counters.rejected.increment();
        giveBackSeat();
        throw new RejectedExecutionException("pool '" + name + "' could not start a worker thread",
            failure);
      }
      scheduleStartRetry(); // admitted work is never rejected: it waits for a worker
    }
    runQueue.offer(kind, arg);
    signalWork();
  }

  /** No seat was free (or the line was not empty): reject, or join the line. */
  private boolean whenFull(TaskKind kind, Object arg, Mode mode, WaitingLine.Entry handle) {
    if (!state.isRunning() && !(mode == Mode.ADMITTED && !state.isTerminated())) {
      throw closed();
    }
    if (mode == Mode.TRY) {
      counters.rejected.increment();
      return false;
    }
    if (mode == Mode.PROBE) {
      return false;
    }
    if (nonblocking && mode != Mode.ADMITTED) {
      throw overloaded();
    }
    if (mode == Mode.EXECUTE) {
      return awaitTaken(join(new WaitingLine.Entry(this, kind, arg, Thread.currentThread(),
          WaitingLine.WAITING), false), false, 0L);
    }
    join(handle != null ? handle
        : new WaitingLine.Entry(this, kind, arg, null, WaitingLine.WAITING), mode == Mode.ADMITTED);
    return true;
  }

  /** Puts the entry in line (or throws), then drains: a seat may have come free meanwhile. */
  private WaitingLine.Entry join(WaitingLine.Entry e, boolean admitted) {
    switch (line.offer(e, admitted ? Integer.MAX_VALUE : maxWaiting, admitted)) {
      case FULL -> {
        counters.rejected.increment();
        throw new PoolOverloadedException("pool '" + name + "' is overloaded: every seat is taken"
            + " (capacity " + capacity + ", busy " + busy() + ") and the waiting line is full"
            + " (maxWaiting " + maxWaiting + ")");
      }
      case REFUSED -> throw closed();
      case LINKED -> {
        if (e.caller == null && e.kind.countsAsTask()) {
          counters.submitted.increment();
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
        if (s == WaitingLine.CLOSED) {
          throw closed();
        }
        if (s != WaitingLine.WAITING) {
          return true;
        }
        interrupted |= Thread.interrupted();
        if (interrupted && line.cancel(e)) {
          counters.rejected.increment();
          if (timed) {
            interrupted = false; // reported by the InterruptedException instead
            throw new InterruptedWaitException();
          }
          throw new RejectedExecutionException("interrupted while waiting for a seat in pool '"
              + name + "'; the task was not accepted", new InterruptedException());
        }
        long left = timed ? deadline - System.nanoTime() : 1L;
        if (left <= 0) {
          if (line.cancel(e)) {
            counters.rejected.increment();
            return false;
          }
          continue;
        }
        e.parked = true; // then re-check the state: a taker reads parked after writing state
        if (e.state != WaitingLine.WAITING) {
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

  /** Withdraws a waiting entry through its handle. */
  boolean withdraw(WaitingLine.Entry e) {
    if (!line.cancel(e)) {
      return false;
    }
    withdrawn();
    leftLine();
    return true;
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

  /** A task withdrawn by its handle no longer counts as accepted. */
  void withdrawn() {
    counters.submitted.decrement();
  }

  /** Pairs line entries with free seats, oldest first, and queues them for workers. */
  void drainLine() {
    while (line.size() > 0) {
      if (!state.tryTakeSeat(capacity, true)) { // line entries were accepted: also while shutting down
        return;
      }
      WaitingLine.Entry e = line.poll();
      if (e == null) {
        state.releaseSeat();
        tryTerminate();
        continue;
      }
      taken(e);
      runQueue.offer(WaitingLine.Entry.KIND, e);
      signalWork();
    }
  }

  /** An entry got a seat: a blocked caller's task now counts as accepted and the caller wakes. */
  private void taken(WaitingLine.Entry e) {
    if (e.caller != null) {
      counters.submitted.increment();
      if (e.parked) {
        LockSupport.unpark(e.caller);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Wake-up protocol

  /**
   * Makes sure a worker will look at the queue: nothing if one spins; else takes the spinner count
   * and wakes the top idle worker, or starts one. See the class notes for why nothing is lost.
   */
  void signalWork() {
    for (;;) {
      if (spinning.get() != 0 || runQueue.isEmpty()) {
        return;
      }
      if (idle.size() == 0 && starter.workers() >= capacity) {
        // Nobody to wake or start: every worker is running (or about to park, and a parking
        // worker reads the queue after its push, or exiting, and it reads it after its release).
        return;
      }
      if (!spinning.compareAndSet(0, 1)) {
        return;
      }
      Worker w = idle.pop();
      if (w != null) {
        w.wake(Worker.WAKE); // the spinner count goes with it
        return;
      }
      if (starter.tryReserve(capacity)) {
        if (!ThreadStarter.mayStartHere()) {
          starter.release();
          spinning.decrementAndGet(); // before the hand-off, or the background start sees it taken
          startInBackground();
          return;
        }
        Throwable failure = startWorker(new Worker(this, null, null));
        if (failure == null) {
          return;
        }
        spinning.decrementAndGet();
        scheduleStartRetry(); // the task stays queued: admitted, never rejected after acceptance
      } else {
        spinning.decrementAndGet();
      }
      // Give the count back, then check the stack: a worker that pushed itself after our pop saw
      // our count and relied on us.
      if (idle.size() == 0) {
        return;
      }
    }
  }

  /** Starts a worker in a reserved slot and schedules the cleaner; returns the cause on failure. */
  private Throwable startWorker(Worker w) {
    Throwable failure = starter.start(w);
    if (failure == null) {
      cleaner.update();
    }
    return failure;
  }

  boolean tryStartSpinning() {
    for (int n = spinning.get(); n < MAX_SPINNERS; n = spinning.get()) {
      if (spinning.compareAndSet(n, n + 1)) {
        return true;
      }
    }
    return false;
  }

  void stopSpinning() {
    spinning.decrementAndGet();
  }

  /** A spinner found a task: if it was the last spinner and tasks remain, another must look. */
  void foundWork() {
    if (spinning.decrementAndGet() == 0 && !runQueue.isEmpty()) {
      signalWork();
    }
  }

  /** Runs {@link #signalWork} off the timer thread (it may start a worker), retrying on failure. */
  private void startInBackground() {
    try {
      ThreadStarter.ASYNC.execute(() -> {
        if (!runQueue.isEmpty()) {
          signalWork();
        }
      });
    } catch (Throwable noThread) { // RejectedExecutionException, OutOfMemoryError
      scheduleStartRetry();
    }
  }

  private void scheduleStartRetry() {
    SharedTimer.INSTANCE.schedule(startRetry, System.nanoTime() + START_RETRY_NANOS);
  }

  // ---------------------------------------------------------------------------------------------
  // Worker side

  void runCounted(Runnable task) {
    clearStaleInterrupt();
    try {
      task.run();
      counters.completed.increment();
    } catch (Throwable t) {
      failed(t);
    }
  }

  void runCounted(java.util.function.Consumer<Object> function, Object arg) {
    clearStaleInterrupt();
    try {
      function.accept(arg);
      counters.completed.increment();
    } catch (Throwable t) {
      failed(t);
    }
  }

  private void clearStaleInterrupt() {
    if (!stopping) {
      Thread.interrupted(); // a stale interrupt must not leak into the next task
    }
  }

  private void failed(Throwable t) {
    counters.failed.increment();
    Thread self = Thread.currentThread();
    Thread.UncaughtExceptionHandler h = failureHandler != null
        ? failureHandler : self.getUncaughtExceptionHandler();
    h.uncaughtException(self, t); // if this throws, the worker exits (replaced on demand)
  }

  /** What a worker does after its task: next entry from the line, look for work, or exit. */
  enum AfterTask {
    RUN_NEXT,
    LOOK_FOR_WORK,
    EXIT
  }

  /** Settles the seat of the task the worker just ran. */
  AfterTask finishTask(Worker w) {
    if (starter.workers() > capacity && starter.tryReleaseSurplus(capacity)) {
      w.slotReleased = true; // surplus after a shrinking resize
      counters.workersStopped.increment();
      w.holdsSeat = false;
      giveBackSeat();
      return AfterTask.EXIT;
    }
    if (line.size() > 0 && state.seats() <= capacity) {
      WaitingLine.Entry e = line.poll();
      if (e != null) { // the seat passes to the head of the line, and this worker runs it
        taken(e);
        w.kind = WaitingLine.Entry.KIND;
        w.arg = e;
        return AfterTask.RUN_NEXT;
      }
    }
    w.holdsSeat = false;
    giveBackSeat();
    return AfterTask.LOOK_FOR_WORK;
  }

  private void giveBackSeat() {
    state.releaseSeat();
    if (line.size() > 0) {
      drainLine();
    }
    if (!state.isRunning()) {
      tryTerminate();
    }
  }

  /** Whether a worker that found the queue empty after shutdown may exit. */
  boolean mayExitIdle() {
    if (state.isRunning() || !runQueue.isEmpty() || line.size() > 0) {
      return false;
    }
    counters.workersStopped.increment();
    return true;
  }

  /** Puts the worker on the idle stack and parks it; returns its wake-up signal. */
  int parkIdle(Worker w) {
    idle.push(w, ticker);
    // Publish, then check: work queued after our last look, a shutdown that emptied the stack
    // before our push, or a shrink that found nothing idle before it.
    if (!runQueue.isEmpty()) {
      signalWork();
    }
    if (!state.isRunning()) {
      retireAllIdle();
    } else if (starter.workers() > capacity) {
      trimSurplus();
    }
    return w.awaitSignal();
  }

  void workerExited(Worker w, boolean normal) {
    if (!normal) {
      counters.workersStopped.increment(); // its failure handler threw
    }
    w.dropSpinner();
    if (w.holdsSeat) {
      w.holdsSeat = false;
      giveBackSeat();
    }
    w.lane = null;
    int left = w.slotReleased ? starter.workers() : starter.release();
    if (!runQueue.isEmpty()) {
      signalWork();
    }
    if (left == 0) {
      cleaner.update();
    }
    tryTerminate();
  }

  /** Takes an idle worker's slot at once and tells it to exit. */
  private void retire(Worker w) {
    w.slotReleased = true;
    starter.release();
    w.wake(Worker.RETIRE);
  }

  /** The cleaner's work: retires the idle workers last used at or before {@code cutoff}. */
  void retireIdleSince(long cutoff) {
    for (Worker w : idle.removeOldest(cutoff)) {
      retire(w); // its slot is free before anyone can see it counted as expired
      counters.workersExpired.increment();
    }
  }

  /** Runs the cleaner now; for tests. */
  void retireExpired() {
    cleaner.runs.increment();
    retireIdleSince(ticker.read() - maxIdleNanos);
  }

  private void retireAllIdle() {
    for (Worker w : idle.takeAll()) {
      counters.workersStopped.increment();
      retire(w);
    }
    tryTerminate();
  }

  /** Retires the oldest idle workers while there are more workers than the capacity. */
  private void trimSurplus() {
    synchronized (resizeLock) {
      int surplus = starter.workers() - capacity;
      if (surplus > 0) {
        for (Worker w : idle.removeOldestCount(surplus)) {
          counters.workersStopped.increment();
          retire(w);
        }
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
    int old;
    synchronized (resizeLock) {
      old = capacity;
      if (newCapacity > old) { // room first: seats and workers may grow once capacity is written
        idle.ensureLength(newCapacity);
        runQueue.ensureCapacity(newCapacity);
      }
      capacity = newCapacity;
    }
    if (newCapacity > old) {
      drainLine(); // new seats serve the line first
      signalWork(); // and tasks the queue's growth moved
    } else {
      trimSurplus(); // busy surplus leaves after its task (finishTask)
    }
  }

  int workers() {
    return starter.workers();
  }

  boolean isRunning() {
    return state.isRunning();
  }

  /** Whether a submission would find a seat now; a hint for a sharded pool's placement. */
  boolean hasFreeSeat() {
    return line.size() == 0 && state.seats() < capacity;
  }

  /** Tasks running now: seats held minus tasks still queued. */
  int busy() {
    return Math.max(0, state.seats() - runQueue.size());
  }

  @Override
  public PoolStats stats() {
    return counters.snapshot(capacity, starter.workers(), busy(), idle.size(), line.size());
  }

  private PoolOverloadedException overloaded() {
    counters.rejected.increment();
    return new PoolOverloadedException("pool '" + name + "' is overloaded: every seat is taken"
        + " (capacity " + capacity + ", busy " + busy() + ")");
  }

  private PoolClosedException closed() {
    counters.rejected.increment();
    return new PoolClosedException("pool '" + name + "' is shut down");
  }

  // ---------------------------------------------------------------------------------------------
  // Lifecycle

  @Override
  public void shutdown() {
    state.shutdown();
    for (WaitingLine.Entry e : line.close()) {
      LockSupport.unpark(e.caller);
    }
    cancelDelayed();
    drainLine();
    retireAllIdle();
    cleaner.update();
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
      } else {
        e.kind.handBack(e.arg, tasks);
      }
    }
    TaskSlot slot = new TaskSlot();
    while (runQueue.poll(slot)) {
      slot.kind.handBack(slot.arg, tasks);
      slot.clear();
      giveBackSeat();
    }
    starter.forEachWorker(w -> {
      SerialLane lane = w.lane;
      if (lane != null) {
        lane.handBackQueued(tasks);
      }
    });
    starter.interruptAll();
    tryTerminate();
    return tasks;
  }

  private void tryTerminate() {
    if (state.state() != RunState.SHUTDOWN || state.seats() != 0 || starter.workers() != 0) {
      return;
    }
    if (line.terminateIfEmpty(state::terminate)) {
      cleaner.update();
      termination.countDown();
    }
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

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    long deadline = System.nanoTime() + Math.min(unit.toNanos(timeout), Long.MAX_VALUE / 4);
    if (!termination.await(timeout, unit)) {
      return false;
    }
    return starter.joinAll(deadline);
  }

  @Override
  public void reboot() {
    synchronized (resizeLock) {
      if (!state.isTerminated()) {
        throw new IllegalStateException("pool '" + name + "' is not terminated");
      }
      termination = new CountDownLatch(1);
      stopping = false;
      line.reopen();
      state.reopen();
    }
  }

  @Override
  public SerialExecutor newSerialExecutor() {
    return new SerialLane(this);
  }
}
