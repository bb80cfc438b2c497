/**
 * warmpool: a bounded pool of worker threads with FILO reuse, idle expiry, a bounded waiting line
 * and synchronous rejection.
 *
 * <p>Start at {@link dev.warmpool.WorkerPool#builder()}. {@link dev.warmpool.PoolStats} is the
 * pool's snapshot, {@link dev.warmpool.TaskHandle} withdraws a task that has not started,
 * {@link dev.warmpool.SerialExecutor} is a serial lane, {@link dev.warmpool.FuncPool} runs one
 * function without a per-task allocation and {@link dev.warmpool.ShardedPool} spreads load over
 * several pools. Every other type in this package is an implementation detail and package-private.
 *
 * <p>Nothing in the public API accepts or returns {@code null} unless it says so
 * ({@code @NullMarked}).
 */
@NullMarked
package dev.warmpool;

import org.jspecify.annotations.NullMarked;
