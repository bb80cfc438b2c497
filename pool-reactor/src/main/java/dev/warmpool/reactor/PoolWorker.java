package dev.warmpool.reactor;

import dev.warmpool.SerialExecutor;
import dev.warmpool.WorkerPool;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A Reactor {@link Scheduler.Worker} over one serial lane of the pool (the shape of reactor-core's
 * {@code ExecutorServiceWorker}: a group of tasks and a submit to the lane). Its tasks run one at a
 * time in order, and the lane holds a pool thread only while it has tasks. Admission (and so
 * rejection in nonblocking mode) happens once, on the lane's first dispatch or a timer of it that
 * came due; later tasks wait their turn (guarantee 6). {@link #dispose()} refuses later tasks,
 * closes the lane and disposes the worker's tasks: pending ones never run, a running one is
 * interrupted, as with Reactor's own workers.
 */
final class PoolWorker implements Scheduler.Worker, Scannable {
  private final PoolScheduler parent;
  private final WorkerPool pool;
  private final SerialExecutor lane;
  private final WorkerGroup tasks;

  PoolWorker(PoolScheduler parent, WorkerPool pool, WorkerGroup tasks) {
    this.parent = parent;
    this.pool = pool;
    this.lane = pool.newSerialExecutor();
    this.tasks = tasks;
  }

  @Override
  public Disposable schedule(Runnable task) {
    Runnable source = Objects.requireNonNull(task, "task must not be null");
    PoolTask t = new PoolTask(source, Schedulers.onSchedule(source), tasks, false);
    parent.watchPool();
    tasks.accept(t);
    try {
      return t.submit(() -> lane.enqueue(t)); // its handle: a dispose withdraws it from the lane
    } catch (RuntimeException rejected) {
      if (pool.isTerminated()) {
        dispose(); // the lane dropped its other pending tasks too: nothing of this worker will run
      }
      throw rejected;
    }
  }

  /**
   * A timer of the lane. A delay {@code <= 0} is due now: core puts it in the lane at once, in line
   * with the worker's immediate tasks, as admitted work (never refused for load, guarantee 7), in
   * one call that decorates it once (guarantee 15).
   */
  @Override
  public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
    Objects.requireNonNull(unit, "unit must not be null");
    Runnable source = Objects.requireNonNull(task, "task must not be null");
    PoolTask t = new PoolTask(source, Schedulers.onSchedule(source), tasks, true);
    parent.watchPool(); // a due timer is accepted work: shutdownNow may hand it back
    tasks.accept(t);
    return t.submit(() -> lane.schedule(t, delay, unit));
  }

  @Override
  public Disposable schedulePeriodically(Runnable task, long initialDelay, long period,
      TimeUnit unit) {
    Objects.requireNonNull(unit, "unit must not be null");
    PoolTask t = new PoolTask(Objects.requireNonNull(task, "task must not be null"), tasks,
        period, unit, lane::scheduleAtFixedRate, lane::scheduleWithFixedDelay);
    tasks.accept(t);
    return t.submit(() -> t.arm(unit.toNanos(initialDelay)));
  }

  @Override
  public void dispose() {
    if (tasks.close()) {
      lane.close();
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
    if (key == Attr.PARENT) {
      return parent;
    }
    if (key == Attr.NAME) {
      return toString();
    }
    return key == Attr.BUFFERED ? tasks.size() : null;
  }

  @Override
  public String toString() {
    return parent + ".worker";
  }
}
