package dev.warmpool;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * A bounded pool of worker threads that reuses the most recently released worker first and retires
 * workers that stay idle too long.
 *
 * <h2>Capacity</h2>
 * Each accepted task holds a <em>seat</em> from acceptance until it finishes; at most
 * {@link #capacity()} seats are taken, so at most that many tasks are queued or running, and at
 * most that many worker threads exist. Workers start on demand. {@link #resize(int)} changes the
 * bound at runtime.
 *
 * <h2>Work-conserving, FILO reuse</h2>
 * Accepted tasks wait in a bounded run queue; a worker that finishes a task takes the next one
 * before it parks, and spins a few microseconds for more. A parked worker is woken only when no
 * worker is spinning, and parked workers wait on a stack: the one that parked last is woken first,
 * so its caches are warm and the bottom of the stack stays idle long enough to expire. Queueing a
 * task takes no lock and allocates nothing.
 *
 * <h2>Expiry</h2>
 * Because the stack is ordered by the time each worker was released, the workers idle longer than
 * {@code maxIdle} form its bottom. A cleaner on a shared timer thread finds that stale prefix by
 * binary search and retires it in one step, oldest first. A worker is retired no earlier than
 * {@code maxIdle} and no later than {@code maxIdle + maxIdle/16} plus timer latency after it went
 * idle. The cleaner is not scheduled at all while the pool has no workers; while it has some, it runs
 * about once per {@code maxIdle} (sooner only toward an idle worker's expiry, never sooner than
 * {@code maxIdle/16}), and {@code maxIdle} is at least 1 ms, so it never keeps the timer thread busy.
 *
 * <h2>When every seat is taken</h2>
 * <ul>
 *   <li>Nonblocking mode: {@link #execute} and {@link #enqueue} throw {@link PoolOverloadedException}
 *       at once; {@link #tryExecute(Runnable)} returns {@code false}.</li>
 *   <li>Blocking mode: {@link #execute} blocks the caller in a FIFO waiting line until a seat is
 *       handed to it (a finishing worker hands its seat to the head of the line; nobody barges;
 *       with {@link Builder#adaptiveLifo}, to the newest entry while the line stands);
 *       {@link #enqueue} and {@code submit} put the task itself in the same line and return at once
 *       ({@code execute} is the one call that blocks its caller);
 *       {@link #tryExecute(Runnable, Duration)} waits at most the timeout. When the line already holds
 *       {@code maxWaiting} entries the call throws {@link PoolOverloadedException}.</li>
 * </ul>
 * A task queued by a running task of the same pool may be held by its worker, to run when that
 * task ends (no wake-up); it holds its seat meanwhile, as a task queued for a worker does, so it
 * may cost a rejection in nonblocking mode. A call that finds every seat taken first hands the
 * tasks its caller holds to idle workers, and a task that blocks outside the library has them
 * published within about 1 ms; held tasks never make a caller wait for their holder to end.
 * A rejection always happens at the submitting call; a task that was accepted runs exactly once or is
 * returned by {@link #shutdownNow()}, unless its user opted into shedding: a line deadline
 * ({@link Builder#maxWaitInLine}) or controlled delay ({@link Builder#controlledDelay}) expires it in
 * line, and it hears of that.
 *
 * <h2>Timers</h2>
 * {@code schedule*} tasks wait on one shared timer thread and take no seat until due; a due task is
 * accepted work, never rejected for load. A delay {@code <= 0} is due at the call: the task is handed
 * to the pool at once from the caller's thread (on a full pool it waits its turn), without a trip
 * through the timer thread. {@link #shutdown()} cancels the timers not yet due (their
 * futures complete cancelled); a due one runs like every task in line, or is returned by
 * {@link #shutdownNow()} as the task scheduled (its future then completes cancelled, and a
 * {@link CancellationAware} task hears {@code onCancel()}). A {@code schedule} racing {@code shutdown()} is refused or completes one
 * of these ways: no future stays pending on a terminated pool.
 *
 * <h2>Failures</h2>
 * A task that throws counts in {@link PoolStats#failed()}, whichever door it came through, and is
 * reported once: a plain task ({@code execute}, {@code tryExecute}, {@code enqueue}, a lane's, a
 * {@link FuncPool}'s) and a delayed or periodic one to the pool's failure handler (by default the
 * worker thread's uncaught-exception handler; a {@link FailureAware} task, an adapter's, reports to
 * its own ecosystem instead); the task of {@code submit}, {@code invokeAll} or {@code invokeAny}
 * through its future, whose {@code get} throws, and not to the default handler (as in
 * {@code ThreadPoolExecutor}); a {@code schedule}'s future fails too. A failure handler set on the
 * builder sees every failure. The worker survives and is reused.
 *
 * <h2>Close</h2>
 * {@link #shutdown()} stops accepting tasks, stops idle workers at once, lets busy workers finish and
 * lets tasks already waiting in line run; callers blocked in the line wake with
 * {@link PoolClosedException}. {@link #shutdownNow()} returns the tasks waiting in line instead and
 * interrupts running tasks. {@link #close()} shuts down and waits until every worker thread has
 * exited. {@link #reboot()} reopens a terminated pool.
 */
public interface WorkerPool extends ScheduledExecutorService, AutoCloseable {

  /** Returns a builder with the documented defaults. */
  static Builder builder() {
    return new Builder();
  }

  /** The pool's name, also the prefix of its worker threads' names. */
  String name();

  /** The current maximum number of worker threads. */
  int capacity();

  /** How long a worker may stay idle before it is retired. */
  Duration maxIdle();

  /** Whether the pool rejects at once instead of making callers wait when every seat is taken. */
  boolean isNonblocking();

  /**
   * Changes the maximum number of workers without a restart. Growing starts workers for entries
   * waiting in line; shrinking retires surplus idle workers now and surplus busy workers after their
   * current task.
   *
   * @throws IllegalArgumentException if {@code capacity} is not between 1 and 131,072
   */
  void resize(int capacity);

  /** A snapshot of the pool's gauges and counters. */
  PoolStats stats();

  /**
   * Installs the pool's one {@link TaskTimer} (replacing any), or removes it with null. From then on
   * every task accepted at any door, {@code execute}, {@code enqueue}, {@code submit}, a serial
   * lane's tasks, a due delayed or periodic run, and so every adapter's tasks, is timed when it runs:
   * how long it waited from acceptance to its start (run queue and waiting line; for a delayed task,
   * from when it was due) and how long it ran, a task that throws included. A subpool's tasks are
   * also timed for its parent's timer. Tasks accepted before the call may go untimed. Without a
   * timer the pool pays one null check per submission.
   *
   * @param timer the timer, or null to stop timing
   */
  void setTaskTimer(@Nullable TaskTimer timer);

  /** The timer {@link #setTaskTimer} installed, or null. */
  @Nullable TaskTimer taskTimer();

  /**
   * Hears how long each task of a pool waited and ran ({@link #setTaskTimer}); for example
   * Micrometer's {@code executor} and {@code executor.idle} timers (warmpool-micrometer's
   * {@code WorkerPoolMetrics}).
   */
  @FunctionalInterface
  interface TaskTimer {
    /**
     * One task ran, on the worker that ran it, right after its run. It must be quick and not
     * block; an exception it throws goes to the thread's uncaught-exception handler and does not
     * count as the task's failure.
     *
     * @param waitNanos from acceptance to the start of the run
     * @param runNanos how long the run took
     */
    void taskRan(long waitNanos, long runNanos);
  }

  /**
   * Runs the task on a worker if a seat is free: a running or spinning worker takes it, else an idle
   * one is woken, else a new worker is started for it on the caller's thread; with every seat taken,
   * blocking mode makes the caller wait in line until a seat is handed to it. {@code execute} is the
   * one call that may block its caller; it may also wait in the thread factory (never when called
   * from a worker thread: a start needed there is made in the background).
   *
   * @throws NullPointerException if {@code task} is null
   * @throws PoolOverloadedException if every seat is taken in nonblocking mode, or the line is full
   * @throws PoolClosedException if the pool is shut down, also while the caller waits in line
   * @throws java.util.concurrent.RejectedExecutionException if the caller is interrupted while waiting
   *     (the interrupt status is kept) or a new worker thread cannot be created (cause attached)
   */
  @Override
  void execute(Runnable task);

  /**
   * Runs the task if a seat is free now, never waiting for one (a new worker it needs is started
   * on the caller's thread, as for {@link #execute}).
   *
   * @return {@code false} if every seat is taken (the task will not run)
   * @throws NullPointerException if {@code task} is null
   * @throws PoolClosedException if the pool is shut down
   */
  boolean tryExecute(Runnable task);

  /**
   * Runs the task, waiting in line at most {@code timeout} for a worker (in nonblocking mode it does
   * not wait and behaves like {@link #tryExecute(Runnable)}).
   *
   * @return {@code false} if no worker took the task within the timeout (the task will not run)
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code timeout} is negative
   * @throws InterruptedException if interrupted while waiting (the task will not run)
   * @throws PoolOverloadedException if the waiting line is full
   * @throws PoolClosedException if the pool is shut down, also while waiting
   */
  boolean tryExecute(Runnable task, Duration timeout) throws InterruptedException;

  /**
   * Accepts the task without ever blocking the caller. Blocking mode: if no seat is free now, the
   * task waits in line (no thread is held) and runs when its turn comes. Nonblocking mode: like
   * {@link #execute}. The returned handle withdraws the task if it has not started. A worker thread
   * the task needs is started in the background, never on the caller's thread; if that start fails,
   * the task stays accepted and the start is retried (guarantee 11).
   *
   * @return the task's handle; {@link TaskHandle#cancel()} withdraws it from the line at once
   * @throws NullPointerException if {@code task} is null
   * @throws PoolOverloadedException if nonblocking and every seat is taken, or the line is full
   * @throws PoolClosedException if the pool is shut down
   */
  TaskHandle enqueue(Runnable task);

  /**
   * Like {@link #enqueue(Runnable)}, with this task's own line deadline: if it waits in line
   * longer than {@code maxWait}, it leaves unrun and its handle reads
   * {@link TaskHandle#isExpired()} (see {@link Builder#maxWaitInLine} for every consequence). It
   * overrides the pool's {@code maxWaitInLine} for this task; it works on subpools too.
   *
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code maxWait} is not positive
   * @throws PoolOverloadedException if nonblocking and every seat is taken, or the line is full
   * @throws PoolClosedException if the pool is shut down
   */
  TaskHandle enqueue(Runnable task, Duration maxWait);

  /**
   * Accepts the task like {@link #enqueue} and never blocks the caller (unlike
   * {@link java.util.concurrent.AbstractExecutorService}'s, which calls {@code execute}): in
   * blocking mode the task waits in line without a thread. Cancelling the future withdraws a task
   * that has not started from the line at once (remove on cancel).
   *
   * @throws PoolOverloadedException if nonblocking and every seat is taken, or the line is full
   * @throws PoolClosedException if the pool is shut down
   */
  @Override
  <T> java.util.concurrent.Future<T> submit(java.util.concurrent.Callable<T> task);

  /**
   * Returns a new serial lane over this pool: an executor whose tasks run one at a time, in
   * submission order, on pool workers, holding a worker only while it has tasks. See
   * {@link SerialExecutor} for admission and fairness.
   */
  SerialExecutor newSerialExecutor();

  /**
   * Returns a new subpool with its own name and capacity that takes this pool's mode and
   * {@code maxWaiting}; see {@link #newSubpool(String, int, boolean, int)}.
   *
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code capacity} is not between 1 and 131,072
   * @throws PoolClosedException if this pool is shut down
   */
  WorkerPool newSubpool(String name, int capacity);

  /**
   * Returns a new subpool: a {@link WorkerPool} with its own name, capacity, mode, waiting line and
   * {@link #stats()} that runs its tasks on this pool's workers and starts no thread of its own; a
   * bulkhead, one per dependency.
   *
   * <ul>
   *   <li><b>Two bounds.</b> At most {@code capacity} tasks of the subpool are accepted and not yet
   *       finished (queued for this pool or running), and this pool's capacity still bounds the
   *       total. A subpool's {@code capacity} may exceed this pool's.</li>
   *   <li><b>Subpool full</b> (every one of its seats taken): the subpool rejects or waits in its own
   *       FIFO line by its own mode and {@code maxWaiting}, without holding a thread.</li>
   *   <li><b>This pool full</b>, the subpool not: a nonblocking subpool rejects
   *       ({@link PoolOverloadedException}, or {@code false} from {@code tryExecute}); a blocking
   *       one accepts the task, which then waits in this pool's line without a thread, as admitted
   *       work (not bounded by this pool's {@code maxWaiting}). A blocking subpool's
   *       {@code execute} blocks its caller only for a seat of the subpool, and its
   *       {@code tryExecute(task, timeout)} times out only while waiting for one: once seated, the
   *       task is accepted ({@code true}) and waits in this pool's line without a time limit.</li>
   *   <li><b>Fairness across subpools:</b> first come, first served among seated tasks. Each subpool
   *       holds at most {@code capacity} places in this pool's FIFO line, and a task that finishes
   *       hands its subpool seat to the head of the subpool's line, which then joins the end of this
   *       pool's line. So when this pool is the bottleneck, subpools with waiters share its freed
   *       seats in proportion to their capacities (a weighted round robin), and a waiter that holds
   *       a seat of its subpool is served after at most the places ahead of it, however long another
   *       subpool's line is.</li>
   *   <li><b>Stats and counters.</b> The subpool's {@code stats()} count its own tasks:
   *       {@code busy} and {@code workers} are its tasks running now, {@code waiting} its line plus its
   *       seated tasks not yet started, {@code idle} and the worker counters stay 0. Its tasks also
   *       count in this pool's {@code submitted}, {@code completed} and {@code failed}; a rejection
   *       counts in the subpool, and in this pool too when this pool was the one that was full.
   *       Failures go to this pool's failure handler.</li>
   *   <li><b>Close.</b> Closing the subpool closes only its own work: {@code shutdownNow()} returns
   *       and interrupts only its tasks; this pool keeps running. Shutting this pool down shuts its
   *       subpools down first, and it terminates only after they have: a subpool's
   *       {@link #whenTerminated()} stage completes before this pool's. This pool holds a subpool
   *       weakly, so a subpool made and dropped unused costs nothing; one with work is reachable
   *       through that work, and one whose {@code whenTerminated()} was asked for is held until it
   *       terminates, so a user who keeps only that stage (or a dependent of it) still sees it
   *       complete when this pool shuts down.</li>
   * </ul>
   * Thread names stay this pool's; the subpool's name appears in its messages and {@code stats}.
   *
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code capacity} is not between 1 and 131,072, or
   *     {@code maxWaiting} is negative
   * @throws PoolClosedException if this pool is shut down
   * @throws UnsupportedOperationException on a {@link ShardedPool}, whose shards terminate one by one
   */
  WorkerPool newSubpool(String name, int capacity, boolean nonblocking, int maxWaiting);

  /**
   * Reopens a terminated pool with its configuration and cumulative counters.
   *
   * @throws IllegalStateException if the pool is not terminated
   */
  void reboot();

  /**
   * A stage completed when this pool terminates ({@link #isTerminated()} becomes true), so that a
   * graceful close can react without a thread of its own. Each generation has its own: after a
   * {@link #reboot()} this returns a fresh, pending stage, and a stage obtained earlier stays
   * completed. Worker threads may still be ending when it completes ({@link #awaitTermination}
   * waits for them too). Completing it from outside is not possible.
   *
   * <p>Its dependents never run on the shared timer thread nor while the pool holds a lock: the
   * stage completes on a thread of the pool, the caller of {@code shutdown}/{@code close}, or a
   * warmpool helper thread when termination is reached anywhere else (on the timer thread, as a
   * line deadline expires; by a handle's {@code cancel}; by a call into a serial lane, whose
   * dispatch in flight held the pool open). A subpool's stage completes before its parent's, and
   * its parent terminates only after the subpool's dependents returned: a subpool's dependent that
   * waits for its parent's termination waits for ever. Asking a subpool for its stage holds the
   * subpool until it terminates, so one whose user keeps only this stage still terminates with its
   * parent (see {@link #newSubpool(String, int, boolean, int)}).
   */
  CompletionStage<Void> whenTerminated();

  /**
   * Shuts the pool down and waits until every worker thread has exited. If interrupted while
   * waiting, returns with the interrupt status set.
   */
  @Override
  void close();

  /**
   * Stops accepting tasks, returns the tasks waiting in line (none of them has started) and interrupts
   * running tasks. Callers blocked in line wake with {@link PoolClosedException}. A due timer among
   * them is returned as the {@code Runnable} scheduled, which still runs if the caller runs it; its
   * future completes cancelled and a {@link CancellationAware} task hears {@code onCancel()} (a timer
   * scheduled with a {@code Callable} is returned as its future, which completes when run).
   */
  @Override
  List<Runnable> shutdownNow();

  /**
   * Configures and builds a {@link WorkerPool}. Every setter validates its argument at once.
   *
   * <p>Defaults: name {@code "warmpool"}, capacity {@code 10 x availableProcessors} (as Reactor's
   * {@code boundedElastic}), maxIdle 60 s, blocking mode, maxWaiting 100,000, daemon threads, the
   * worker thread's uncaught-exception handler as failure handler, the system ticker.
   */
  final class Builder {
    /** The shortest {@link #maxIdle}: the cleaner never runs more often than this. */
    private static final Duration MIN_MAX_IDLE = Duration.ofMillis(1);
    String name = "warmpool";
    int capacity = 10 * Runtime.getRuntime().availableProcessors();
    long maxIdleNanos = TimeUnit.SECONDS.toNanos(60);
    boolean nonblocking;
    int maxWaiting = 100_000;
    ThreadFactory threadFactory;
    boolean daemon = true;
    Thread.UncaughtExceptionHandler failureHandler;
    Ticker ticker = Ticker.system();
    boolean virtualThreads;
    UnaryOperator<Runnable> taskDecorator;
    long maxWaitInLineNanos;
    long delayTargetNanos;
    long delayIntervalNanos;
    boolean adaptiveLifo;

    Builder() {}

    /** Names the pool; worker threads are named {@code <name>-<n>} unless a thread factory is set. */
    public Builder name(String name) {
      this.name = Objects.requireNonNull(name, "name must not be null");
      return this;
    }

    /** The maximum number of worker threads, from 1 to 131,072. */
    public Builder capacity(int capacity) {
      this.capacity = checkCapacity(capacity);
      return this;
    }

    /**
     * How long an idle worker is kept before it is retired; at least 1 ms (default 60 s). The
     * cleaner on the shared timer thread runs about once per {@code maxIdle} while the pool has
     * workers, even busy ones, so a shorter one would keep that thread busy; it is refused here, at
     * once, so no {@link #build()} ever sees one.
     *
     * @throws IllegalArgumentException if {@code maxIdle} is below 1 ms (the message names it and
     *     its value)
     */
    public Builder maxIdle(Duration maxIdle) {
      Objects.requireNonNull(maxIdle, "maxIdle must not be null");
      if (maxIdle.compareTo(MIN_MAX_IDLE) < 0) {
        throw new IllegalArgumentException("maxIdle must be at least 1 ms, was " + maxIdle);
      }
      this.maxIdleNanos = saturatedNanos(maxIdle);
      return this;
    }

    /** {@code true}: reject at once when every seat is taken; {@code false} (default): wait in line. */
    public Builder nonblocking(boolean nonblocking) {
      this.nonblocking = nonblocking;
      return this;
    }

    /** Blocking mode: the most entries the waiting line holds before rejecting; at least 0. */
    public Builder maxWaiting(int maxWaiting) {
      if (maxWaiting < 0) {
        throw new IllegalArgumentException("maxWaiting must be >= 0, was " + maxWaiting);
      }
      this.maxWaiting = maxWaiting;
      return this;
    }

    /**
     * Creates the worker threads (then {@link #name} and {@link #daemon} do not apply to them). The
     * factory is called on the thread of an {@code execute} or {@code tryExecute} whose task needs a
     * new worker, and on a warmpool helper thread otherwise (never on a worker, never holding a lock
     * or a token that other work waits on). A factory that throws or returns {@code null} rejects
     * that {@code execute} or {@code tryExecute} (with the cause); for any other task the start is
     * retried and the task stays accepted. A factory that started the thread before it failed counts
     * as a success: the task runs, once. A task whose {@code execute} started a worker is carried
     * by that worker: a blocking factory delays that one task (only), even if another worker frees
     * up meanwhile.
     */
    public Builder threadFactory(ThreadFactory threadFactory) {
      this.threadFactory = Objects.requireNonNull(threadFactory, "threadFactory must not be null");
      return this;
    }

    /** Whether the default thread factory makes daemon threads (default {@code true}). */
    public Builder daemon(boolean daemon) {
      this.daemon = daemon;
      return this;
    }

    /**
     * Receives every task's exception on the worker thread, whichever door the task came through:
     * plain, delayed and periodic tasks, adapters' tasks (instead of their ecosystem's hook) and the
     * tasks of {@code submit}, {@code invokeAll} and {@code invokeAny} (whose futures fail as well).
     * Without it, plain and delayed tasks report to the thread's uncaught-exception handler and the
     * futures' tasks only through their futures. If the handler itself throws, that worker exits
     * (and is replaced on demand).
     */
    public Builder failureHandler(Thread.UncaughtExceptionHandler failureHandler) {
      this.failureHandler = Objects.requireNonNull(failureHandler, "failureHandler must not be null");
      return this;
    }

    /**
     * {@code true}: workers are virtual threads named {@code <name>-<n>} (Java 21 or newer); default
     * {@code false}, platform threads.
     *
     * <p>Everything else stays as documented: at most {@code capacity} tasks run and at most that many
     * workers exist, the waiting line and the rejections are the same, and {@link PoolStats} counts
     * virtual workers like platform ones. What changes:
     * <ul>
     *   <li><b>FILO and expiry</b> still order the workers: the worker that parked last takes the next
     *       task, and a worker idle longer than {@code maxIdle} is retired. A parked virtual worker is
     *       only a small heap object, not a platform thread, so keeping one costs little; expiry
     *       still frees it, and FILO still means a hot worker's caches are warm, but the carrier
     *       thread under it is whichever the JDK's scheduler picks.</li>
     *   <li><b>The bound is the point</b>: with virtual workers the capacity limits concurrency
     *       towards a resource (connections, a slow service), not the number of costly threads.</li>
     *   <li><b>Pinning</b>: a task that blocks while it cannot unmount (inside {@code synchronized} on
     *       Java 21 to 23, in a native frame, or in a class initializer on any version) holds its
     *       carrier thread; with many such tasks the carriers (about one per core) run out and
     *       other virtual threads stall. Use {@code ReentrantLock} instead of {@code synchronized}
     *       around blocking calls, or keep platform workers for such tasks.</li>
     *   <li>Virtual threads are always daemon threads, so {@link #daemon} does not apply; the pool's
     *       shared timer and cleaner stay on platform threads.</li>
     * </ul>
     * Setting both this and {@link #threadFactory} is an error reported by {@link #build()}.
     */
    public Builder virtualThreads(boolean virtualThreads) {
      this.virtualThreads = virtualThreads;
      return this;
    }

    /**
     * Blocking mode: how long an entry may wait in the line for a seat (default: no limit). An
     * entry past its deadline leaves the line without running and without taking a seat, found by
     * a timer (so also when no seat frees). Then a blocked {@code execute} throws
     * {@link PoolOverloadedException} saying how long it waited; a {@code submit} future fails with
     * it; an {@code enqueue} handle reads {@link TaskHandle#isExpired()}; a task that is a
     * {@link CancellationAware} hears {@code onExpired} (by default {@code onCancel()});
     * {@link PoolStats#expired()} counts it and it leaves {@code submitted}. A timed
     * {@code tryExecute} answers {@code false} at this deadline if it is the shorter. A serial lane
     * waiting for its first seat expires too: it leaves the line unrun with every task queued in it,
     * each counted as one expired task (and heard of as above), and is left not admitted, so its
     * next {@code execute} is admitted or rejected afresh. Work already admitted (a lane that had a
     * seat or that admitted work entered, hence its later tasks; a due timer) never expires.
     * Subpools take their parent's limit; a subpool's task that got a seat in its subpool but waits
     * in this pool's line carries its deadline (its own or the inherited one) there. Load shedding
     * for overload: under a standing line, work that would start too late to matter is refused
     * instead of run.
     *
     * @throws IllegalArgumentException if {@code maxWaitInLine} is not positive
     */
    public Builder maxWaitInLine(Duration maxWaitInLine) {
      Objects.requireNonNull(maxWaitInLine, "maxWaitInLine must not be null");
      if (maxWaitInLine.isNegative() || maxWaitInLine.isZero()) {
        throw new IllegalArgumentException("maxWaitInLine must be > 0, was " + maxWaitInLine);
      }
      this.maxWaitInLineNanos = Math.min(saturatedNanos(maxWaitInLine), Long.MAX_VALUE / 4);
      return this;
    }

    /**
     * Blocking mode: controlled delay (after CoDel and Facebook's "Fail at Scale"; default off).
     * While the waiting line has not once been empty during the last {@code interval}, it is
     * <em>standing</em> (empty meaning that the pool caught up: a seat came free and found no
     * entry, and the line shed nothing during the last {@code target}; a line that finishing
     * workers drain to nothing, each taking an entry, or that shed itself empty after a pause of
     * every thread, goes on standing, as CoDel judges by a dequeue that finds its queue empty), and an entry that has waited longer than {@code target} while it stands
     * leaves the line without running and without taking a seat, as expired: exactly as past a
     * line deadline ({@link #maxWaitInLine}), a blocked {@code execute} throws
     * {@link PoolOverloadedException} (its message says how long it waited and that the line
     * stood), a {@code submit} future fails with it, an {@code enqueue} handle reads
     * {@link TaskHandle#isExpired()}, a {@link CancellationAware} task hears {@code onExpired} (by
     * default {@code onCancel()}), {@link PoolStats#expired()} counts it and it leaves
     * {@code submitted}; a timed {@code tryExecute} answers {@code false}. A timer finds such an
     * entry even if no seat frees (within about {@code target + 10% + 10 ms} once the line
     * stands), and a freed seat never goes to one: it goes on to the next entry. While the line is
     * not standing, entries may wait up to {@code interval} (or {@code maxWaitInLine}, whichever
     * is shorter): an entry that waited a whole interval has kept the line standing itself. A line
     * that drains now and then never stands, so it sheds nothing but what {@code maxWaitInLine}
     * would. Work already admitted (a lane that had a seat, hence its later tasks; a due timer; a
     * subpool's task seated in its subpool) never expires; a serial lane waiting for its first seat
     * does, as under {@code maxWaitInLine}. Subpools take their parent's setting. Each entry ends
     * exactly one way (served, withdrawn, expired, handed back) and the counters stay exact. The
     * point: under a standing line, served work starts in about {@code target} instead of just
     * under a deadline. Ignored in nonblocking mode, whose line holds admitted work only.
     *
     * @throws IllegalArgumentException unless {@code 0 < target < interval} (the message names
     *     both and their values)
     */
    public Builder controlledDelay(Duration target, Duration interval) {
      Objects.requireNonNull(target, "controlledDelay target must not be null");
      Objects.requireNonNull(interval, "controlledDelay interval must not be null");
      if (target.isNegative() || target.isZero() || target.compareTo(interval) >= 0) {
        throw new IllegalArgumentException("controlledDelay needs 0 < target < interval, was target="
            + target + ", interval=" + interval);
      }
      this.delayTargetNanos = Math.min(saturatedNanos(target), Long.MAX_VALUE / 8);
      this.delayIntervalNanos = Math.min(saturatedNanos(interval), Long.MAX_VALUE / 4);
      return this;
    }

    /**
     * Blocking mode: {@code true} makes a standing line serve its newest entry first (default
     * {@code false}: always first in, first out). The line stands while it has not once been empty
     * (a seat came free and found no entry) during the {@link #controlledDelay} interval, or 100 ms when that is not set; then a freed seat
     * goes to the newest entry, whose caller is the likeliest to still want the answer, instead of
     * the oldest (the likeliest to be abandoned already, and under controlled delay or a deadline
     * the next to be shed anyway). FIFO otherwise, so a line that drains keeps its order. Blocked
     * callers, tasks and serial lanes share the one line and the one order. LIFO reorders only
     * work that a deadline can shed ({@link #controlledDelay}, {@link #maxWaitInLine} or a
     * per-task deadline), so accepted work that can only leave the line by running is never
     * starved: such an entry (admitted work: a lane that yields its seat, a due timer; or any entry
     * of a pool without deadlines, whose line stays FIFO) is never served newest first (while it
     * is the newest entry, the line is served FIFO), and once it is the oldest entry and has waited
     * a whole standing interval it goes first. Meant to be paired
     * with {@code controlledDelay}. Subpools take their parent's setting; a sharded pool's shard that
     * serves a sibling's line takes the entry the sibling would. Ignored in nonblocking mode.
     */
    public Builder adaptiveLifo(boolean adaptiveLifo) {
      this.adaptiveLifo = adaptiveLifo;
      return this;
    }

    LinePolicy linePolicy() {
      return delayTargetNanos == 0 && !adaptiveLifo ? LinePolicy.NONE
          : new LinePolicy(delayTargetNanos, delayIntervalNanos, adaptiveLifo);
    }

    /**
     * Wraps every task once, at submission, on the submitting thread: so it can capture
     * thread-local context there (MDC, tracing, security, a Micrometer {@code ContextSnapshot}) and
     * restore it around the run. It applies at every door: {@code execute}, {@code tryExecute},
     * {@code enqueue}, {@code submit} (the future's task), {@code schedule*} (once at schedule time,
     * for all runs of a periodic task), a serial lane's tasks (at the lane's {@code execute} or
     * {@code schedule*}), a subpool's tasks (with its parent's decorator), and so every adapter's
     * tasks. The decorator runs exactly once per task, on the submitting thread (guarantee 15): a
     * periodic task that re-arms (after each run, after a failed run), a zero-delay timer, a lane
     * task and an adapter task are decorated once, at the user's call, never again on a pool
     * thread. A task handed to the pool again from its own run (an adapter re-arming its periodic
     * task, a task that re-submits itself) is a re-arm: it keeps the decoration of its first
     * submission, so each run restores the context captured at the user's call, not what an
     * earlier run left in the thread. {@code shutdownNow()} hands tasks back as they were
     * submitted, undecorated. A decorator
     * that throws or returns null rejects that task at its call with a
     * {@link java.util.concurrent.RejectedExecutionException} (the task was not accepted; it counts
     * in neither {@code submitted} nor {@code rejected}). Not applied to {@link FuncPool} arguments,
     * which are not tasks.
     */
    public Builder taskDecorator(UnaryOperator<Runnable> taskDecorator) {
      this.taskDecorator = Objects.requireNonNull(taskDecorator, "taskDecorator must not be null");
      return this;
    }

    /** The time source for idle ages; for tests. */
    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker must not be null");
      return this;
    }

    /**
     * Builds a new pool; no thread is started until the first task.
     *
     * @throws UnsupportedOperationException if {@code virtualThreads(true)} was set on a JVM older
     *     than Java 21 (the message names the JDK it needs)
     * @throws IllegalStateException if both {@code virtualThreads(true)} and a thread factory were set
     */
    public WorkerPool build() {
      if (!virtualThreads) {
        return new BoundedPool(this);
      }
      if (threadFactory != null) {
        throw new IllegalStateException("virtualThreads(true) and threadFactory(" + threadFactory
            + ") are exclusive: set one");
      }
      // The pool reads its factory from this builder; lend it the virtual one for the construction
      // only, so the builder stays as the user configured it and can build again.
      threadFactory = VirtualThreads.factory(name);
      try {
        return new BoundedPool(this);
      } finally {
        threadFactory = null;
      }
    }

    static int checkCapacity(int capacity) {
      if (capacity < 1 || capacity > IdleStack.MAX_CAPACITY) {
        throw new IllegalArgumentException("capacity must be between 1 and "
            + IdleStack.MAX_CAPACITY + ", was " + capacity);
      }
      return capacity;
    }

    private static long saturatedNanos(Duration d) {
      try {
        return d.toNanos();
      } catch (ArithmeticException overflow) {
        return Long.MAX_VALUE / 4;
      }
    }
  }
}
