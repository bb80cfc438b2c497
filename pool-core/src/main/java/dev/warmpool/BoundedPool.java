package dev.warmpool;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The worker pool: its {@link Admission} (seats and the waiting line), its {@link Lifecycle}
 * (shutdown, termination, reboot, subpools) and its {@link Accounting}, wired to an {@link Engine}
 * that owns the workers. Each part sees the others only through small roles, all implemented by
 * {@link Wiring}: a seated task is placed in the engine; the engine asks back for the capacity, the
 * run state and the seat of a finished task; the lifecycle asks whether workers remain.
 */
final class BoundedPool extends AbstractWorkerPool {
  private final long maxIdleNanos;
  private final AtomicInteger threadNumber = new AtomicInteger();
  final Accounting accounting;
  final Admission admission;
  final Lifecycle lifecycle;
  final Engine engine;

  BoundedPool(WorkerPool.Builder b) {
    super(b.taskDecorator);
    this.maxIdleNanos = b.maxIdleNanos;
    this.accounting = new Accounting(b.failureHandler);
    Wiring wiring = new Wiring();
    this.admission = new Admission(b.name, "pool \"" + b.name + "\"", b.capacity, b.nonblocking,
        b.maxWaiting, b.maxWaitInLineNanos, b.linePolicy(), accounting, null, true, wiring,
        this::tryTerminate);
    this.lifecycle = new Lifecycle(admission, timers, wiring);
    timers.onQuiet(this::tryTerminate);
    ThreadFactory factory = b.threadFactory != null ? b.threadFactory : defaultFactory(b.daemon);
    this.engine = new Engine(wiring, accounting, b.capacity, b.maxIdleNanos, b.ticker,
        new ThreadStarter(factory, accounting.counters), SharedTimer.INSTANCE, ThreadStarter.ASYNC,
        Worker::awaitSignal, Engine.WORKER_SPINS);
  }

  private ThreadFactory defaultFactory(boolean daemon) {
    String name = admission.name;
    return r -> {
      Thread t = new Thread(r, name + "-" + Integer.toUnsignedString(threadNumber.incrementAndGet()));
      t.setDaemon(daemon);
      return t;
    };
  }

  private void tryTerminate() {
    lifecycle.tryTerminate();
  }

  /** The roles the pool's parts see of each other; nothing else of the pool. */
  private final class Wiring implements Engine.Host, Admission.Placement, Lifecycle.Host {
    // Engine.Host: seats, line and run state

    @Override
    public int capacity() {
      return admission.capacity;
    }

    @Override
    public boolean isRunning() {
      return admission.state.isRunning();
    }

    @Override
    public boolean hasWaiters() {
      return admission.line.size() > 0;
    }

    @Override
    public TaskEnvelope passSeat() {
      return admission.passSeat();
    }

    @Override
    public void releaseSeat() {
      admission.giveBackSeat();
    }

    @Override
    public int seats() {
      return admission.state.seats();
    }

    @Override
    public void tryTerminate() {
      lifecycle.tryTerminate();
    }

    // Admission.Placement: a seated task goes to the engine

    @Override
    public boolean place(TaskKind kind, Object arg, Mode mode) {
      return BoundedPool.this.place(kind, arg, mode, kind.countsAsTask());
    }

    @Override
    public boolean placeEntry(TaskEnvelope e, Mode mode) {
      return BoundedPool.this.place(TaskEnvelope.KIND, e, mode, e.kind.countsAsTask());
    }

    @Override
    public TaskEnvelope newEntry(TaskKind kind, Object arg, Thread caller, int state,
        boolean full) {
      return full || caller != null
          ? new TaskEnvelope.Full(admission, kind, arg, caller, state)
          : new TaskEnvelope(admission, kind, arg, state);
    }

    @Override
    public void handOff(TaskEnvelope e) {
      engine.queue(TaskEnvelope.KIND, e);
    }

    @Override
    public void withdrawnQueued(TaskEnvelope e) {
      // nothing beyond the counts: the worker that reaches it skips it and gives its seat back
    }

    @Override
    public int busy() {
      return engine.busy();
    }

    // Lifecycle.Host: the workers

    @Override
    public boolean quiescent() {
      return engine.workers() == 0;
    }

    @Override
    public boolean closeIfQuiescent() {
      return engine.closeIfNoWorkers();
    }

    @Override
    public void reopen() {
      engine.reopenSlots();
    }

    @Override
    public void shutDown() {
      engine.retireAllIdle();
      engine.cleaner.update();
    }

