package dev.warmpool.rxjava3;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.plugins.RxJavaPlugins;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.ToLongFunction;

/**
 * The RxJava {@link Scheduler} behind {@link PoolSchedulers} and {@link PoolScope}.
 *
 * <h2>Implementation notes</h2>
 * <b>Mapping.</b> Everything is one call into the core; this class holds no queue and no thread:
 * <pre>
 *   createWorker()                      -> a PoolWorker over pool.newSerialExecutor()
 *   scheduleDirect(run)                 -> pool.enqueue(task)        (never blocks the caller; past
 *                                          a line deadline it expires: reported as a rejection)
 *   scheduleDirect(run, delay > 0)      -> pool.schedule(task, delay)
 *   schedulePeriodicallyDirect(...)     -> pool.scheduleAtFixedRate(task, ...)
 *   Worker.schedule(run)                -> lane.execute(task)         (the core admits the lane once)
 *   Worker.schedule(run, delay > 0)     -> lane.schedule(task, delay)
 *   Worker.schedulePeriodically(...)    -> lane.schedule(task, delay) for each run, or at once
 *                                          (lane.execute) when late
 * </pre>
 * as RxJava's {@code ExecutorScheduler} does over a {@code ScheduledExecutorService}.
 * Every task passes through {@link RxJavaPlugins#onSchedule} once, when it is scheduled.
 *
 * <p><b>Rejections.</b> A {@link RejectedExecutionException} from the core (pool full in nonblocking
 * mode, waiting line full, pool closed) is never thrown to the caller: it goes to
 * {@code onRejected} and the call returns {@link Disposable#disposed()}. The conventional schedulers
 * pass it to {@link RxJavaPlugins#onError}; a {@link PoolScope} ends its stream with it.
 *
 * <p><b>Lifecycle.</b> Two states, changed only under {@code lifecycle}:
 * <pre>
 *   RUNNING  -> SHUTDOWN  on shutdown(): bumps {@code epoch}; disposes every tracked disposable, or,
 *                         if owning, shuts the pool down gracefully instead: accepted tasks of
 *                         its workers and due timers run, the pool cancels timers not yet due
 *   SHUTDOWN -> RUNNING   on start(): an owning scheduler first reboots its pool if it has terminated
 * </pre>
 * A worker remembers the epoch it was created in and counts as disposed once the epoch moved on, so
 * workers need no registration on the hot path (a {@code subscribeOn} creates one per subscription).
 * What shutdown must actively cancel are timers: {@code live} holds pending delayed and periodic
 * direct tasks, and each worker from its first delayed or periodic task on. Immediate direct tasks are
 * not tracked: they are already in the pool's hands and run. Each tracked item is added first and then
 * checks the state, while shutdown changes the state first and then iterates, so an item created
 * during a shutdown is disposed by one side or the other.
 */
final class PoolScheduler extends Scheduler implements TaskParent {
  final WorkerPool pool;
  private final boolean owning;
  private final Consumer<? super RejectedExecutionException> onRejected;
  /** The time source of {@link #now}; null means RxJava's default clock. For tests. */
  private final ToLongFunction<TimeUnit> clock;
  private final String label;
  private final Set<Disposable> live = ConcurrentHashMap.newKeySet();
  private final Object lifecycle = new Object();
  private volatile boolean shutdown;
  /** Moves on at each shutdown; workers of an older epoch are disposed. */
  private volatile int epoch;

  PoolScheduler(WorkerPool pool, boolean owning,
      Consumer<? super RejectedExecutionException> onRejected, ToLongFunction<TimeUnit> clock,
      String label) {
    this.pool = Objects.requireNonNull(pool, "pool is null");
    this.owning = owning;
    this.onRejected = onRejected;
    this.clock = clock;
    this.label = label;
  }

  /** A conventional scheduler: rejections go to {@link RxJavaPlugins#onError}. */
  static PoolScheduler conventional(WorkerPool pool, boolean owning) {
    return new PoolScheduler(pool, owning, RxJavaPlugins::onError, null,
        owning ? "PoolSchedulers.fromOwned" : "PoolSchedulers.from");
  }

  @Override
  public Worker createWorker() {
    int e = epoch; // read before the flag: a shutdown in between leaves the worker stale, disposed
    if (shutdown) {
      return new PoolWorker(this, null, e);
    }
    return new PoolWorker(this, pool.newSerialExecutor(), e);
  }

  @Override
  public Disposable scheduleDirect(Runnable run, long delay, TimeUnit unit) {
    Objects.requireNonNull(run, "run is null");
    Objects.requireNonNull(unit, "unit is null");
    if (shutdown) {
      return Disposable.disposed();
    }
    PoolTask task = PoolTask.oneShot(decorate(run), this, delay <= 0);
    return arm(task, unit.toNanos(delay), false) ? task : Disposable.disposed();
  }

  @Override
  public Disposable schedulePeriodicallyDirect(Runnable run, long initialDelay, long period,
      TimeUnit unit) {
    Objects.requireNonNull(run, "run is null");
    Objects.requireNonNull(unit, "unit is null");
    if (shutdown) {
      return Disposable.disposed();
    }
    PoolTask task = PoolTask.fixedRate(decorate(run), this);
    add(task);
    try {
      // a period <= 0 (RxJava: run again at once) is the core's shortest period, 1 ns
      task.setFuture(pool.scheduleAtFixedRate(task, unit.toNanos(initialDelay),
          Math.max(1, unit.toNanos(period)), TimeUnit.NANOSECONDS));
    } catch (RejectedExecutionException e) {
      task.dispose();
      rejected(e);
      return Disposable.disposed();
    }
    return task;
  }

