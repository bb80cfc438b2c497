package dev.warmpool;

import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The serial lane behind {@link WorkerPool#newSerialExecutor()}.
 *
 * <h2>Implementation notes</h2>
 * {@code wip} counts tasks offered and not yet consumed, plus one for each pending close. Offer
 * happens before increment, so a drain that sees {@code wip > 0} finds a task (or a close's phantom
 * count). Whoever moves {@code wip} from 0 to 1 owns the next drain: it dispatches the lane to the
 * pool as one carrier task ({@link #DRAIN}), which the pool does not count; the lane counts each of
 * its own tasks instead. While a drain is active or the lane waits in line, {@code wip > 0}, so no
 * second dispatch happens: a lane holds at most one worker or one place in line.
 *
 * <p>Admission: until the lane's first dispatch is accepted, submissions are serialized on the lane's
 * monitor, so a rejection concerns exactly the caller's own task. Afterwards ({@code admitted}) the
 * lane dispatches in the pool's ADMITTED mode, which waits in line rather than rejecting.
 */
final class SerialLane implements SerialExecutor {
  /** Tasks a lane runs before yielding its worker, if others wait in line. */
  static final int BUDGET = 128;

  static final Consumer<Object> DRAIN = lane -> ((SerialLane) lane).drain();

  private final BoundedPool pool;
  private final ConcurrentLinkedQueue<Runnable> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger wip = new AtomicInteger();
  private final Set<DelayedTask<?>> delayed = ConcurrentHashMap.newKeySet();
  private final Consumer<DelayedTask<?>> enterWhenDue = task -> {
    try {
      enterAdmitted(task);
    } catch (RejectedExecutionException terminated) {
      task.cancel(false); // the pool terminated before the task came due
    }
  };
  private volatile boolean admitted;
  private volatile boolean closed;

  SerialLane(BoundedPool pool) {
    this.pool = pool;
  }

  @Override
  public void execute(Runnable task) {
    AbstractWorkerPool.requireTask(task);
    checkOpen();
    if (!admitted) {
      synchronized (this) {
        if (!admitted) {
          admit(task);
          return;
        }
      }
    }
    enterAdmitted(task);
  }

  /** Under the monitor, before the first accepted dispatch: nothing else is queued. */
  private void admit(Runnable task) {
    queue.offer(task);
    wip.incrementAndGet();
    pool.laneTaskAccepted(); // before the hand-off, so that no snapshot shows it completed first
    try {
      pool.dispatch(DRAIN, this, AbstractWorkerPool.ENQUEUE);
    } catch (RuntimeException rejected) {
      queue.poll();
      wip.decrementAndGet();
      pool.laneTaskCancelled();
      throw rejected;
    }
    admitted = true;
  }

  private void enterAdmitted(Runnable task) {
    queue.offer(task);
    pool.laneTaskAccepted();
    if (wip.getAndIncrement() == 0) {
      redispatch();
    }
  }

  private void redispatch() {
    try {
      pool.dispatch(DRAIN, this, AbstractWorkerPool.ADMITTED);
    } catch (RejectedExecutionException terminated) {
      // Only a terminated pool refuses admitted work; nothing can run these tasks any more.
      discardPending();
      throw terminated;
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new RejectedExecutionException("serial lane of pool '" + pool.name() + "' is closed");
    }
    pool.checkOpen();
  }

  /** Runs on a pool worker: runs queued tasks in order until the lane is empty or yields. */
  private void drain() {
    int ran = 0;
    for (;;) {
      Runnable t = queue.poll();
      boolean handlerThrew = true;
      try {
        if (t != null) {
          if (closed) {
            pool.laneTaskCancelled();
          } else {
            pool.runLaneTask(t);
          }
        }
        handlerThrew = false;
      } finally {
        if (handlerThrew && wip.decrementAndGet() > 0) {
          redispatch(); // this worker is dying; the lane's later tasks must not stall
        }
      }
      if (wip.decrementAndGet() == 0) {
        return;
      }
      if (++ran >= BUDGET && pool.line.size() > 0) {
        redispatch(); // yield the worker and rejoin the end of the line
        return;
      }
    }
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
    AbstractWorkerPool.requireTask(task);
    Objects.requireNonNull(unit, "unit must not be null");
    checkOpen();
    admitted = true; // a delayed task is admitted when scheduled
    DelayedTask<Void> d = new DelayedTask<Void>(task, 0, enterWhenDue, pool.delayed, delayed);
    if (delay <= 0) {
      d.start(0); // still through the timer, so that it keeps its order among due tasks
      return d;
    }
    return d.start(unit.toNanos(delay));
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
    for (DelayedTask<?> d : delayed) {
      d.cancel(false);
    }
    // A phantom count: if no drain is active we own the lane and discard here; else the active
    // drain discards the rest because closed is set.
    if (wip.getAndIncrement() == 0) {
      discardPending();
    }
  }

  /** Called by the owner of the lane (wip > 0): drops every queued task until wip reaches 0. */
  private void discardPending() {
    do {
      if (queue.poll() != null) {
        pool.laneTaskCancelled();
      }
    } while (wip.decrementAndGet() > 0);
  }

  /** For shutdownNow: hands back the queued tasks of a lane that waits in line. */
  void handBack(List<Runnable> out) {
    do {
      Runnable t = queue.poll();
      if (t != null) {
        out.add(t);
      }
    } while (wip.decrementAndGet() > 0);
  }
}
