/**
 * RxJava 3 on a {@link dev.warmpool.WorkerPool}.
 *
 * <ul>
 *   <li>{@link dev.warmpool.rxjava3.PoolSchedulers}: conventional {@code Scheduler}s whose workers
 *       are serial lanes of the pool; a rejection goes to {@code RxJavaPlugins.onError}.</li>
 *   <li>{@link dev.warmpool.rxjava3.PoolTransformers}: {@code observeOn}/{@code subscribeOn} for
 *       {@code compose} on all five reactive types, delivering a rejection to the subscriber.</li>
 *   <li>{@link dev.warmpool.rxjava3.PoolScope}: the same for whole stream bodies that use the pool's
 *       scheduler with {@code delay}, {@code interval}, {@code timeout} and the like.</li>
 * </ul>
 * The adapter holds no queue and no thread of its own: workers, delays and admission are the core's.
 *
 * <p>Nothing in the public API accepts or returns {@code null} unless it says so
 * ({@code @NullMarked}).
 */
@NullMarked
package dev.warmpool.rxjava3;

import org.jspecify.annotations.NullMarked;
