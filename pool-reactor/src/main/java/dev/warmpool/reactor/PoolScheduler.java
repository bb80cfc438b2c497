package dev.warmpool.reactor;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReference;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The {@link Scheduler} behind {@link PoolSchedulers}: a thin mapping of Reactor's calls onto a
 * {@link WorkerPool}. See {@link PoolSchedulers} for the user-facing contract.
 *
 * <h2>Implementation notes</h2>
 * <b>Mapping.</b> {@code schedule(task)} is {@link WorkerPool#enqueue}, which never blocks; delayed and
 * periodic tasks go through the pool's shared timer ({@code WorkerPool.schedule*}); a {@link Worker}
 * is a serial lane ({@link PoolWorker}). Every user task is first passed through
 * {@link Schedulers#onSchedule} and then wrapped in a {@link PoolTask}, which carries Reactor's
 * per-task {@link Disposable} semantics.
 *
 * <p><b>Run state.</b> {@code state} moves one way:
 * <pre>
 *   ACTIVE   -> GRACEFUL  on subscription to disposeGracefully()
 *   ACTIVE   -> DISPOSED  on dispose()
 *   GRACEFUL -> DISPOSED  on dispose()
 * </pre>
 * Outside ACTIVE every submission is rejected and periodic tasks stop; in DISPOSED, tasks that have not
 * started are cancelled (delayed ones at once, the others when the pool reaches them).
 *
 * <p><b>Quiescence.</b> {@code active} counts this scheduler's tasks from acceptance until they end
 * (ran, or cancelled). A submitter increments first and reads {@code state} second, a disposer writes
 * {@code state} first and reads {@code active} second, so either the submission is rejected or the
 * disposer waits for it. When {@code active} reaches 0 outside ACTIVE, the scheduler is quiescent:
 * {@link #disposeGracefully()} completes (for an owned pool, once the pool has terminated too).
 *
 * <p><b>Timed work.</b> A delayed or periodic task takes no thread until it is due, so it is
 * refused only by a closed pool (DESIGN.md guarantee 7): when due it is admitted work and waits its
 * turn. Reactor turns a refused timer into an immediate error ({@code timeout} firing at once,
 * {@code Retry.backoff} giving up), which is what a busy pool must not cause.
 */
final class PoolScheduler implements Scheduler, Scannable, PoolTask.Periodic {
  static final int ACTIVE = 0;
  static final int GRACEFUL = 1;
  static final int DISPOSED = 2;

  private static final AtomicIntegerFieldUpdater<PoolScheduler> STATE =
      AtomicIntegerFieldUpdater.newUpdater(PoolScheduler.class, "state");
  private static final AtomicLongFieldUpdater<PoolScheduler> ACTIVE_TASKS =
      AtomicLongFieldUpdater.newUpdater(PoolScheduler.class, "active");
  private static final AtomicIntegerFieldUpdater<PoolScheduler> QUIESCED =
      AtomicIntegerFieldUpdater.newUpdater(PoolScheduler.class, "quiesced");
  private static final AtomicIntegerFieldUpdater<PoolScheduler> WATCHING =
      AtomicIntegerFieldUpdater.newUpdater(PoolScheduler.class, "watching");

  /** A line deadline that never comes: a zero delay is a timer, which never expires in line. */
  private static final Duration NO_LINE_DEADLINE = ChronoUnit.FOREVER.getDuration();

  final WorkerPool pool;
  private final boolean owned;

  private volatile int state;
  private volatile long active;
  private volatile int quiesced;
  private volatile int watching;
  /** Delayed and periodic tasks not yet ended, direct or of a worker: cancelled by dispose(). */
  private final Set<PoolTask> timed = ConcurrentHashMap.newKeySet();
  private final Sinks.Empty<Void> terminated = Sinks.empty();
  /**
   * This scheduler as seen by the shared pool's termination callback while disposing; cleared once
   * quiescent, so that the pool does not keep a disposed scheduler reachable. See watchPool().
   */
  private volatile AtomicReference<PoolScheduler> watch;

  PoolScheduler(WorkerPool pool, boolean owned) {
    this.pool = Objects.requireNonNull(pool, "pool must not be null");
    this.owned = owned;
  }

  // ---------------------------------------------------------------------------------------------
  // Direct scheduling

  @Override
  public Disposable schedule(Runnable task) {
    Runnable source = requireTask(task);
    return scheduleNow(source, Schedulers.onSchedule(source), false);
  }

  /**
   * An immediate task; in blocking mode it may wait in line, under the pool's line deadline unless
   * it is a {@code timer} (a delay {@code <= 0}), which is never refused for load (guarantee 7).
   */
  private Disposable scheduleNow(Runnable source, Runnable decorated, boolean timer) {
    PoolTask t = new PoolTask(source, decorated, this, null, false);
    enter();
    try {
      t.setHandle(timer ? pool.enqueue(t, NO_LINE_DEADLINE) : pool.enqueue(t));
    } catch (RuntimeException rejected) {
      t.cancelIfPending();
      throw rejected;
    }
    return t;
  }

  @Override
  public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
    Objects.requireNonNull(unit, "unit must not be null");
    Runnable source = requireTask(task);
    Runnable decorated = Schedulers.onSchedule(source);
    if (delay <= 0) {
      try {
        return scheduleNow(source, decorated, true);
      } catch (PoolOverloadedException full) {
        delay = 0; // a timer is never refused for load (guarantee 7): due now, it waits its turn
      }
    }
    PoolTask t = new PoolTask(source, decorated, this, null, true);
    enterTimed(t);
    try {
      t.setFuture(pool.schedule(t, delay, unit));
    } catch (RuntimeException rejected) {
      t.cancelIfPending();
      throw rejected;
    }
    return t;
  }

  @Override
  public Disposable schedulePeriodically(Runnable task, long initialDelay, long period,
      TimeUnit unit) {
    Objects.requireNonNull(unit, "unit must not be null");
    PoolTask t = new PoolTask(Schedulers.onSchedule(requireTask(task)), this, null, this, period,
        unit);
    enterTimed(t);
    try {
      t.setFuture(t.schedulePeriodic(initialDelay, unit));
    } catch (RuntimeException rejected) {
      t.cancelIfPending();
      throw rejected;
    }
    return t;
  }

  @Override
  public Future<?> atFixedRate(Runnable task, long initialDelay, long period, TimeUnit unit) {
    return pool.scheduleAtFixedRate(task, initialDelay, period, unit);
  }

  @Override
  public Future<?> withFixedDelay(Runnable task, long initialDelay, long delay, TimeUnit unit) {
    return pool.scheduleWithFixedDelay(task, initialDelay, delay, unit);
  }

  @Override
  public Worker createWorker() {
    return new PoolWorker(this, pool.newSerialExecutor());
  }

  // ---------------------------------------------------------------------------------------------
  // Accounting, shared with PoolWorker

  static Runnable requireTask(Runnable task) {
    return Objects.requireNonNull(task, "task must not be null");
  }

  /** Counts a task about to be submitted; rejects it if this scheduler no longer accepts work. */
  void enter() {
    ACTIVE_TASKS.incrementAndGet(this);
    if (state != ACTIVE) {
      exit();
      throw new RejectedExecutionException("scheduler " + this + " is disposed");
    }
  }

  /** Counts a timed task and registers it for cancellation by {@link #dispose()}. */
  void enterTimed(PoolTask t) {
    enter();
    addTimed(t);
  }

  /**
   * Registers a timed task, already counted by {@link #enter()}, for cancellation by
   * {@link #dispose()} (and a periodic one by {@link #disposeGracefully()}). Publish, then check: a
   * disposal that swept the set before the task was in it is seen here, and the task is refused, so
   * that no timer of a disposed scheduler stays armed.
   */
  void addTimed(PoolTask t) {
    timed.add(t);
    if (state == DISPOSED || (state == GRACEFUL && t.isPeriodic())) {
      t.cancelIfPending();
      throw new RejectedExecutionException("scheduler " + this + " is disposed");
    }
  }

  void exit() {
    if (ACTIVE_TASKS.decrementAndGet(this) == 0 && state != ACTIVE) {
      quiesced();
    }
  }

  /** Called once per accepted task when it has ended (see {@link PoolTask}). */
  void taskEnded(PoolTask t) {
    if (t.worker != null) {
      t.worker.untrack(t);
    }
    if (t.timed) {
      timed.remove(t);
    }
    exit();
  }

  /** Disposed, not merely disposing gracefully: tasks that have not started must not start. */
  boolean isStopped() {
    return state == DISPOSED;
  }

  /** No longer accepting work: disposed or disposing gracefully. */
  boolean isStopping() {
    return state != ACTIVE;
  }

  // ---------------------------------------------------------------------------------------------
  // Lifecycle

  /**
   * Stops this scheduler at once; see {@link PoolSchedulers} for what happens to its tasks. Never
   * blocks.
   */
  @Override
  public void dispose() {
    if (STATE.getAndSet(this, DISPOSED) == DISPOSED) {
      return;
    }
    for (PoolTask t : timed) {
      t.cancelIfPending();
    }
    watchPool();
    if (owned) {
      for (Runnable r : pool.shutdownNow()) {
        if (r instanceof PoolTask) {
          ((PoolTask) r).cancelIfPending();
        }
      }
    }
    if (active == 0 || pool.isTerminated()) {
      quiesced();
    }
  }

  @Override
  public Mono<Void> disposeGracefully() {
    return Mono.defer(() -> {
      beginGraceful();
      return terminated.asMono();
    });
  }

  private void beginGraceful() {
    if (!STATE.compareAndSet(this, ACTIVE, GRACEFUL)) {
      return; // already disposing; the caller just waits for the same end
    }
    for (PoolTask t : timed) {
      if (t.isPeriodic()) {
        t.cancelIfPending();
      }
    }
    // Delayed tasks are left to run: the pool's shutdown cancels those not yet due (their onCancel
    // ends them), and a due one is accepted work that runs under shutdown() (guarantee 7).
    watchPool();
    if (active == 0 || pool.isTerminated()) { // a terminated pool will run nothing of ours
      quiesced();
    }
  }

  /**
   * Lets a disposal end when the pool terminates with tasks of ours that will never run: those that
   * the pool's {@code shutdownNow()} handed back to its owner (guarantee 4). At once if the pool
   * has terminated already.
   */
  private void watchPool() {
    if (owned || active == 0 || !WATCHING.compareAndSet(this, 0, 1)) {
      return; // owned: shut down by this scheduler, after its tasks; no task: nothing to wait for
    }
    AtomicReference<PoolScheduler> self = new AtomicReference<>(this);
    watch = self;
    if (quiesced != 0) {
      return;
    }
    pool.whenTerminated().thenRun(() -> {
      PoolScheduler s = self.getAndSet(null);
      if (s != null) {
        s.quiesced();
      }
    });
  }

  /**
   * Runs {@code then} once the owned pool has terminated and its worker threads have ended, as
   * Reactor's own schedulers complete a graceful disposal: at once, or on a thread that waits.
   */
  private void afterTermination(Runnable then) {
    if (pool.isTerminated()) {
      then.run();
      return;
    }
    Thread awaiter = new Thread(() -> {
      try {
        while (!pool.awaitTermination(1, TimeUnit.DAYS)) {
          // keep waiting: the pool is shut down, so it terminates once its running tasks end
        }
        then.run();
      } catch (InterruptedException e) {
        terminated.tryEmitError(e);
      }
    }, pool.name() + "-dispose");
    awaiter.setDaemon(true);
    awaiter.start();
  }

  /** No task of this scheduler is left; runs once. */
  private void quiesced() {
    if (!QUIESCED.compareAndSet(this, 0, 1)) {
      return;
    }
    if (!owned) {
      AtomicReference<PoolScheduler> w = watch;
      if (w != null) {
        w.set(null);
      }
      terminated.tryEmitEmpty();
      return;
    }
    pool.shutdown(); // graceful: nothing of ours is left in it; after dispose(): already shut down
    afterTermination(terminated::tryEmitEmpty);
  }

  /**
   * Does nothing on a live scheduler (the pool starts workers on demand).
   *
   * @throws IllegalStateException if this scheduler was disposed, gracefully or not
   */
  @Override
  public void init() {
    if (state != ACTIVE) {
      throw new IllegalStateException("scheduler " + this + " was disposed and cannot be reused");
    }
  }

  @Override
  public boolean isDisposed() {
    return state != ACTIVE;
  }

  @Override
  @SuppressWarnings("rawtypes") // Scannable declares the raw type
  public Object scanUnsafe(Attr key) {
    if (key == Attr.TERMINATED || key == Attr.CANCELLED) {
      return isDisposed();
    }
    if (key == Attr.NAME) {
      return toString();
    }
    if (key == Attr.CAPACITY) {
      return pool.capacity();
    }
    if (key == Attr.BUFFERED) {
      return pool.stats().waiting();
    }
    return null;
  }

  @Override
  public String toString() {
    return pool.toString();
  }
}
