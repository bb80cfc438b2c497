package dev.warmpool;

/**
 * An immutable snapshot of a pool's state and cumulative counters, taken by {@link WorkerPool#stats()}.
 *
 * <p>Gauges ({@link #capacity()}, {@link #workers()}, {@link #busy()}, {@link #idle()},
 * {@link #waiting()}) describe the moment of the snapshot; the other values only grow, except that
 * a task withdrawn by its {@link TaskHandle} (or a cancelled lane task) leaves {@code submitted}.
 * Each field is read separately without stopping the pool, so under load the fields may be mutually
 * inconsistent by a few units; once the pool is quiescent (no task running, none being submitted)
 * they are exact and:
 * <pre>
 *   submitted == completed + failed + (tasks returned by shutdownNow)
 *   workersStarted - workersExpired - workersStopped == workers
 *   busy == 0, idle == workers
 * </pre>
 * A worker is busy (running a task), idle (parked on the idle stack) or between the two for a few
 * microseconds (spinning for the next task), so {@code busy + idle <= workers}.
 */
public final class PoolStats {
  private final int capacity;
  private final int workers;
  private final int busy;
  private final int idle;
  private final int waiting;
  private final long submitted;
  private final long completed;
  private final long failed;
  private final long rejected;
  private final long expired;
  private final long workersStarted;
  private final long workersExpired;
  private final long workersStopped;

  PoolStats(int capacity, int workers, int busy, int idle, int waiting, long submitted,
      long completed, long failed, long rejected, long expired, long workersStarted,
      long workersExpired, long workersStopped) {
    this.capacity = capacity;
    this.workers = workers;
    this.idle = Math.min(idle, workers);
    this.busy = Math.min(busy, workers - this.idle);
    this.waiting = waiting;
    this.submitted = submitted;
    this.completed = completed;
    this.failed = failed;
    this.rejected = rejected;
    this.expired = expired;
    this.workersStarted = workersStarted;
    this.workersExpired = workersExpired;
    this.workersStopped = workersStopped;
  }

  static PoolStats sum(Iterable<PoolStats> parts) {
    int capacity = 0, workers = 0, busy = 0, idle = 0, waiting = 0;
    long submitted = 0, completed = 0, failed = 0, rejected = 0, lineExpired = 0;
    long started = 0, expired = 0, stopped = 0;
    for (PoolStats s : parts) {
      capacity += s.capacity;
      workers += s.workers;
      busy += s.busy;
      idle += s.idle;
      waiting += s.waiting;
      submitted += s.submitted;
      completed += s.completed;
      failed += s.failed;
      rejected += s.rejected;
      lineExpired += s.expired;
      started += s.workersStarted;
      expired += s.workersExpired;
      stopped += s.workersStopped;
    }
    return new PoolStats(capacity, workers, busy, idle, waiting, submitted, completed, failed, rejected,
        lineExpired, started, expired, stopped);
  }

  /** The maximum number of worker threads at the time of the snapshot. */
  public int capacity() { return capacity; }

  /**
   * Live worker threads, busy, spinning or idle (a worker counts from the moment its slot is
   * reserved until it exits; a retired worker stops counting at once, before its thread ends).
   */
  public int workers() { return workers; }

  /** Tasks running now (accepted tasks that hold a seat and are no longer queued for a worker). */
  public int busy() { return busy; }

  /** Workers parked on the idle stack, waiting to be woken for a task. */
  public int idle() { return idle; }

  /**
   * Entries in the waiting line: callers blocked in {@code execute} and tasks (or lanes) waiting
   * without a thread for a seat. A withdrawn task leaves it at once.
   */
  public int waiting() { return waiting; }

  /**
   * Tasks accepted: moves when a task takes a seat, or is put in the waiting line by {@code enqueue}
   * or {@code submit} (a blocked caller's task counts when it gets a seat). Each task of a serial
   * lane and each run of a delayed or periodic task counts once. Never counts a rejection; a task
   * withdrawn by its handle, or cancelled with its lane, is taken back out.
   */
  public long submitted() { return submitted; }

  /** Tasks that returned normally (a future's task that threw counts in {@code failed}); moves after the task ran. */
  public long completed() { return completed; }

  /**
   * Tasks that threw, whichever door they came through ({@code submit}, {@code invokeAll} and
   * {@code invokeAny} included, whose futures catch the exception); moves when the task threw, before
   * the failure handler is called and before a future of the pool publishes the exception.
   */
  public long failed() { return failed; }

  /** Calls rejected with {@link PoolOverloadedException} or {@link PoolClosedException} (or answered {@code false}). */
  public long rejected() { return rejected; }

  /**
   * Entries that left the waiting line unrun because they waited past their line deadline
   * ({@link WorkerPool.Builder#maxWaitInLine}, {@link WorkerPool#enqueue(Runnable,
   * java.time.Duration)}) or past the controlled-delay target while the line stood
   * ({@link WorkerPool.Builder#controlledDelay}); moves when the entry expires. An expired task is not in
   * {@code submitted}.
   */
  public long expired() { return expired; }

  /** Worker threads started since the pool was built. */
  public long workersStarted() { return workersStarted; }

  /** Workers retired because they stayed idle longer than {@code maxIdle}. */
  public long workersExpired() { return workersExpired; }

  /** Workers stopped for any other reason: shutdown, a shrinking {@code resize}, or a failure handler that threw. */
  public long workersStopped() { return workersStopped; }

  @Override
  public String toString() {
    return "PoolStats{capacity=" + capacity + ", workers=" + workers + ", busy=" + busy()
        + ", idle=" + idle + ", waiting=" + waiting + ", submitted=" + submitted
        + ", completed=" + completed + ", failed=" + failed + ", rejected=" + rejected
        + ", expired=" + expired + ", workersStarted=" + workersStarted + ", workersExpired=" + workersExpired
        + ", workersStopped=" + workersStopped + '}';
  }
}
