package dev.warmpool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The serial lane behind {@link WorkerPool#newSerialExecutor()}.
 *
 * <h2>Implementation notes</h2>
 * A lane is a task queue plus one flag, {@code scheduled}: whoever sets it (false to true) dispatches
 * the lane to the pool as one carrier task ({@link #KIND}), which the pool does not count; the lane
 * counts each of its own tasks instead. The carrier drains the queue on a worker; when it finds the
 * queue empty it clears the flag and then looks once more (publish, then check), so a task offered
 * meanwhile is never stranded. So a lane holds at most one seat or one place in line.
 *
 * <p><b>Admission.</b> Until one of the lane's own dispatches has been accepted, {@link #execute}
 * calls are serialized on {@code admission}, and the first one dispatches in the caller's mode, so a
 * rejection concerns exactly the caller's task: it is taken back out of the queue before the
 * exception is thrown. Anything else queued meanwhile (a due delayed task, which is admitted work)
 * is dispatched again as admitted. Once admitted, the lane dispatches in
 * {@link Mode#ADMITTED}: it waits in line rather than being rejected. Scheduling a delayed task does
 * not admit the lane; the task itself is admitted work when due.
 *
 * <p><b>Shutdown.</b> {@code shutdownNow} hands back the queue of a lane waiting for a worker, and
 * that of a lane a worker is draining ({@link Worker#lane}). A lane that a worker picks up at the
 * very moment of {@code shutdownNow} may still run its queued tasks: they were taken with the
 * carrier, as a plain task taken by a worker runs.
 *
 * <p><b>Closing.</b> {@link #close()} cancels the queued tasks and, with nothing left, takes the
 * lane's carrier out of the pool's waiting line, so a closed lane holds no place under
 * {@code maxWaiting}; a carrier already taken by a worker just finds the queue empty.
 */
final class SerialLane implements SerialExecutor {
  /** Tasks a lane runs before yielding its worker, if others wait in line. */
  static final int BUDGET = 128;

  /** The lane's carrier: drains the lane; handed back as the lane's queued tasks. */
  static final TaskKind KIND = new TaskKind() {
    @Override
    void run(Object arg, AbstractWorkerPool pool, Worker worker) {
      ((SerialLane) arg).drain(worker);
    }

    @Override
    void handBack(Object arg, List<Runnable> out) {
      SerialLane lane = (SerialLane) arg;
      lane.handBackQueued(out);
      lane.scheduled.set(false);
    }

    @Override
    void handBackRunning(Object arg, List<Runnable> out) {
      ((SerialLane) arg).handBackQueued(out);
    }

    @Override
    boolean countsAsTask() {
      return false;
    }
  };

  private static final VarHandle DELAYED;

  static {
    try {
      DELAYED = MethodHandles.lookup().findVarHandle(SerialLane.class, "delayed", Set.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final AbstractWorkerPool pool;
  private final ConcurrentLinkedQueue<Runnable> queue = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean scheduled = new AtomicBoolean();
  /** Pending delayed tasks, for close(); made on first use, since most lanes never schedule. */
  private volatile Set<DelayedTask<?>> delayed;
  private final Object admission = new Object();
  private final Consumer<DelayedTask<?>> enterWhenDue = task -> {
    try {
      enter(task);
    } catch (RejectedExecutionException terminated) {
      task.cancel(false); // the pool terminated before the task came due
    }
  };
  private volatile boolean admitted;
  private volatile boolean closed;

  SerialLane(AbstractWorkerPool pool) {
    this.pool = pool;
  }

  @Override
  public void execute(Runnable task) {
    AbstractWorkerPool.requireTask(task);
    checkOpen();
    if (!admitted) {
      synchronized (admission) {
        if (!admitted) {
          admit(task);
          return;
        }
      }
    }
    enter(task);
  }

  @Override
  public void executeAdmitted(Runnable task) {
    AbstractWorkerPool.requireTask(task);
    checkOpen();
    admitted = true;
    enter(task);
  }

  /** Under {@code admission}: the lane's first dispatch, in the caller's mode. */
  private void admit(Runnable task) {
    queue.offer(task);
    pool.accepted(); // before the hand-off: no snapshot shows it completed first
    if (!scheduled.compareAndSet(false, true)) {
      return; // a due delayed task holds a place for the lane already: this task rides along
    }
    try {
      pool.dispatch(KIND, this, Mode.ENQUEUE);
    } catch (RuntimeException rejected) {
      boolean withdrawn = withdraw(task);
      scheduled.set(false);
      if (!queue.isEmpty()) {
        scheduleAdmitted(); // what arrived meanwhile was admitted work
      }
      if (withdrawn) {
        throw rejected;
      }
      return; // another dispatch of this lane took the task meanwhile: it was accepted after all
    }
    admitted = true;
  }

  /**
   * Takes a task that could not be dispatched back out of the queue. False if someone else took it
   * first (a drain started by a concurrent call or a due timer, or {@code shutdownNow}): then the
   * task was accepted, and the caller must not report a rejection for a task that runs.
   */
  private boolean withdraw(Runnable task) {
    if (!queue.remove(task)) {
      return false;
    }
    pool.withdrawn();
    return true;
  }

  /** Admitted work: queue it and make sure the lane is dispatched. */
  private void enter(Runnable task) {
    queue.offer(task);
    pool.accepted();
    try {
      scheduleAdmitted();
    } catch (RejectedExecutionException terminated) {
      if (withdraw(task)) {
        throw terminated;
      }
      return;
    }
    if (pool.isTerminated() && withdraw(task)) {
      // The pool terminated between checkOpen and our offer, while another call held the lane.
      throw new PoolClosedException("pool '" + pool.name() + "' is shut down");
    }
  }

  /** Dispatches the lane unless it is dispatched already; refused only by a terminated pool. */
  private void scheduleAdmitted() {
    if (scheduled.compareAndSet(false, true)) {
      try {
        pool.dispatch(KIND, this, Mode.ADMITTED);
      } catch (RejectedExecutionException terminated) {
        scheduled.set(false);
        throw terminated;
      }
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new RejectedExecutionException("serial lane of pool '" + pool.name() + "' is closed");
    }
    pool.checkOpen();
  }

  /** Runs on a pool worker: runs queued tasks in order until the lane is empty or yields. */
  private void drain(Worker w) {
    w.lane = this;
    try {
      int ran = 0;
      for (;;) {
        Runnable t = queue.poll();
        if (t == null) {
          scheduled.set(false);
          if (queue.isEmpty() || !scheduled.compareAndSet(false, true)) {
            return;
          }
          continue;
        }
        if (closed) {
          pool.withdrawn();
          continue;
        }
        runOne(t);
        if (++ran >= BUDGET && pool.hasWaiters()) {
          pool.dispatch(KIND, this, Mode.ADMITTED); // yield the worker: rejoin the end of the line
          return;
        }
      }
    } finally {
      w.lane = null;
    }
  }

  private void runOne(Runnable t) {
    boolean returned = false;
    try {
      pool.runCounted(t);
      returned = true;
    } finally {
      if (!returned) {
        // The failure handler threw and this worker dies: the lane must not stall with it.
        scheduled.set(false);
        if (!queue.isEmpty()) {
          try {
            scheduleAdmitted();
          } catch (RejectedExecutionException terminated) {
            // nothing can run them any more; shutdownNow or close will account for them
          }
        }
      }
    }
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
    AbstractWorkerPool.requireTask(task);
    Objects.requireNonNull(unit, "unit must not be null");
    checkOpen();
    // Not an admission: the task takes no thread until it is due, and is admitted work then.
    return new DelayedTask<Void>(task, 0, enterWhenDue, pool.delayed, delayedSet())
        .start(delay <= 0 ? 0 : unit.toNanos(delay));
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, long initialDelay, long period,
      TimeUnit unit) {
    return schedulePeriodic(task, initialDelay, period, unit, "period", 1);
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, long initialDelay, long delay,
      TimeUnit unit) {
    return schedulePeriodic(task, initialDelay, delay, unit, "delay", -1);
  }

  /** Each run enters the lane when due, as admitted work; the next is armed after it returned. */
  private ScheduledFuture<?> schedulePeriodic(Runnable task, long initialDelay, long period,
      TimeUnit unit, String what, int sign) {
    long signedPeriod = DelayedTask.checkPeriodic(task, period, unit, what, sign);
    checkOpen();
    return new DelayedTask<Void>(task, signedPeriod, enterWhenDue, pool.delayed, delayedSet())
        .start(initialDelay <= 0 ? 0 : unit.toNanos(initialDelay));
  }

  private Set<DelayedTask<?>> delayedSet() {
    Set<DelayedTask<?>> set = delayed;
    if (set == null) {
      // Not under `admission`: a first dispatch may hold it for as long as a thread factory blocks.
      Set<DelayedTask<?>> made = ConcurrentHashMap.newKeySet();
      set = DELAYED.compareAndSet(this, null, made) ? made : delayed;
    }
    return set;
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    Set<DelayedTask<?>> timers = delayed;
    if (timers != null) {
      for (DelayedTask<?> d : timers) {
        d.cancel(false);
      }
    }
    while (queue.poll() != null) {
      pool.withdrawn(); // cancelled: it never ran and no longer counts as accepted
    }
    // With nothing left to run, the lane gives up its place in the pool's line, so that waiting
    // and maxWaiting count only live work. A carrier a worker already took finds the queue empty.
    // Only a dispatched lane can have a place: the usual close (an idle lane) takes no line lock.
    if (scheduled.get() && queue.isEmpty() && pool.withdrawCarrier(this)) {
      scheduled.set(false);
    }
  }

  /** For shutdownNow: hands back the tasks queued in this lane. */
  void handBackQueued(List<Runnable> out) {
    for (Runnable t; (t = queue.poll()) != null; ) {
      out.add(t);
    }
  }
}
