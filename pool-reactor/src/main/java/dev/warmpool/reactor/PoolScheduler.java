package dev.warmpool.reactor;

import dev.warmpool.WorkerPool;
import java.lang.ref.WeakReference;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReference;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The {@link Scheduler} behind {@link PoolSchedulers}: a thin mapping of Reactor's calls onto a
 * {@link WorkerPool} (see {@link PoolSchedulers} for the user-facing contract). {@code schedule}
 * is {@link WorkerPool#enqueue}, which never blocks; delayed and periodic tasks go through the
 * pool's shared timer; a {@link Worker} is a serial lane. Every task passes through
 * {@link Schedulers#onSchedule} once and becomes a {@link PoolTask} in this scheduler's
 * {@link TaskGroup}, which refuses new tasks once the scheduler disposes (gracefully or not) and
 * counts the accepted ones until they end: at zero, a disposal completes (for an owned pool, once
 * the pool has terminated too).
 *
 * <p>A delayed or periodic task takes no thread until it is due, so it is refused only by a closed
 * pool (guarantee 7): Reactor turns a refused timer into an immediate error ({@code timeout} firing
 * at once, {@code Retry.backoff} giving up), which a busy pool must not cause.
 */
final class PoolScheduler implements Scheduler, Scannable {
  private static final AtomicIntegerFieldUpdater<PoolScheduler> QUIESCED =
      AtomicIntegerFieldUpdater.newUpdater(PoolScheduler.class, "quiesced");
  private static final AtomicIntegerFieldUpdater<PoolScheduler> WATCHING =
      AtomicIntegerFieldUpdater.newUpdater(PoolScheduler.class, "watching");
  private static final AtomicIntegerFieldUpdater<PoolScheduler> WATCHING_POOL =
      AtomicIntegerFieldUpdater.newUpdater(PoolScheduler.class, "watchingPool");

  final WorkerPool pool;
  private final boolean owned;
  /** This scheduler's tasks, direct and of its workers: see {@link TaskGroup}. */
  final TaskGroup tasks = new TaskGroup(this, this::quiesced);
  private final Sinks.Empty<Void> terminated = Sinks.empty();
  private volatile int quiesced;
  private volatile int watching;
  /** Whether this scheduler watches its pool's current generation for termination. */
  private volatile int watchingPool;
  /**
   * This scheduler as seen by the shared pool's termination callback while disposing; cleared once
   * quiescent, so that the pool does not keep a disposed scheduler reachable. See awaitQuiet().
   */
  private volatile AtomicReference<PoolScheduler> watch;

  PoolScheduler(WorkerPool pool, boolean owned) {
    this.pool = Objects.requireNonNull(pool, "pool must not be null");
    this.owned = owned;
  }

  @Override
  public Disposable schedule(Runnable task) {
    Runnable source = Objects.requireNonNull(task, "task must not be null");
    PoolTask t = new PoolTask(source, Schedulers.onSchedule(source), tasks);
    watchPool();
    tasks.accept(t);
    return t.submit(() -> pool.enqueue(t)); // in blocking mode it may wait in line, never blocks
  }

  /**
   * Before a task is accepted: makes sure the pool's termination will sweep this scheduler's tasks
   * (once per pool generation; a rebooted pool has a fresh termination). A {@code shutdownNow()} of
   * the pool, by whoever owns it, hands back the tasks waiting for a worker and nothing tells their
   * operators, whose subscribers would wait for ever (issue 30, fault 13): the sweep refuses each one
   * that never ran, as a closed scheduler refuses a task ({@link PoolTask#handedBack}). The pool's
   * callback holds this scheduler weakly: a scheduler nobody uses any more has no subscriber left to
   * tell.
   */
  void watchPool() {
    if (watchingPool == 0 && WATCHING_POOL.compareAndSet(this, 0, 1)) {
      WeakReference<PoolScheduler> self = new WeakReference<>(this);
      pool.whenTerminated().thenRun(() -> {
        PoolScheduler s = self.get();
        if (s != null) {
          s.watchingPool = 0; // the next task watches the next generation
          if (s.pool.isTerminated()) { // not rebooted meanwhile: nothing of ours can run any more
            s.tasks.refuseHandedBack(s.pool.name());
          }
        }
      });
    }
  }

  /**
   * A timer. A delay {@code <= 0} is due now: core hands it on at once, and on a full pool lets it
   * wait its turn (a timer is never refused for load, guarantee 7), in one call that decorates it
   * once (guarantee 15).
   */
  @Override
  public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
    Objects.requireNonNull(unit, "unit must not be null");
    Runnable source = Objects.requireNonNull(task, "task must not be null");
    PoolTask t = new PoolTask(source, Schedulers.onSchedule(source), tasks);
    watchPool(); // a due timer is accepted work: shutdownNow may hand it back
    tasks.accept(t);
    return t.submit(() -> pool.schedule(t, delay, unit));
  }

  @Override
  public Disposable schedulePeriodically(Runnable task, long initialDelay, long period,
      TimeUnit unit) {
    Objects.requireNonNull(unit, "unit must not be null");
    PoolTask t = new PoolTask(Objects.requireNonNull(task, "task must not be null"), tasks,
        period, unit, pool::scheduleAtFixedRate, pool::scheduleWithFixedDelay);
    tasks.accept(t);
    return t.submit(() -> t.arm(unit.toNanos(initialDelay)));
  }

  @Override
  public Worker createWorker() {
    return new PoolWorker(this);
  }

  /**
   * Stops this scheduler at once; see {@link PoolSchedulers} for what happens to its tasks. Never
   * blocks.
   */
  @Override
  public void dispose() {
    if (!tasks.close(TaskGroup.DISPOSED)) {
      return;
    }
    if (owned) {
      for (Runnable r : pool.shutdownNow()) {
        if (r instanceof PoolTask t) {
          t.cancel(false); // handed back: it will never run
        }
      }
    }
    awaitQuiet();
  }

  @Override
  public Mono<Void> disposeGracefully() {
    return Mono.defer(() -> {
      // Delayed tasks are left to run: the pool's shutdown cancels those not yet due (their
      // onCancel ends them), and a due one is accepted work that runs under shutdown() (guarantee
      // 7). Periodic ones stop.
      if (tasks.close(TaskGroup.GRACEFUL)) {
        awaitQuiet();
      }
      return terminated.asMono();
    });
  }

  /**
   * After a close: quiescent once no task of ours is left, or once a shared pool terminated with
   * tasks of ours that will never run, handed back to its owner by {@code shutdownNow()}
   * (guarantee 4). The pool's callback holds this scheduler only until it is quiescent.
   */
  private void awaitQuiet() {
    if (!owned && tasks.size() != 0 && WATCHING.compareAndSet(this, 0, 1)) {
      AtomicReference<PoolScheduler> self = new AtomicReference<>(this);
      watch = self;
      if (quiesced == 0) { // publish, then check: quiesced() clears a published watch
        pool.whenTerminated().thenRun(() -> {
          PoolScheduler s = self.getAndSet(null);
          if (s != null) {
            s.quiesced();
          }
        });
      }
    }
    if (tasks.size() == 0 || pool.isTerminated()) { // a terminated pool runs nothing of ours
      quiesced();
    }
  }

  /**
   * No task of this scheduler is left; runs once. An owned pool is shut down and the disposal
   * completes when it has terminated, on the thread that terminates it (no thread of our own).
   */
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
    pool.whenTerminated().thenRun(terminated::tryEmitEmpty);
  }

  /**
   * Does nothing on a live scheduler (the pool starts workers on demand).
   *
   * @throws IllegalStateException if this scheduler was disposed, gracefully or not
   */
  @Override
  public void init() {
    if (!tasks.isOpen()) {
      throw new IllegalStateException("scheduler " + this + " was disposed and cannot be reused");
    }
  }

  @Override
  public boolean isDisposed() {
    return !tasks.isOpen();
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
