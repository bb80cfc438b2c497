package dev.warmpool.reactor;

import dev.warmpool.PoolClosedException;
import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import java.util.Objects;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * Reactor {@link Scheduler}s over a {@link WorkerPool}: {@code publishOn(poolScheduler)} and
 * {@code subscribeOn(poolScheduler)} with bounded, reusable threads.
 *
 * <pre>{@code
 * WorkerPool pool = WorkerPool.builder().name("io").capacity(64).build();
 * Scheduler io = PoolSchedulers.from(pool);
 * Flux.fromIterable(ids)
 *     .flatMap(id -> Mono.fromCallable(() -> blockingLookup(id)).subscribeOn(io), 64)
 *     .subscribe(...);
 * }</pre>
 *
 * <h2>Mapping</h2>
 * <ul>
 *   <li>{@link Scheduler#schedule(Runnable)} runs the task on a pool worker through
 *       {@link WorkerPool#enqueue}: it never blocks the caller. {@code Mono.fromCallable(..)
 *       .subscribeOn(s)} takes this path.</li>
 *   <li>{@link Scheduler#createWorker()} returns a worker over a serial lane
 *       ({@link WorkerPool#newSerialExecutor()}): its tasks never overlap and run in submission
 *       order; the lane holds a pool thread only while it has tasks, so an idle subscription costs no
 *       thread. {@code publishOn}, {@code subscribeOn} of a {@code Flux} and {@code Flux.interval} take
 *       this path.</li>
 *   <li>{@code schedule(task, delay, unit)} and {@code schedulePeriodically} (fixed rate; runs never
 *       overlap, late runs catch up) go through the pool's shared timer, on the scheduler and on its
 *       workers; a worker's delayed tasks keep the worker's order. A delay {@code <= 0} means now; a
 *       period {@code <= 0} means "run again as soon as the previous run returned".</li>
 * </ul>
 * Every task is passed through {@link reactor.core.scheduler.Schedulers#onSchedule} first, so
 * schedule hooks (and {@code Hooks.enableAutomaticContextPropagation()}) apply. The pool's threads are
 * not Reactor {@code NonBlocking} threads: blocking in a task is what the pool is for.
 *
 * <h2>Tasks and their {@link Disposable}</h2>
 * The {@code Disposable} a {@code schedule*} call returns is not disposed while the task runs and is
 * disposed once it ran or was cancelled. Disposing a pending task means it never runs. Disposing a
 * running task from another thread interrupts it; disposing it from the task's own thread does not,
 * and no interrupt of this scheduler's making is left on a pool thread after the task. Disposing a
 * {@link Scheduler.Worker} does the same for every task of that worker (not of other workers) and
 * makes its later {@code schedule*} calls throw {@link java.util.concurrent.RejectedExecutionException}.
 *
 * <h2>Rejection</h2>
 * The scheduler and its workers never block the calling (Reactor) thread. When the pool cannot take a
 * task, the {@code schedule*} call throws, and Reactor's operators turn that into exactly one
 * {@code onError} for the subscriber ({@code publishOn}, {@code subscribeOn}); Reactor may wrap the
 * exception, keeping the pool's as its cause. Delayed and periodic work ({@code Mono.delay},
 * {@code timeout}, {@code Flux.interval}) is refused only by a closed pool, never for load: it takes
 * no thread until due, and then waits its turn (DESIGN guarantee 7).
 * <ul>
 *   <li>Nonblocking pool, every seat taken: {@link PoolOverloadedException} for immediate work.</li>
 *   <li>Blocking pool: work waits in the pool's waiting line without holding a thread;
 *       {@link PoolOverloadedException} only if that line is full. With the pool's
 *       {@code maxWaitInLine}, a direct task ({@code subscribeOn} of a callable, {@code publishOn}
 *       of a {@code Mono}) that waits longer is refused later, the same way: its subscriber gets
 *       {@code onError} (a {@code RejectedExecutionException} caused by a
 *       {@link PoolOverloadedException}); so is a worker ({@code Flux.publishOn},
 *       {@code subscribeOn}) still waiting for its first seat. A worker that had a seat, and
 *       timers, never expire.</li>
 *   <li>A worker is admitted once, on its first task to run (immediate, or a timer that came due):
 *       afterwards its tasks wait their turn and are never rejected for a full pool, so a stream
 *       that started keeps going. A zero delay is a timer too: never refused for load.</li>
 *   <li>Pool shut down: {@link PoolClosedException}; scheduler or worker disposed:
 *       {@link java.util.concurrent.RejectedExecutionException}.</li>
 *   <li>A timer not yet due when the pool shuts down ({@code Mono.delay}, {@code Flux.interval},
 *       {@code timeout}) will not run: its subscriber gets {@code onError} (a
 *       {@code RejectedExecutionException} caused by a {@link PoolClosedException}) if the task
 *       reaches it, as Reactor's own timed operators do (their task answers
 *       {@code Scannable.Attr.ACTUAL}); any other such task just ends. A timer disposed by its user,
 *       or cancelled by disposing its scheduler or worker, signals nothing.</li>
 *   <li>A task still waiting for a worker when the pool's {@code shutdownNow()} hands it back
 *       (called by whoever owns the pool, not by disposing this scheduler) will not run either:
 *       when the pool has terminated, its subscriber gets {@code onError} the same way (a
 *       {@link PoolClosedException} cause) if the task reaches it, instead of waiting for ever;
 *       running the handed-back task afterwards does nothing. A task running at
 *       {@code shutdownNow()} is interrupted, and what it signals then travels on as usual: an
 *       error that reaches a {@code publishOn} on the closed pool arrives as
 *       {@code onError(RejectedExecutionException)} with that error suppressed.</li>
 * </ul>
 *
 * <h2>Failures</h2>
 * A task that throws does not harm the pool. Immediate, delayed and periodic tasks alike (DESIGN
 * guarantee 8): the failure counts in the pool's {@code stats().failed()} and is reported once, as
 * on Reactor's own schedulers: to the worker thread's uncaught-exception handler and the hook set
 * with {@link reactor.core.scheduler.Schedulers#onHandleError}. A failure handler set on the pool's
 * builder sees every failure instead. A periodic task keeps running after a failed run.
 *
 * <h2>Disposal</h2>
 * {@link Scheduler#dispose()} makes this scheduler and its workers reject new work; its tasks that
 * have not started never start (delayed and periodic ones are cancelled at once); tasks already
 * running finish. {@link Scheduler#disposeGracefully()} is lazy: on subscription it rejects new work
 * and stops periodic tasks, but lets tasks already accepted (running, waiting or delayed) run, and
 * completes when the last of them has ended. It may be retried (for example after a
 * {@code timeout}) and followed by {@code dispose()}. {@link Scheduler#init()} after either throws
 * {@link IllegalStateException}. What happens to the pool depends on the factory:
 * {@link #from(WorkerPool)} leaves it running, {@link #fromOwned(WorkerPool)} and
 * {@link #newPool(WorkerPool.Builder)} close it.
 *
 * <h2>Introspection</h2>
 * {@code toString()} is the pool's, e.g. {@code workerPool("io",capacity=64,maxIdle=10s)}. The
 * scheduler is {@link reactor.core.Scannable}: {@code NAME} (that string), {@code CAPACITY} (the pool's
 * capacity), {@code BUFFERED} (entries in the pool's waiting line), {@code TERMINATED} and
 * {@code CANCELLED} (disposed or disposing). Workers answer {@code NAME}, {@code PARENT},
 * {@code BUFFERED} (their tasks not yet ended) and {@code TERMINATED}.
 */
public final class PoolSchedulers {
  private PoolSchedulers() {}

  /**
   * A scheduler over a pool the caller keeps owning: several schedulers and other adapters may share
   * the pool. Disposing the scheduler stops only this scheduler's work; the pool stays open.
   *
   * @throws NullPointerException if {@code pool} is null
   */
  public static Scheduler from(WorkerPool pool) {
    return new PoolScheduler(Objects.requireNonNull(pool, "pool must not be null"), false);
  }

  /**
   * A scheduler that owns the pool: {@code dispose()} also shuts the pool down at once
   * ({@link WorkerPool#shutdownNow()}, interrupting running tasks), and {@code disposeGracefully()}
   * shuts it down once this scheduler's tasks have ended and completes when the pool has terminated.
   *
   * @throws NullPointerException if {@code pool} is null
   */
  public static Scheduler fromOwned(WorkerPool pool) {
    return new PoolScheduler(Objects.requireNonNull(pool, "pool must not be null"), true);
  }

  /**
   * Builds a new pool and returns a scheduler that owns it, as {@link #fromOwned(WorkerPool)}.
   *
   * @throws NullPointerException if {@code builder} is null
   */
  public static Scheduler newPool(WorkerPool.Builder builder) {
    return fromOwned(Objects.requireNonNull(builder, "builder must not be null").build());
  }

  /**
   * A {@link reactor.core.scheduler.Schedulers.Factory} that makes Reactor's bounded-elastic
   * schedulers warmpool-backed: after {@code Schedulers.setFactory(PoolSchedulers.factory())} at
   * start-up, {@code Schedulers.boundedElastic()}, {@code newBoundedElastic(..)} and
   * {@code newThreadPerTaskBoundedElastic(..)} each get a scheduler that owns a pool of its own, with
   * {@code threadCap} as capacity (capped at core's maximum, 131,072, so Reactor's "no cap"
   * {@code Integer.MAX_VALUE} works), {@code queuedTaskCap} as {@code maxWaiting}, the TTL as
   * {@code maxIdle} (60 s for the thread-per-task variant, which has none) and Reactor's thread
   * factory. The other schedulers stay Reactor's. {@code Schedulers.resetFactory()} restores the
   * defaults.
   */
  public static reactor.core.scheduler.Schedulers.Factory factory() {
    return new PoolSchedulerFactory(null, null);
  }

  /**
   * Like {@link #factory()}, and every pool the factory makes is first handed to {@code onNewPool},
   * so that the pools are not hidden from their user, for example to bind metrics:
   * <pre>{@code
   * Schedulers.setFactory(PoolSchedulers.factory(
   *     pool -> new WorkerPoolMetrics(pool, Tags.empty()).bindTo(registry)));
   * }</pre>
   * The callback is called once per pool, on the thread that asked Reactor for the scheduler
   * ({@code Schedulers.newBoundedElastic(..)}, or the first {@code Schedulers.boundedElastic()}),
   * after the pool is built and before the scheduler over it exists: the pool has run no task and
   * started no thread yet. It should not shut the pool down (the scheduler would reject all work).
   * If the callback throws, the pool is shut down ({@link WorkerPool#shutdownNow()}), no scheduler
   * is made, and the exception propagates unchanged from Reactor's call.
   *
   * @throws NullPointerException if {@code onNewPool} is null
   */
  public static reactor.core.scheduler.Schedulers.Factory factory(
      java.util.function.Consumer<WorkerPool> onNewPool) {
    return new PoolSchedulerFactory(null,
        Objects.requireNonNull(onNewPool, "onNewPool must not be null"));
  }

  /**
   * Like {@link #factory(java.util.function.Consumer)}, and each pool's builder is first handed to
   * {@code configure}, for what only a builder takes (a task decorator, a failure handler, a
   * ticker). {@code configure} is called once per pool, on the same thread as {@code onNewPool} and
   * before it, with the builder already holding Reactor's parameters (name, capacity, max-waiting,
   * max-idle, thread factory); a setting it makes wins. If it throws, no pool is built and the
   * exception propagates unchanged from Reactor's call; if the builder then refuses its settings,
   * that exception propagates the same way.
   * <pre>{@code
   * Schedulers.setFactory(PoolSchedulers.factory(
   *     builder -> builder.taskDecorator(copyMdc),      // a UnaryOperator<Runnable>
   *     pool -> new WorkerPoolMetrics(pool, Tags.empty()).bindTo(registry)));
   * }</pre>
   *
   * @throws NullPointerException if {@code configure} or {@code onNewPool} is null
   */
  public static reactor.core.scheduler.Schedulers.Factory factory(
      java.util.function.Consumer<WorkerPool.Builder> configure,
      java.util.function.Consumer<WorkerPool> onNewPool) {
    return new PoolSchedulerFactory(
        Objects.requireNonNull(configure, "configure must not be null"),
        Objects.requireNonNull(onNewPool, "onNewPool must not be null"));
  }
}
