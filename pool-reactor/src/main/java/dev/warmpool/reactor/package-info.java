/**
 * Reactor adapter of warmpool: {@link dev.warmpool.reactor.PoolSchedulers} turns a
 * {@link dev.warmpool.WorkerPool} into a {@link reactor.core.scheduler.Scheduler}. The adapter holds
 * no pool logic: workers are the core's serial lanes, delays use the pool's shared timer, and
 * rejections are the pool's own exceptions, which Reactor's operators deliver as {@code onError}.
 *
 * <p>Nothing in the public API accepts or returns {@code null} unless it says so
 * ({@code @NullMarked}).
 */
@NullMarked
package dev.warmpool.reactor;

import org.jspecify.annotations.NullMarked;
