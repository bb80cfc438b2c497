package dev.warmpool.rxjava3;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.plugins.RxJavaPlugins;
import io.reactivex.rxjava3.schedulers.SchedulerRunnableIntrospection;

/**
 * RxJava 3 {@link Scheduler}s over a {@link WorkerPool}.
 *
 * <h2>Workers are serial lanes</h2>
 * {@link Scheduler#createWorker()} returns a worker over one serial lane of the pool ({@link
 * WorkerPool#newSerialExecutor()}): its tasks never overlap; non-delayed tasks run in submission
 * order, also when many threads schedule at once; delayed tasks run in deadline order. The worker
 * holds a pool thread only while it has tasks, so thousands of idle subscriptions cost no thread,
 * unlike {@code Schedulers.io()}, where each live worker pins one thread.
 *
 * <h2>Guarantees of the returned scheduler</h2>
 * <ul>
 *   <li>Direct tasks ({@code scheduleDirect}) go to {@link WorkerPool#enqueue}, which never blocks the
 *       caller: in blocking mode a task that finds every seat taken waits in the pool's line without
 *       a thread.</li>
 *   <li>Delayed tasks wait on the pool's shared timer; periodic tasks run at a fixed rate, as with
 *       RxJava's {@code Schedulers.from(scheduledExecutor)}: a direct one under the pool's own
 *       {@link WorkerPool#scheduleAtFixedRate}, a worker's one as under RxJava's default {@link
 *       Scheduler.Worker#schedulePeriodically}, which rebases after a jump of {@link
 *       Scheduler#now(java.util.concurrent.TimeUnit) now()} larger than {@link
 *       Scheduler#clockDriftTolerance()}. Scheduler and worker {@code now()} are the same clock.</li>
 *   <li>Every task passes once through {@link RxJavaPlugins#onSchedule}; a null task throws {@link
 *       NullPointerException} ("run is null").</li>
 *   <li>A task that throws (immediate, delayed or periodic; direct or of a worker) counts in the
 *       pool's {@code stats().failed()} and is reported once: to {@link RxJavaPlugins#onError} by
 *       default, or, if the pool's builder set a {@link WorkerPool.Builder#failureHandler}, to that
 *       handler <b>instead</b> ({@code RxJavaPlugins.onError} then hears nothing). Its worker goes on
 *       with its next task (RxJava's {@code Schedulers.from(executor)} stalls the worker there); a
 *       periodic task ends at its first throw, as RxJava's own do.</li>
 *   <li>Disposing a worker cancels its pending tasks, delayed and periodic too, and releases them at
 *       once; a disposed task never runs; a running task is not interrupted. After disposal every
 *       {@code schedule} method returns {@link Disposable#disposed()}. A direct task's {@code
 *       Disposable} reports disposed once the task ran. Direct and periodic tasks' disposables
 *       implement {@link SchedulerRunnableIntrospection}.</li>
 *   <li><b>Rejections never throw.</b> When the pool refuses a task (nonblocking mode with every
 *       worker busy, or a full waiting line: {@link PoolOverloadedException}; a closed pool:
 *       {@link dev.warmpool.PoolClosedException}), {@code schedule} returns {@link
 *       Disposable#disposed()} and the exception goes to {@link RxJavaPlugins#onError} (wrapped in an
 *       {@code UndeliverableException} by RxJava), as with {@code Schedulers.from(executor)}. A plain
 *       {@code observeOn(scheduler)} therefore cannot tell its subscriber, which then waits forever:
 *       use {@link PoolTransformers} or {@link PoolScope} when the subscriber must see rejections.
 *       Only a task that needs a thread now can be rejected: a worker is admitted once, the first
 *       time it needs a thread (its first immediate task, or a delayed one when due), and then never
 *       rejected; delayed and periodic tasks are admitted when scheduled. A delay {@code <= 0} on a
 *       one-shot {@code schedule} is a timer due now ({@code Single.timer(0, ..)},
 *       {@code delay(0, ..)}): like any timer it is refused only by a closed pool, never for load
 *       (DESIGN guarantee 7); with every seat taken it waits its turn. A worker runs its timers
 *       due at the same time in the order they were scheduled, not in line with its immediate
 *       tasks. Only {@code scheduleDirect(run)} and {@code Worker.schedule(run)} are
 *       immediate.</li>
 *   <li>{@link Scheduler#start()} and {@link Scheduler#shutdown()} are idempotent and thread-safe.
 *       {@code shutdown()} disposes the scheduler's live workers and cancels its pending delayed and
 *       periodic direct tasks; afterwards every {@code schedule} method returns {@link
 *       Disposable#disposed()} and {@code createWorker()} returns a disposed worker, until {@code
 *       start()}. Immediate direct tasks already handed to the pool still run. An owning
 *       scheduler's {@code shutdown()} is its pool's graceful one instead (see {@link
 *       #fromOwned}).</li>
 * </ul>
 */
public final class PoolSchedulers {
  private PoolSchedulers() {}

  /**
   * A scheduler over a pool that the caller owns and may share with other schedulers and
   * executors. Shutting the scheduler down (see the class guarantees) does not shut the pool down.
   *
   * @param pool the pool whose workers run the tasks
   * @return a new scheduler over {@code pool}
   * @throws NullPointerException if {@code pool} is null
   */
  public static Scheduler from(WorkerPool pool) {
    return PoolScheduler.conventional(pool, false);
  }

  /**
   * A scheduler that owns its pool: like {@link #from}, except that {@code shutdown()} is the pool's
   * graceful shutdown (without waiting): running tasks finish, tasks waiting in line run, those of
   * its workers and timers already due included, and timers not yet due are cancelled; {@code start()}
   * reboots it if it has terminated. If the pool's last tasks are still running when {@code start()}
   * is called, that call changes nothing: the scheduler stays shut down (its calls return
   * {@code Disposable.disposed()}), and a later {@code start()} that finds the pool terminated
   * reboots it and starts the scheduler.
   *
   * @param pool the pool, owned by the returned scheduler from now on
   * @return a new scheduler over {@code pool} that closes it on {@code shutdown()}
   * @throws NullPointerException if {@code pool} is null
   */
  public static Scheduler fromOwned(WorkerPool pool) {
    return PoolScheduler.conventional(pool, true);
  }

  /**
   * Makes {@code Schedulers.io()} warmpool-backed, in one line at start-up: installs
   * {@code RxJavaPlugins.setIoSchedulerHandler} returning {@link #from(WorkerPool) from(pool)}.
   * (Not the init handler: RxJava keeps what that returns for the life of the JVM, so it could not
   * be reset.) Every operator that defaults to {@code io()} then runs on the pool. Replaces any
   * handler installed before; {@link #resetIo()} removes it. The pool stays the caller's: shutting
   * {@code io()} down does not close it.
   *
   * @param pool the pool that backs {@code Schedulers.io()}
   * @return the installed scheduler
   * @throws NullPointerException if {@code pool} is null
   * @throws IllegalStateException if {@code RxJavaPlugins} is locked down
   */
  public static Scheduler installAsIo(WorkerPool pool) {
    Scheduler io = from(java.util.Objects.requireNonNull(pool, "pool must not be null"));
    RxJavaPlugins.setIoSchedulerHandler(current -> io);
    return io;
  }

  /**
   * Removes what {@link #installAsIo} installed: {@code Schedulers.io()} is RxJava's own again.
   *
   * @throws IllegalStateException if {@code RxJavaPlugins} is locked down
   */
  public static void resetIo() {
    RxJavaPlugins.setIoSchedulerHandler(null);
  }
}