    @Override
    public void terminated() {
      engine.cleaner.update();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Submission

  @Override
  boolean dispatch(TaskKind kind, Object arg, Mode mode) {
    return admission.dispatch(kind, arg, mode);
  }

  @Override
  TaskHandle enqueue(TaskKind kind, Object arg, Mode mode, long maxWaitNanos) {
    return admission.enqueue(kind, arg, mode, maxWaitNanos);
  }

  @Override
  boolean dispatchTimed(TaskKind kind, Object arg, long nanos) throws InterruptedException {
    return admission.dispatchTimed(kind, arg, nanos);
  }

  /** See {@link Admission#tryEnqueue}: a sharded pool's probe. */
  TaskHandle tryEnqueue(TaskKind kind, Object arg) {
    return admission.tryEnqueue(kind, arg);
  }

  @Override
  void checkOpen() {
    admission.checkOpen();
  }

  @Override
  PoolClosedException closed() {
    return admission.closed();
  }

  /** With a seat taken for the task: counts it, then hands it to the engine. */
  private boolean place(TaskKind kind, Object arg, Mode mode, boolean counted) {
    if (counted) {
      accounting.accepted(); // before the hand-off: no snapshot shows it completed first
    }
    // Only a user's own execute or tryExecute on this pool (the calls that answer at once) may
    // call the factory on the caller's thread, and be rejected by its failure; enqueue and submit
    // never block in it, nor does a subpool's forwarded task (a kind that is not itself a task);
    // their starts go to the background. A sharded pool's execute probes with PROBE_EXECUTE.
    Throwable failure = engine.place(kind, arg, mode == Mode.ADMITTED,
        (mode == Mode.EXECUTE || mode == Mode.TRY || mode == Mode.PROBE_EXECUTE) && counted);
    if (failure == null) {
      return true;
    }
    if (counted) {
      accounting.withdrawn();
    }
    admission.giveBackSeat();
    if (mode == Mode.PROBE_EXECUTE) {
      return false; // a sharded pool tries its next shard: not a rejection
    }
    throw admission.noThread(failure);
  }

  @Override
  public WorkerPool newSubpool(String name, int capacity) {
    return newSubpool(name, capacity, admission.nonblocking, admission.maxWaiting);
  }

  @Override
  public WorkerPool newSubpool(String name, int capacity, boolean nonblocking, int maxWaiting) {
    return Subpool.of(this, admission, lifecycle, name, capacity, nonblocking, maxWaiting);
  }

  @Override
  public SerialExecutor newSerialExecutor() {
    return new SerialLane(this, admission);
  }

  // ---------------------------------------------------------------------------------------------
  // Configuration and stats

  @Override
  public String name() {
    return admission.name;
  }

  @Override
  public int capacity() {
    return admission.capacity;
  }

  @Override
  public boolean isNonblocking() {
    return admission.nonblocking;
  }

  @Override
  public Duration maxIdle() {
    return Duration.ofNanos(maxIdleNanos);
  }

  @Override
  public void resize(int newCapacity) {
    WorkerPool.Builder.checkCapacity(newCapacity);
    int old;
    synchronized (lifecycle.resizeLock) {
      old = admission.capacity;
      if (newCapacity > old) { // room first: seats and workers may grow once capacity is written
        engine.grow(newCapacity);
      }
      admission.capacity = newCapacity;
    }
    if (newCapacity > old) {
      admission.seatsGrew(); // new seats serve the line first
      engine.grown();
    } else {
      engine.shrunk();
    }
  }

  /** Runs the cleaner now; for tests. */
  void retireExpired() {
    engine.cleaner.runs.increment();
    engine.retireIdleSince(engine.ticker.read() - maxIdleNanos);
  }

  int workers() {
    return engine.workers();
  }

  boolean isRunning() {
    return admission.state.isRunning();
  }

  int busy() {
    return engine.busy();
  }

  @Override
  public PoolStats stats() {
    return accounting.counters.snapshot(admission.capacity, engine.workers(), busy(),
        engine.idle.size(), admission.line.size());
  }

  // ---------------------------------------------------------------------------------------------
  // Lifecycle

  @Override
  public void shutdown() {
    lifecycle.shutdown();
  }

  @Override
  public List<Runnable> shutdownNow() {
    List<Runnable> tasks = lifecycle.shutdownNowLine();
    engine.handBackAndInterrupt(tasks);
    DelayedTask.handedBack(tasks);
    lifecycle.tryTerminate();
    return tasks;
  }

  @Override
  public boolean isShutdown() {
    return lifecycle.isShutdown();
  }

  @Override
  public boolean isTerminated() {
    return lifecycle.isTerminated();
  }

  @Override
  public CompletionStage<Void> whenTerminated() {
    return lifecycle.whenTerminated();
  }

  /** Waits for the terminated state, then for the worker threads to end. */
  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    long deadline = System.nanoTime() + Math.min(unit.toNanos(timeout), Long.MAX_VALUE / 4);
    if (!lifecycle.awaitTerminated(timeout, unit)) {
      return false;
    }
    return engine.joinAll(deadline);
  }

  @Override
  public void reboot() {
    lifecycle.reboot();
  }
}
