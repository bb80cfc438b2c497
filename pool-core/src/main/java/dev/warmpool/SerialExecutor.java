package dev.warmpool;

import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A serial lane over a {@link WorkerPool}: tasks run one at a time, in submission order, on pool
 * workers. The lane holds a worker only while it has tasks: the first task of a burst takes a worker
 * from the top of the idle stack, that worker drains the lane, and when the lane is empty the worker
 * goes back on the stack. Idle lanes hold no thread.
 *
 * <h2>Admission once</h2>
 * The first time a lane needs a worker it is admitted or rejected like a task: in nonblocking mode
 * with the pool full, {@link #execute} throws {@link PoolOverloadedException} (the task is not
 * accepted); in blocking mode the lane waits in line without blocking the caller. Once admitted, the
 * lane is never rejected for being full again: a later burst that finds the pool full waits its turn
 * in the line, where a lane holds at most one place. So the waiting line can exceed {@code maxWaiting}
 * by at most the number of admitted lanes.
 *
 * <h2>Fairness</h2>
 * After running a budget of tasks while others wait in line, the lane yields its worker and rejoins
 * the end of the line.
 *
 * <h2>Close</h2>
 * {@link #close()} cancels the lane's pending tasks (immediate, delayed and periodic, those of this lane only);
 * a task already running finishes. Later submissions throw
 * {@link java.util.concurrent.RejectedExecutionException}.
 */
public interface SerialExecutor extends Executor, AutoCloseable {

  /**
   * Appends the task to the lane.
   *
   * @throws NullPointerException if {@code task} is null
   * @throws PoolOverloadedException if the lane needs its first worker, the pool is nonblocking and
   *     full
   * @throws PoolClosedException if the pool is shut down
   * @throws java.util.concurrent.RejectedExecutionException if the lane is closed
   */
  @Override
  void execute(Runnable task);

  /**
   * Appends the task as admitted work, without an admission check: it is never rejected for load
   * (it waits its turn in line, guarantee 6), and the lane counts as admitted from now on. This is
   * the explicit admission for an adapter whose unit of work was admitted elsewhere, such as a
   * coroutine whose parent already holds this pool.
   *
   * @throws NullPointerException if {@code task} is null
   * @throws PoolClosedException if the pool is shut down
   * @throws java.util.concurrent.RejectedExecutionException if the lane is closed
   */
  void executeAdmitted(Runnable task);

  /**
   * Appends the task to the lane, as {@link #execute} does (the same admission, the same
   * exceptions), and returns a handle on it. {@link TaskHandle#cancel()} withdraws the task while it
   * has not started: it leaves the lane's queue, counts in none of the pool's counters, and if it
   * was the lane's last pending task the lane gives up its place in the pool's line at once (so it
   * no longer counts under {@code maxWaiting}). Exactly one of "it runs" and "it is withdrawn"
   * happens, also when the cancel races the lane's worker. {@code cancel(true)} on a running task
   * interrupts that run only. A task closed with the lane or handed back by {@code shutdownNow}
   * reads done, not cancelled; one that expires with its lane (an unadmitted lane past
   * {@code maxWaitInLine} or the {@code controlledDelay} bound) reads expired, and hears {@link CancellationAware#onExpired} if it is
   * one.
   *
   * @throws NullPointerException if {@code task} is null
   * @throws PoolOverloadedException if the lane needs its first worker, the pool is nonblocking and
   *     full
   * @throws PoolClosedException if the pool is shut down
   * @throws java.util.concurrent.RejectedExecutionException if the lane is closed
   */
  TaskHandle enqueue(Runnable task);

  /**
   * Runs the task on this lane after the delay. The task goes through the pool's shared timer and
   * re-enters the lane when due, as admitted work; scheduling it does not admit the lane (guarantee
   * 7: timers take no thread until due); tasks with equal delays scheduled from one thread run in
   * submission order. A delay {@code <= 0} is due at the call: the task enters the lane at once,
   * from the caller's thread, as admitted work (never refused for load), in order with the lane's
   * other tasks. Cancelling the returned future removes the task at once.
   *
   * @throws NullPointerException if {@code task} or {@code unit} is null
   * @throws java.util.concurrent.RejectedExecutionException if the lane is closed or the pool is shut
   *     down
   */
  ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit);

  /**
   * Runs the task on this lane periodically, first after {@code initialDelay}, then every
   * {@code period} (fixed rate, as {@link java.util.concurrent.ScheduledExecutorService} does: a run
   * that is late is followed by the next without pause, and runs never overlap). Each run re-enters
   * the lane when due, as admitted work, in order with the lane's other tasks. A run that throws
   * stops the schedule (its future completes with the exception, which also goes to the pool's
   * failure handler); cancelling the future or closing the lane stops it.
   *
   * @throws NullPointerException if {@code task} or {@code unit} is null
   * @throws IllegalArgumentException if {@code period <= 0}
   * @throws java.util.concurrent.RejectedExecutionException if the lane is closed or the pool is shut
   *     down
   */
  ScheduledFuture<?> scheduleAtFixedRate(Runnable task, long initialDelay, long period, TimeUnit unit);

  /**
   * Like {@link #scheduleAtFixedRate}, but each run is armed {@code delay} after the previous one
   * returned (fixed delay).
   *
   * @throws NullPointerException if {@code task} or {@code unit} is null
   * @throws IllegalArgumentException if {@code delay <= 0}
   * @throws java.util.concurrent.RejectedExecutionException if the lane is closed or the pool is shut
   *     down
   */
  ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, long initialDelay, long delay,
      TimeUnit unit);

  /** Whether {@link #close()} was called. */
  boolean isClosed();

  /** Cancels the pending tasks of this lane; idempotent. */
  @Override
  void close();
}
