@file:JvmName("PoolDispatchers")

package dev.warmpool.kotlin

import dev.warmpool.PoolClosedException
import dev.warmpool.PoolOverloadedException
import dev.warmpool.WorkerPool
import kotlin.coroutines.ContinuationInterceptor
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.withContext

/**
 * Returns a [CoroutineDispatcher] that runs coroutines on this pool's workers. From Java:
 * `PoolDispatchers.from(pool)`.
 *
 * The dispatcher does not own the pool: closing the pool is the caller's business, and there is
 * nothing to close on the dispatcher. Every call returns a dispatcher equal to the others of the same
 * pool (same `equals` and `hashCode`), so a nested `withContext(pool.asCoroutineDispatcher())` inside a
 * coroutine already on the pool continues in place without a dispatch.
 *
 * ## Guarantees
 * - `dispatch` never blocks the caller, never throws, never drops a block and never runs it in place.
 *   In blocking mode a block that finds every seat taken waits in the pool's FIFO line without
 *   holding a thread ([WorkerPool.enqueue]).
 * - **Admission once per coroutine.** A coroutine is admitted or rejected at its first dispatch. Once
 *   admitted, its later dispatches (resumes after `delay`, a channel, `await`, `yield`...) are never
 *   rejected for being full, in either mode: they wait their turn in line, where a coroutine holds at
 *   most one place. Coroutines started inside admitted work (children, and the jobs of
 *   `coroutineScope`, `withTimeout` and friends, also `withContext(NonCancellable)` cleanup and what it
 *   launches) belong to it and are not rejected either, whatever path they resume through. Coroutines
 *   on a `limitedParallelism` view count as admitted work of the pool.
 * - **Rejection** (nonblocking mode with every seat taken, a full line, or a shut-down pool) follows
 *   the convention of `Executor.asCoroutineDispatcher()`: the coroutine is cancelled with a
 *   [CancellationException] whose cause is the [PoolOverloadedException] (or [PoolClosedException])
 *   and finishes on [Dispatchers.IO], so no scope hangs. To get the rejection as an exception instead,
 *   use [withWorker].
 * - **Line deadline.** On a pool built with `maxWaitInLine(d)`, a coroutine still waiting for its
 *   admission after `d` is refused then, as a rejection is: cancelled with the
 *   [PoolOverloadedException] as the cause, finishing on [Dispatchers.IO]. It counts in
 *   `stats().expired()`. An admitted coroutine never expires: its resumes wait their turn.
 * - `delay` and `withTimeout` resume on the pool's workers.
 * - `limitedParallelism(n)` throws [IllegalArgumentException] for `n < 1` and otherwise returns a view
 *   that never runs more than `n` blocks at once, also after the pool is resized (so also for
 *   `n >= capacity`): a core subpool ([WorkerPool.newSubpool]) in blocking mode with an unbounded line,
 *   so, like kotlinx's views, it is not rejected for load (on a nonblocking pool too); only a shut-down
 *   pool rejects. A view reopens when its pool is rebooted, a view of a view too. A view asked of a
 *   shut-down pool refuses as that pool does and gets its bound the first time it is used on the
 *   rebooted pool (it is never the unbounded pool dispatcher). A subpool made with
 *   [WorkerPool.newSubpool] works as a dispatcher of its own, with its own mode and rejections.
 * - After the pool is shut down, blocks already accepted still run; a coroutine that resumes later is
 *   rejected as above, so it completes (cancelled) and `join()` returns.
 * - `shutdownNow()` hands back a coroutine's block that waits in line (for its admission or its turn)
 *   to its caller, as it does every waiting task. So that the coroutine does not stay suspended for
 *   ever, when the pool terminates such a coroutine is refused as a closed pool refuses it: cancelled
 *   with a [PoolClosedException] cause, finishing on [Dispatchers.IO] (a `withWorker` caller waiting
 *   in line throws the [PoolClosedException]). Running a handed-back task afterwards does nothing:
 *   each block runs once.
 */
@JvmName("from")
public fun WorkerPool.asCoroutineDispatcher(): CoroutineDispatcher = PoolDispatcher.of(this)

/**
 * Runs [block] on a worker of this pool and returns its result: the admission API for coroutines.
 *
 * - A worker free now: the block starts on it at once.
 * - Every worker busy, blocking mode: the caller **suspends**, holding no thread, in the pool's FIFO
 *   waiting line (shared with blocked `execute` callers and enqueued tasks) until a worker takes it.
 *   Cancelling the caller, or a `withTimeout` around this call, resumes it at once with the
 *   cancellation; the block never runs. (The withdrawn entry leaves the pool's line, and
 *   `stats().waiting` drops, when the line reaches it: it then costs the worker nothing.)
 * - Every worker busy, nonblocking mode, or the line already holds `maxWaiting` entries: throws
 *   [PoolOverloadedException] in the caller's context. It is not a [CancellationException]: the caller
 *   stays active and may retry, degrade or report.
 * - Waiting in line past the pool's `maxWaitInLine`: throws the [PoolOverloadedException] (it says
 *   how long it waited), and the block never runs.
 * - Re-entrant: called from a coroutine already running on this pool (through its dispatcher or a
 *   `limitedParallelism` view of it), the block runs in place, so nesting neither deadlocks nor
 *   competes for a second worker.
 *
 * Inside the block the coroutine is admitted: its suspensions and the coroutines it starts resume
 * on the pool without being rejected.
 *
 * @throws PoolOverloadedException if the pool cannot take the block now, or it waited in line past
 *     `maxWaitInLine` (see above)
 * @throws PoolClosedException if the pool is shut down
 */
public suspend fun <T> WorkerPool.withWorker(block: suspend CoroutineScope.() -> T): T {
    val dispatcher = PoolDispatcher.of(this)
    val context = currentCoroutineContext()
    if (dispatcher.isOnSamePool(context[ContinuationInterceptor])) {
        return coroutineScope(block)
    }
    val admission = WorkerAdmission(this)
    // Tells the admission when the caller is cancelled, so that a waiting start can be withdrawn.
    val watch = Job(context[Job])
    watch.invokeOnCompletion(admission)
    try {
        return withContext(dispatcher + admission) {
            admission.enter()
            block()
        }
    } finally {
        watch.complete()
    }
}
