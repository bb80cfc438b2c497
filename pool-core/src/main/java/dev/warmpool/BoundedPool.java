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
final class BoundedPool extends SeatPool {
  /** At most this many idle workers spin at once: more would take the CPU from busy threads. */
  static final int MAX_SPINNERS = Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
  /** How long after a worker failed to start in the background a start is tried again. */
  private static final long START_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  private final long maxIdleNanos;
  private final Thread.UncaughtExceptionHandler failureHandler;
  final Ticker ticker;

  final RunQueue runQueue;
  final IdleStack idle;
  private final ThreadStarter starter;
  final Cleaner cleaner;
  /** Workers spinning now, plus workers being woken or started to spin. */
  private final AtomicInteger spinning = new AtomicInteger();
  private final AtomicInteger threadNumber = new AtomicInteger();
  private final SharedTimer.Task startRetry = new SharedTimer.Task() {
    @Override
    void fire() {
      startInBackground();
    }
  };

  BoundedPool(WorkerPool.Builder b) {
    super(b.name, b.capacity, b.nonblocking, b.maxWaiting);
    this.maxIdleNanos = b.maxIdleNanos;
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

  @Override
  WaitingLine.Entry newEntry(TaskKind kind, Object arg, Thread caller, int state) {
    return new WaitingLine.Entry(this, kind, arg, caller, state);
  }

  @Override
  boolean placeEntry(WaitingLine.Entry e, Mode mode) {
    return place(WaitingLine.Entry.KIND, e, mode, e.kind.countsAsTask());
  }

  @Override
  void handOff(WaitingLine.Entry e) {
    runQueue.offer(WaitingLine.Entry.KIND, e);
    signalWork();
  }

  /** With a seat taken for the task: counts it, then starts a worker for it or queues it. */
  @Override
  boolean place(TaskKind kind, Object arg, Mode mode) {
    return place(kind, arg, mode, kind.countsAsTask());
  }

  private boolean place(TaskKind kind, Object arg, Mode mode, boolean counted) {
    if (counted) {
      counters.submitted.increment(); // before the hand-off: no snapshot shows it completed first
    }
    if (spinning.get() == 0 && idle.size() == 0 && ThreadStarter.mayStartHere()
        && starter.tryReserve(capacity)) {
      Throwable failure = startWorker(new Worker(this, kind, arg));
      if (failure == null) {
        return true;
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
    return true;
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

  @Override
  void taskCompleted() {
    counters.completed.increment();
  }

  @Override
  void taskFailed(Throwable t) {
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
  public Duration maxIdle() {
    return Duration.ofNanos(maxIdleNanos);
  }

  @Override
  int defaultMaxWaiting() {
    return maxWaiting;
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
  @Override
  int busy() {
    return Math.max(0, state.seats() - runQueue.size());
  }

  @Override
  public PoolStats stats() {
    return counters.snapshot(capacity, starter.workers(), busy(), idle.size(), line.size());
  }

  // ---------------------------------------------------------------------------------------------
  // Lifecycle

  @Override
  void afterShutdown() {
    retireAllIdle();
    cleaner.update();
  }

  @Override
  public List<Runnable> shutdownNow() {
    List<Runnable> tasks = shutdownLine();
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

  @Override
  boolean quiescent() {
    return starter.workers() == 0;
  }

  @Override
  void terminated() {
    cleaner.update();
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    long deadline = System.nanoTime() + Math.min(unit.toNanos(timeout), Long.MAX_VALUE / 4);
    if (!awaitTerminated(timeout, unit)) {
      return false;
    }
    return starter.joinAll(deadline);
  }
}