  /**
   * An immediate direct task goes to {@code pool.enqueue} (never blocks the caller); a delayed one
   * to the pool's timer, tracked until it ends.
   */
  @Override
  public boolean arm(PoolTask task, long delayNanos, boolean timer) {
    try {
      if (delayNanos <= 0 && !timer) {
        task.setHandle(pool.enqueue(task));
      } else {
        add(task);
        task.setFuture(pool.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS));
      }
      return true;
    } catch (RejectedExecutionException e) {
      task.dispose();
      rejected(e);
      return false;
    }
  }

  @Override
  public long now(TimeUnit unit) {
    return clock == null ? super.now(unit) : clock.applyAsLong(unit);
  }

  @Override
  public void start() {
    synchronized (lifecycle) {
      if (!shutdown) {
        return;
      }
      if (owning && pool.isShutdown()) {
        if (!pool.isTerminated()) {
          // Its last tasks still run, so it cannot reopen yet. Stay shut down rather than run on
          // over a closed pool: clearing the flag now would make every later start() a no-op and
          // leave this scheduler dead for good. A later start() reboots it.
          return;
        }
        try {
          pool.reboot();
        } catch (IllegalStateException rebootedMeanwhile) {
          // someone else reopened it: fine
        }
      }
      shutdown = false;
    }
  }

  @Override
  public void shutdown() {
    synchronized (lifecycle) {
      if (shutdown) {
        return;
      }
      shutdown = true;
      epoch++;
      if (owning) {
        // The pool's graceful shutdown (guarantee 7): what it accepted runs, a due timer too; it
        // cancels the timers not yet due, which then end (onCancel). Workers are tracked only so
        // that a shutdown can close their lanes: the pool settles their timers now.
        live.removeIf(d -> d instanceof PoolWorker);
        pool.shutdown();
        return;
      }
      for (Disposable d : live) {
        d.dispose();
      }
    }
  }

  boolean isShutdown() {
    return shutdown;
  }

  int epoch() {
    return epoch;
  }

  /**
   * Whether tasks a stopped worker had accepted still run: yes for an owning scheduler, whose
   * shutdown is its pool's graceful one; no for one over a shared pool, whose shutdown stops it.
   */
  boolean runsAcceptedAfterShutdown() {
    return owning;
  }

  /** Applies the schedule hook once; a hook that returns null is refused like a null task. */
  static Runnable decorate(Runnable run) {
    return Objects.requireNonNull(RxJavaPlugins.onSchedule(run),
        "run is null (returned by the RxJavaPlugins.onSchedule hook)");
  }

  /**
   * Reports a rejection, unless this scheduler is shut down: then the rejection is the shutdown
   * racing the call (an owning scheduler closed its pool), which is not an error.
   */
  void rejected(RejectedExecutionException e) {
    if (!shutdown) {
      onRejected.accept(e);
    }
  }

  /**
   * A task of this scheduler ended unrun because the pool ended it. An immediate direct task that
   * {@code expired} in line (issue 23) is reported like a rejection, with a {@link
   * PoolOverloadedException}: a {@link PoolScope} ends its stream with it, a conventional scheduler
   * passes it to {@code RxJavaPlugins.onError}. A pending timer cancelled by a shutdown: a {@link
   * PoolScope} promises its stream a {@link dev.warmpool.PoolClosedException} then (fault 4); a
   * conventional scheduler drops it, as RxJava's own schedulers drop the tasks of a dead executor.
   */
  @Override
  public void cancelledByPool(boolean expired) {
    if (expired) {
      rejected(new PoolOverloadedException("pool '" + pool.name() + "' is overloaded: a task"
          + " waited in line past its deadline (maxWaitInLine)"));
    } else if (onRejected instanceof RejectionScope && pool.isShutdown()) {
      rejected(new dev.warmpool.PoolClosedException("pool '" + pool.name()
          + "' shut down while a timer of this stream was pending"));
    }
  }

  /**
   * Registers what a shutdown must cancel. If a shutdown or a dispose came first, the item may have
   * missed its own removal: it is disposed and removed here.
   */
  void track(Disposable d) {
    live.add(d);
    boolean stopped = shutdown;
    if (stopped && owning && d instanceof PoolWorker) {
      live.remove(d); // its lane's timers are the pool's shutdown's to settle
      return;
    }
    if (stopped || d.isDisposed()) {
      d.dispose();
      live.remove(d);
    }
  }

  void untrack(Disposable d) {
    live.remove(d);
  }

  /** Tracks a delayed or periodic direct task; false (and disposed) if it came too late. */
  @Override
  public boolean add(Disposable d) {
    track(d);
    return !d.isDisposed();
  }

  @Override
  public boolean remove(Disposable d) {
    if (delete(d)) {
      d.dispose();
      return true;
    }
    return false;
  }

  /** A direct task ended: it no longer needs cancelling at shutdown. */
  @Override
  public boolean delete(Disposable d) {
    return live.remove(d);
  }

  /** A direct task is never skipped: once the pool has it, it runs. */
  @Override
  public boolean skipsAccepted() {
    return false;
  }

  /** Tracked items: pending delayed or periodic direct tasks, workers with timed tasks; for tests. */
  int liveCount() {
    return live.size();
  }

  @Override
  public String toString() {
    return label + "(" + pool + ")";
  }
}
