package dev.warmpool;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The worker pool: admission by seats and the waiting line ({@link SeatPool}) over an
 * {@link Engine} that owns the workers. A seated task is placed in the engine; the engine asks back
 * only through its {@link Engine.Host} role: the capacity, the run state, and the seat of a finished
 * task (passed to the head of the line, or given back).
 */
final class BoundedPool extends SeatPool {
  private final long maxIdleNanos;
  private final AtomicInteger threadNumber = new AtomicInteger();
  final Engine engine;

  BoundedPool(WorkerPool.Builder b) {
    super(b.name, b.capacity, b.nonblocking, b.maxWaiting, new Accounting(b.failureHandler));
    this.maxIdleNanos = b.maxIdleNanos;
    ThreadFactory factory = b.threadFactory != null ? b.threadFactory : defaultFactory(b.daemon);
    this.engine = new Engine(new Host(), accounting, b.capacity, b.maxIdleNanos, b.ticker,
        new ThreadStarter(factory, counters), SharedTimer.INSTANCE, ThreadStarter.ASYNC,
        Worker::awaitSignal, Engine.SPINS);
  }

  private ThreadFactory defaultFactory(boolean daemon) {
    return r -> {
      Thread t = new Thread(r, name + "-" + Integer.toUnsignedString(threadNumber.incrementAndGet()));
      t.setDaemon(daemon);
      return t;
    };
  }

  /** The engine's view of this pool: seats, line and run state, nothing else. */
  private final class Host implements Engine.Host {
    @Override
    public int capacity() {
      return capacity;
    }

    @Override
    public boolean isRunning() {
      return state.isRunning();
    }

    @Override
    public boolean hasWaiters() {
      return line.size() > 0;
    }

    @Override
    public TaskEnvelope passSeat() {
      if (line.size() > 0 && state.seats() <= capacity) {
        TaskEnvelope e = line.poll();
        if (e != null) {
          taken(e);
          return e;
        }
      }
      return null;
    }

    @Override
    public void releaseSeat() {
      giveBackSeat();
    }

    @Override
    public int seats() {
      return state.seats();
    }

    @Override
    public void tryTerminate() {
      BoundedPool.this.tryTerminate();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Submission

  @Override
  TaskEnvelope newEntry(TaskKind kind, Object arg, Thread caller, int state) {
    return new TaskEnvelope(this, kind, arg, caller, state);
  }

  @Override
  boolean placeEntry(TaskEnvelope e, Mode mode) {
    return place(TaskEnvelope.KIND, e, mode, e.kind.countsAsTask());
  }

  @Override
  void handOff(TaskEnvelope e) {
    engine.queue(TaskEnvelope.KIND, e);
  }

  @Override
  boolean place(TaskKind kind, Object arg, Mode mode) {
    return place(kind, arg, mode, kind.countsAsTask());
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
    giveBackSeat();
    if (mode == Mode.PROBE_EXECUTE) {
      return false; // a sharded pool tries its next shard: not a rejection
    }
    accounting.rejected();
    throw new RejectedExecutionException("pool '" + name + "' could not start a worker thread",
        failure);
  }

  // ---------------------------------------------------------------------------------------------
  // Configuration and stats

  @Override
  public Duration maxIdle() {
    return Duration.ofNanos(maxIdleNanos);
  }

  @Override
  public void resize(int newCapacity) {
    WorkerPool.Builder.checkCapacity(newCapacity);
    int old;
    synchronized (resizeLock) {
      old = capacity;
      if (newCapacity > old) { // room first: seats and workers may grow once capacity is written
        engine.grow(newCapacity);
      }
      capacity = newCapacity;
    }
    if (newCapacity > old) {
      drainLine(); // new seats serve the line first
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
    return state.isRunning();
  }

  @Override
  int busy() {
    return engine.busy();
  }

  @Override
  public PoolStats stats() {
    return counters.snapshot(capacity, engine.workers(), busy(), engine.idle.size(), line.size());
  }

  // ---------------------------------------------------------------------------------------------
  // Lifecycle

  @Override
  void afterShutdown() {
    engine.retireAllIdle();
    engine.cleaner.update();
  }

  @Override
  public List<Runnable> shutdownNow() {
    List<Runnable> tasks = shutdownLine();
    engine.handBackAndInterrupt(tasks);
    tryTerminate();
    return tasks;
  }

  @Override
  boolean quiescent() {
    return engine.workers() == 0;
  }

  @Override
  void terminated() {
    engine.cleaner.update();
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    long deadline = System.nanoTime() + Math.min(unit.toNanos(timeout), Long.MAX_VALUE / 4);
    if (!awaitTerminated(timeout, unit)) {
      return false;
    }
    return engine.joinAll(deadline);
  }
}
