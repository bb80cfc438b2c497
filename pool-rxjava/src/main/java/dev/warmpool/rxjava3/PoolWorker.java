package dev.warmpool.rxjava3;

import dev.warmpool.SerialExecutor;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.schedulers.SchedulerRunnableIntrospection;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An RxJava {@link Scheduler.Worker} over one serial lane of the pool: its tasks run one at a time,
 * non-delayed ones in submission order, and it holds a pool worker only while it has tasks.
 *
 * <p>Disposing closes the lane, which cancels its queued and delayed tasks (periodic ones too, since
 * a periodic task waits as a delayed one between runs); a task already running finishes. A task
 * polled by the lane concurrently with the dispose sees {@link #isDisposed()} and does not run.
 *
 * <p>A worker is also disposed once its scheduler shuts down (its {@code epoch} is then stale): its
 * queued tasks are skipped when the lane reaches them. A worker with delayed or periodic tasks is
 * registered with the scheduler, so that shutdown closes its lane and releases its timers at once.
 */
final class PoolWorker extends Scheduler.Worker implements TaskParent {
  private final PoolScheduler scheduler;
  /** Null for a worker created by a shut-down scheduler: disposed from the start. */
  private final SerialExecutor lane;
  private final AtomicBoolean disposed;
  /** The scheduler's epoch at creation; a shutdown moves the scheduler's on. */
  private final int epoch;
  /** Whether the scheduler tracks this worker (it has had timed tasks). */
  private volatile boolean tracked;
  /**
   * Whether this worker was admitted: its lane had a thread, for an immediate task or for a due
   * delayed one (the core admits a lane only through {@code execute}, so the worker remembers).
   */
  private volatile boolean admitted;

  PoolWorker(PoolScheduler scheduler, SerialExecutor lane, int epoch) {
    this.scheduler = scheduler;
    this.lane = lane;
    this.epoch = epoch;
    this.disposed = new AtomicBoolean(lane == null);
  }

  @Override
  public Disposable schedule(Runnable run, long delay, TimeUnit unit) {
    Objects.requireNonNull(run, "run is null");
    Objects.requireNonNull(unit, "unit is null");
    return isDisposed() ? Disposable.disposed()
        : submit(PoolScheduler.decorate(run), delay, unit, false);
  }

  /**
   * Schedules a task that already passed the schedule hook. A task due now needs a thread now: the
   * worker's first one is its admission ({@code lane.execute}); once the worker is admitted, later
   * ones are admitted work ({@code lane.executeAdmitted}), never rejected for load (guarantee 6). A
   * periodic arm ({@code timer}) due now before that goes through the timer as a delayed one does,
   * so a periodic task is never rejected for load (guarantee 7).
   */
  private Disposable submit(Runnable decorated, long delay, TimeUnit unit, boolean timer) {
    if (isDisposed()) {
      return Disposable.disposed();
    }
    PoolTask task = PoolTask.oneShot(decorated, this);
    try {
      if (delay <= 0 && admitted) {
        lane.executeAdmitted(task);
      } else if (delay <= 0 && !timer) {
        lane.execute(task);
        admitted = true;
      } else {
        trackForShutdown();
        task.setFuture(lane.schedule(task, Math.max(0, delay), unit));
      }
    } catch (RejectedExecutionException e) {
      rejected(e);
      return Disposable.disposed();
    }
    return task;
  }

  /** RxJava's own periodic schedule (see {@link Periodic}), run on this worker's lane. */
  @Override
  public Disposable schedulePeriodically(Runnable run, long initialDelay, long period,
      TimeUnit unit) {
    Objects.requireNonNull(run, "run is null");
    Objects.requireNonNull(unit, "unit is null");
    if (isDisposed()) {
      return Disposable.disposed();
    }
    Periodic p = new Periodic(this);
    Disposable rxHandle = p.schedulePeriodically(run, initialDelay, period, unit);
    if (rxHandle == Disposable.disposed()) { // the first arm was refused
      return rxHandle;
    }
    p.setRxHandle(rxHandle);
    return p;
  }

  /**
   * A rejection ends this worker, as RxJava's own {@code ExecutorWorker} does: the worker disposes
   * itself, so nothing more is scheduled on a worker whose stream already failed. The worker is one
   * unit, rejected once (guarantee 6): of several calls refused at once only the one that disposes
   * it reports. A closed lane means we were disposed meanwhile: not an error.
   */
  private void rejected(RejectedExecutionException e) {
    if (epoch == scheduler.epoch() && disposed.compareAndSet(false, true)) {
      try {
        scheduler.rejected(e);
      } finally {
        release();
      }
    }
  }

  /** A task of this worker starts: its lane has a thread, so the worker is admitted. */
  @Override
  public void running() {
    if (!admitted) {
      admitted = true;
    }
  }

  @Override
  public void timerCancelledByPool() {
    scheduler.timerCancelledByPool();
  }

  /** The lane holds this worker's tasks (closing it cancels them): nothing to track per task. */
  @Override
  public boolean add(Disposable d) {
    return !isDisposed();
  }

  @Override
  public boolean remove(Disposable d) {
    d.dispose();
    return true;
  }

  @Override
  public boolean delete(Disposable d) {
    return false;
  }

  /** From its first timed task on, a shutdown must close this worker's lane to release timers. */
  private void trackForShutdown() {
    if (!tracked) {
      tracked = true;
      scheduler.track(this);
    }
  }

  /** The scheduler's clock, so that worker and scheduler always agree. */
  @Override
  public long now(TimeUnit unit) {
    return scheduler.now(unit);
  }

  @Override
  public void dispose() {
    if (disposed.compareAndSet(false, true)) {
      release();
    }
  }

  /** After this worker was marked disposed: closes its lane, which cancels its pending tasks. */
  private void release() {
    lane.close();
    if (tracked) {
      scheduler.untrack(this);
    }
  }

  @Override
  public boolean isDisposed() {
    return disposed.get() || epoch != scheduler.epoch();
  }

  /**
   * Whether a task this worker accepted is skipped when its lane reaches it: the worker was disposed,
   * or its scheduler shut down, unless that was an owning scheduler's graceful shutdown of its pool.
   */
  @Override
  public boolean skipsAccepted() {
    return disposed.get()
        || (epoch != scheduler.epoch() && !scheduler.runsAcceptedAfterShutdown());
  }

  /**
   * One periodic task of a worker, as RxJava's {@code ExecutorScheduler} worker runs it: RxJava's
   * default {@link Scheduler.Worker#schedulePeriodically} applies the schedule hook once, keeps the
   * fixed rate on {@link #now} (rebasing it after a clock jump beyond {@link
   * Scheduler#clockDriftTolerance()}), and arms each run with {@link #schedule(Runnable, long,
   * TimeUnit)} on this view, which makes it one task of the worker's lane without applying the hook
   * again. The view is also the {@link Disposable} returned to the caller, adding what RxJava's own
   * handle lacks: it reads disposed once the task ended (disposed, a run threw, its worker was
   * disposed, the pool cancelled its timer), and it exposes the decorated runnable.
   */
  static final class Periodic extends Scheduler.Worker
      implements Runnable, SchedulerRunnableIntrospection {
    private final PoolWorker worker;
    /** RxJava's task, which runs the user's code and re-arms itself; set by the first arm. */
    private volatile Runnable rxTask;
    private volatile Runnable decorated;
    /** What RxJava's schedulePeriodically returned; null until it returned. */
    private volatile Disposable rxHandle;
    private volatile boolean disposed;

    Periodic(PoolWorker worker) {
      this.worker = worker;
    }

    /** Arms a run: RxJava passes its periodic task here, the same object each time. */
    @Override
    public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
      if (rxTask == null) {
        Runnable wrapped = task instanceof SchedulerRunnableIntrospection i
            ? i.getWrappedRunnable() : task;
        decorated = Objects.requireNonNull(wrapped,
            "run is null (returned by the RxJavaPlugins.onSchedule hook)");
        rxTask = task;
      }
      return isDisposed() ? Disposable.disposed() : worker.submit(this, delay, unit, true);
    }

    /** One run; a throw ends the periodic task, and the worker's task reports it once. */
    @Override
    public void run() {
      try {
        rxTask.run();
      } catch (Throwable t) {
        dispose();
        throw t;
      }
    }

    void setRxHandle(Disposable d) {
      rxHandle = d;
      if (disposed) { // written before read, as dispose does the reverse: no lost dispose
        d.dispose();
      }
    }

    @Override
    public void dispose() {
      disposed = true;
      Disposable d = rxHandle;
      if (d != null) {
        d.dispose();
      }
    }

    @Override
    public boolean isDisposed() {
      return disposed || worker.isDisposed();
    }

    @Override
    public long now(TimeUnit unit) {
      return worker.now(unit);
    }

    @Override
    public Runnable getWrappedRunnable() {
      return decorated;
    }

    @Override
    public String toString() {
      return "PoolWorker.Periodic[" + decorated + "]";
    }
  }
}
