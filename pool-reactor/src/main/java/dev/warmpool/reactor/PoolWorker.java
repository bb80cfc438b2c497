package dev.warmpool.reactor;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.SerialExecutor;
import java.util.Objects;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A Reactor {@link Scheduler.Worker} over one serial lane of the pool: its tasks run one at a time in
 * order, and the lane holds a pool thread only while it has tasks. Admission (and so rejection in
 * nonblocking mode) happens once, on the lane's first dispatch; later tasks wait their turn.
 *
 * <p>The worker keeps its not-yet-ended tasks in a list so that {@link #dispose()} can give each one
 * its end: pending tasks are cancelled (the lane drops them, and their {@link Disposable}s report
 * disposed), a task running on another thread is interrupted, as with Reactor's own workers.
 */
final class PoolWorker implements Scheduler.Worker, Scannable, PoolTask.Periodic {
  final PoolScheduler parent;
  private final SerialExecutor lane;
  private volatile boolean disposed;
  /** Head of the list of tasks not yet ended; accessed only under {@code this}' lock. */
  private PoolTask head;
  /** Length of that list; accessed only under {@code this}' lock. */
  private int size;

  PoolWorker(PoolScheduler parent, SerialExecutor lane) {
    this.parent = parent;
    this.lane = lane;
  }

  @Override
  public Disposable schedule(Runnable task) {
    Runnable source = PoolScheduler.requireTask(task);
    return scheduleNow(source, Schedulers.onSchedule(source));
  }

  /**
   * An immediate task on the lane. Once the lane is admitted (it accepted an immediate task, or a
   * timer of it came due, which is admitted work), core never rejects it for load again
   * (guarantee 6).
   */
  private Disposable scheduleNow(Runnable source, Runnable decorated) {
    PoolTask t = new PoolTask(source, decorated, parent, this, false);
    track(t);
    try {
      lane.execute(t);
    } catch (RuntimeException rejected) {
      t.cancelIfPending();
      if (parent.pool.isTerminated()) {
        dispose(); // the lane dropped its other pending tasks too: nothing of this worker will run
      }
      throw rejected;
    }
    return t;
  }

  @Override
  public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
    Objects.requireNonNull(unit, "unit must not be null");
    Runnable source = PoolScheduler.requireTask(task);
    Runnable decorated = Schedulers.onSchedule(source);
    if (delay <= 0) {
      try {
        return scheduleNow(source, decorated); // now, in line with the worker's immediate tasks
      } catch (PoolOverloadedException full) {
        delay = 0; // a timer is never refused for load (guarantee 7): due now, it waits its turn
      }
    }
    long d = delay;
    PoolTask t = new PoolTask(source, decorated, parent, this, true);
    return scheduleTimed(t, () -> lane.schedule(t, d, unit));
  }

  @Override
  public Disposable schedulePeriodically(Runnable task, long initialDelay, long period,
      TimeUnit unit) {
    Objects.requireNonNull(unit, "unit must not be null");
    PoolTask t = new PoolTask(Schedulers.onSchedule(PoolScheduler.requireTask(task)), parent, this,
        this, period, unit);
    return scheduleTimed(t, () -> t.schedulePeriodic(initialDelay, unit));
  }

  private Disposable scheduleTimed(PoolTask t, Supplier<Future<?>> timer) {
    track(t);
    try {
      parent.addTimed(t);
      t.setFuture(timer.get());
    } catch (RuntimeException rejected) {
      t.cancelIfPending();
      throw rejected;
    }
    return t;
  }

  @Override
  public Future<?> atFixedRate(Runnable task, long initialDelay, long period, TimeUnit unit) {
    return lane.scheduleAtFixedRate(task, initialDelay, period, unit);
  }

  @Override
  public Future<?> withFixedDelay(Runnable task, long initialDelay, long delay, TimeUnit unit) {
    return lane.scheduleWithFixedDelay(task, initialDelay, delay, unit);
  }

  /**
   * Counts the task in the scheduler, then adds it to the list, or rejects it. Counting comes first:
   * once listed, a concurrent {@link #dispose()} may end the task, which uncounts it. A disposed
   * worker refuses with Reactor's shared rejection ({@link Exceptions#failWithRejected()},
   * "Scheduler unavailable"), as Reactor's own workers do for every {@code schedule*} call.
   */
  private void track(PoolTask t) {
    parent.enter();
    synchronized (this) {
      if (!disposed) {
        t.next = head;
        if (head != null) {
          head.prev = t;
        }
        head = t;
        size++;
        return;
      }
    }
    parent.exit();
    throw Exceptions.failWithRejected();
  }

  void untrack(PoolTask t) {
    synchronized (this) {
      if (disposed) {
        return; // dispose() took the whole list
      }
      PoolTask p = t.prev;
      PoolTask n = t.next;
      if (p == null) {
        if (head != t) {
          return; // not in the list
        }
        head = n;
      } else {
        p.next = n;
      }
      if (n != null) {
        n.prev = p;
      }
      t.prev = null;
      t.next = null;
      size--;
    }
  }

  /**
   * Rejects later tasks, closes the lane (its pending tasks, immediate and delayed, are dropped) and
   * disposes every task of this worker that has not ended: pending ones will never run, one running
   * on another thread is interrupted. Tasks of other workers are untouched. Idempotent.
   */
  @Override
  public void dispose() {
    PoolTask list;
    synchronized (this) {
      if (disposed) {
        return;
      }
      disposed = true;
      list = head;
      head = null;
      size = 0;
    }
    lane.close();
    for (PoolTask t = list; t != null; ) {
      PoolTask n = t.next;
      t.dispose();
      t = n;
    }
  }

  @Override
  public boolean isDisposed() {
    return disposed;
  }

  @Override
  @SuppressWarnings("rawtypes") // Scannable declares the raw type
  public Object scanUnsafe(Attr key) {
    if (key == Attr.TERMINATED || key == Attr.CANCELLED) {
      return disposed;
    }
    if (key == Attr.PARENT) {
      return parent;
    }
    if (key == Attr.NAME) {
      return parent + ".worker";
    }
    if (key == Attr.BUFFERED) {
      synchronized (this) {
        return size;
      }
    }
    return null;
  }

  @Override
  public String toString() {
    return parent + ".worker";
  }
}
