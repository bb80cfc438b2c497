package dev.warmpool.reactor;

import dev.warmpool.SerialExecutor;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
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
 *
 * <p><b>Its tasks.</b> The worker is itself the group of its tasks not yet ended, in the compact
 * {@link MemberSet} it is (see {@link TaskGroup}, the scheduler's root, which holds the live
 * workers): {@code BUFFERED} is their count. A submitter counts and publishes the task first and
 * reads the states second; a dispose writes the state first and sweeps second: either the task is
 * refused or the sweep sees it. An idle worker holding one timer costs its header, seven fields and
 * the lane (issue 33: idle workers may be many).
 */
final class PoolWorker extends MemberSet implements Scheduler.Worker, Scannable, TaskOwner {
  private static final AtomicIntegerFieldUpdater<PoolWorker> STATE =
      AtomicIntegerFieldUpdater.newUpdater(PoolWorker.class, "state");

  private final PoolScheduler parent;
  private final SerialExecutor lane;
  /** {@link TaskGroup#OPEN} or {@link TaskGroup#DISPOSED}. */
  private volatile int state;
  /** Its links among its scheduler's live workers ({@link TaskGroup}, under the root's lock). */
  PoolWorker prev;
  PoolWorker next;

  /** A new worker of {@code parent}, joined to its root before any task can be accepted. */
  PoolWorker(PoolScheduler parent) {
    this.parent = parent;
    this.lane = parent.pool.newSerialExecutor();
    parent.tasks.join(this);
  }

  /**
   * Accepts a task of the worker about to be handed to core, or refuses it (the task ends) with
   * Reactor's rejections (see {@link TaskGroup#checkAccepted}).
   */
  private void accept(PoolTask t) {
    TaskGroup root = parent.tasks;
    root.counted();
    addMember(t);
    root.checkAccepted(t, state); // publish, then check
  }

  @Override
  public Disposable schedule(Runnable task) {
    Runnable source = Objects.requireNonNull(task, "task must not be null");
    PoolTask t = new PoolTask(source, Schedulers.onSchedule(source), this);
    parent.watchPool();
    accept(t);
    try {
      return t.submit(() -> lane.enqueue(t)); // its handle: a dispose withdraws it from the lane
    } catch (RuntimeException rejected) {
      if (parent.pool.isTerminated()) {
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
    PoolTask t = new PoolTask(source, Schedulers.onSchedule(source), this);
    parent.watchPool(); // a due timer is accepted work: shutdownNow may hand it back
    accept(t);
    return t.submit(() -> lane.schedule(t, delay, unit));
  }

  @Override
  public Disposable schedulePeriodically(Runnable task, long initialDelay, long period,
      TimeUnit unit) {
    Objects.requireNonNull(unit, "unit must not be null");
    PoolTask t = new PoolTask(Objects.requireNonNull(task, "task must not be null"), this,
        period, unit, lane::scheduleAtFixedRate, lane::scheduleWithFixedDelay);
    accept(t);
    return t.submit(() -> t.arm(unit.toNanos(initialDelay)));
  }

  /** Refuses later tasks, disposes each pending one and leaves the root; closes the lane. */
  @Override
  public void dispose() {
    if (!STATE.compareAndSet(this, TaskGroup.OPEN, TaskGroup.DISPOSED)) {
      return;
    }
    for (Object t : snapshot()) { // outside the lock: a disposed task leaves the worker
      ((Disposable) t).dispose();
    }
    parent.tasks.leave(this); // its tasks are ended or end by themselves
    lane.close();
  }

  @Override
  public boolean isDisposed() {
    return state == TaskGroup.DISPOSED;
  }

  /** Tasks that have not started must not start: this worker, or its scheduler, is disposed. */
  @Override
  public boolean stopsTasks() {
    return state == TaskGroup.DISPOSED || parent.tasks.isDisposed();
  }

  /** A task of this worker ended (called once per accepted task, by the task). */
  @Override
  public void ended(PoolTask t) {
    removeMember(t);
    parent.tasks.ended();
  }

  /**
   * Its tasks not ended, 0 once disposed (a disposed task still running is no longer the worker's;
   * the root counts it until it ends).
   */
  int size() {
    return state == TaskGroup.DISPOSED ? 0 : memberCount();
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
    return key == Attr.BUFFERED ? size() : null;
  }

  @Override
  public String toString() {
    return parent + ".worker";
  }
}
