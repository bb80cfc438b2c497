package dev.warmpool.rxjava3;

import dev.warmpool.PoolClosedException;
import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import java.util.Objects;

/**
 * {@code observeOn} and {@code subscribeOn} on a {@link WorkerPool} that tell the subscriber when the
 * pool refuses the work, for {@code compose} on {@code Flowable}, {@code Observable}, {@code Single},
 * {@code Maybe} and {@code Completable}:
 *
 * <pre>{@code
 * Single.fromCallable(() -> blockingCall())
 *     .compose(PoolTransformers.subscribeOn(pool))
 *     .subscribe(v -> use(v), e -> shed(e));   // e: PoolOverloadedException when the pool is full
 * }</pre>
 *
 * <h2>Why not plain {@code observeOn(PoolSchedulers.from(pool))}</h2>
 * A conventional RxJava scheduler cannot refuse a task: {@code Scheduler.schedule} returns a
 * {@code Disposable}, and RxJava's operators neither expect it to throw nor look at what it returns.
 * So {@link PoolSchedulers#from} reports a rejection to {@code RxJavaPlugins.onError}, as RxJava's
 * {@code Schedulers.from(executor)} does, and the stream never hears of it: its subscriber waits
 * forever. These transformers route the rejection to the subscriber instead.
 *
 * <h2>Guarantees</h2>
 * <ul>
 *   <li>When the pool rejects the work (nonblocking mode with every seat taken, or a full waiting
 *       line: {@link PoolOverloadedException}; a shut-down pool: {@link PoolClosedException}), the
 *       subscriber receives exactly one {@code onError} with that exception and the upstream is
 *       cancelled. Nothing is thrown from {@code subscribe()}, nothing goes to {@code
 *       RxJavaPlugins.onError}, no {@code UndeliverableException} appears.</li>
 *   <li>This holds mid-stream too: {@code observeOn} needs a pool thread only when the first signal
 *       arrives, which may be long after subscription; a rejection then ends the stream the same way.</li>
 *   <li>Admission once: the worker behind {@code observeOn} (and {@code Flowable.subscribeOn}) is
 *       admitted or rejected the first time it needs a thread. Once admitted, later bursts are never
 *       rejected, they wait their turn, so a stream admitted before the pool filled up completes
 *       normally. {@code Single}, {@code Maybe} and {@code Completable} (and {@code
 *       Observable.subscribeOn}) schedule one direct task, which is admitted or rejected once.</li>
 *   <li>In blocking mode nothing blocks the emitting thread: work that finds every seat taken waits
 *       in the pool's line without a thread, and is rejected only when that line is full.</li>
 *   <li><b>Line deadlines</b> (blocking mode with {@link WorkerPool.Builder#maxWaitInLine}): a direct
 *       task ({@code Single}, {@code Maybe}, {@code Completable}, {@code Observable.subscribeOn})
 *       that waits in line past its deadline never runs and is refused like a rejection: one
 *       {@code onError(PoolOverloadedException)}. So is a worker ({@code observeOn} on
 *       {@code Flowable} or {@code Observable}, {@code Flowable.subscribeOn}) whose lane waits
 *       for its first seat past the deadline; a worker that had a seat never expires.</li>
 *   <li>Otherwise the operators behave exactly as RxJava's {@code observeOn(scheduler)} and {@code
 *       subscribeOn(scheduler)} with default arguments, over {@link PoolSchedulers#from}.</li>
 * </ul>
 * For bodies that use the pool's scheduler with {@code delay}, {@code interval}, {@code timeout} and
 * the like, see {@link PoolScope}.
 */
public final class PoolTransformers {
  private PoolTransformers() {}

  /**
   * {@code observeOn} on {@code pool}: downstream signals are delivered on a pool worker, in order,
   * one at a time; a rejection is delivered as {@code onError} (see the class guarantees).
   *
   * @param pool the pool; not closed by this
   * @param <T> the item type
   * @return a reusable transformer for {@code compose} on any of the five reactive types
   * @throws NullPointerException if {@code pool} is null
   */
  public static <T> PoolTransformer<T> observeOn(WorkerPool pool) {
    return new PoolTransformer<>(Objects.requireNonNull(pool, "pool is null"), false);
  }

  /**
   * {@code subscribeOn} on {@code pool}: the upstream is subscribed to (and, for {@code Flowable},
   * requested from) on a pool worker; a rejection is delivered as {@code onError} (see the class
   * guarantees).
   *
   * @param pool the pool; not closed by this
   * @param <T> the item type
   * @return a reusable transformer for {@code compose} on any of the five reactive types
   * @throws NullPointerException if {@code pool} is null
   */
  public static <T> PoolTransformer<T> subscribeOn(WorkerPool pool) {
    return new PoolTransformer<>(Objects.requireNonNull(pool, "pool is null"), true);
  }
}
