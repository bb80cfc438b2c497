package dev.warmpool.kotlin

import dev.warmpool.CancellationAware
import dev.warmpool.PoolClosedException
import dev.warmpool.SerialExecutor
import dev.warmpool.WorkerPool
import java.lang.ref.WeakReference
import java.util.WeakHashMap
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.RejectedExecutionException
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.Delay
import kotlinx.coroutines.DisposableHandle
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.InternalCoroutinesApi
import kotlinx.coroutines.Job
import kotlinx.coroutines.cancel
import java.util.concurrent.TimeUnit

/**
 * The dispatcher behind [asCoroutineDispatcher]: one instance per pool.
 *
 * ## Implementation notes
 *
 * **Units.** A coroutine is identified by its [Job]. The first time a job is dispatched here it gets
 * a *unit*: a serial lane of the pool ([WorkerPool.newSerialExecutor]) that carries every later
 * dispatch of that job. A coroutine has at most one dispatch outstanding at a time, so a lane per
 * coroutine changes no ordering; what it buys is the core's admission once: the lane's first task is
 * admitted or rejected like any task, and once admitted the lane is never rejected for being full again
 * (its later tasks wait their turn in line, where a lane holds at most one place). The unit is removed
 * when the job completes.
 *
 * **Admitted trees.** Scoping builders (`coroutineScope`, `withTimeout`, `supervisorScope`, a
 * `withContext` on this same dispatcher) run their block as a new job that starts undispatched and is
 * first dispatched on a *resume*; no public API tells such a job from a new child coroutine. So a job
 * whose ancestor already holds a unit of this pool is part of that admitted work and is never rejected:
 * its lane is admitted through the core's explicit admission ([SerialExecutor.executeAdmitted]): the
 * block waits its turn when the pool is full, and is never rejected.
 * Without this, a `withTimeout { channel.receive() }` inside a running pool coroutine could be
 * rejected on resume.
 *
 * **Rejection.** A rejected first dispatch follows `Executor.asCoroutineDispatcher()`: the job is
 * cancelled with a [CancellationException] whose cause is the [RejectedExecutionException] and the
 * block runs on [Dispatchers.IO], so the coroutine completes and no scope hangs. The same happens to
 * any dispatch once the pool is shut down.
 *
 * **withWorker.** The first dispatch whose context holds an unbound [WorkerAdmission] is the start
 * of a [withWorker] block: see [dispatchAdmission]. Its later dispatches are ordinary.
 */
@OptIn(InternalCoroutinesApi::class) // Delay: kotlinx's own executor dispatchers implement it too
internal class PoolDispatcher private constructor(
    val pool: WorkerPool,
    /** The pool whose threads run this dispatcher's blocks: [pool], or the pool a view limits. */
    private val root: WorkerPool,
    private val label: String?,
) : CoroutineDispatcher(), Delay {
    /** Jobs of this pool's coroutines, each with its lane; a job leaves when it completes. */
    private val units = ConcurrentHashMap<Job, CoroutineUnit>()

    override fun dispatch(context: CoroutineContext, block: Runnable) {
        val admission = context[WorkerAdmission]
        if (admission != null && admission.pool === pool && !admission.isBound) {
            dispatchAdmission(context, admission, block)
            return
        }
        val job = context[Job]
        if (job == null) {
            dispatchJobless(context, block)
            return
        }
        val unit = units[job]
        if (unit != null) {
            unit.execute(context, block)
        } else {
            admit(job, context, block)
        }
    }

    /** First dispatch of [job] here: gives it a unit whose lane is admitted (or rejected) now. */
    private fun admit(job: Job, context: CoroutineContext, block: Runnable) {
        val unit = CoroutineUnit(job)
        // Registered before the lane runs anything: the coroutine may resume before admit returns.
        val raced = units.putIfAbsent(job, unit)
        if (raced != null) {
            raced.execute(context, block)
            return
        }
        try {
            if (isRunningWork(job, block)) unit.admitInherited(block) else unit.lane.execute(block)
        } catch (rejected: RejectedExecutionException) {
            units.remove(job, unit)
            reject(context, block, rejected)
            return
        }
        job.invokeOnCompletion(unit)
    }

    /**
     * Whether a job seen here for the first time is part of work already running, and so is not
     * rejected (guarantee 6): an ancestor holds a unit of this pool (a child, or a scoping builder
     * inside admitted work), or this first dispatch resumes a suspended coroutine ([block] is a
     * [CancellableContinuation]): the job has run already, undispatched, inside code that held a
     * thread. That second case is `withContext(NonCancellable) { .. }` cleanup (its job's parent is
     * `NonCancellable`, which has none) and `withContext(Job()) { .. }`, whose ancestry ends at a
     * job of their own. Its one side effect: a coroutine started with `CoroutineStart.UNDISPATCHED`
     * by a thread outside the pool is not rejected on its first resume either; it waits its turn.
     */
    private fun isRunningWork(job: Job, block: Runnable): Boolean =
        hasAdmittedAncestor(job) || block is CancellableContinuation<*>

    @OptIn(ExperimentalCoroutinesApi::class) // Job.parent
    private fun hasAdmittedAncestor(job: Job): Boolean {
        var p = job.parent
        while (p != null) {
            if (units.containsKey(p)) return true
            p = p.parent
        }
        return false
    }

    /**
     * A context without a job (a raw `startCoroutine`) has no identity to admit once: each dispatch
     * is a task of its own, enqueued without blocking and run on the fallback if rejected.
     */
    private fun dispatchJobless(context: CoroutineContext, block: Runnable) {
        try {
            pool.enqueue(block)
        } catch (rejected: RejectedExecutionException) {
            reject(context, block, rejected)
        }
    }

    /**
     * Starts a [withWorker] block. Its start goes through the job's lane like any first dispatch, so
     * it waits in the pool's FIFO line without a thread (blocking mode) or is refused at once
     * (nonblocking mode, or the line is full). A refusal is not a cancellation here: the admission
     * records it and runs the start on the fallback, where [WorkerAdmission.enter] throws it to the
     * `withWorker` caller. If the caller is cancelled while waiting, the admission withdraws the start.
     * The state machine in [WorkerAdmission] makes exactly one of run, reject or withdraw happen.
     */
    private fun dispatchAdmission(context: CoroutineContext, admission: WorkerAdmission, block: Runnable) {
        val job = context[Job] ?: error("withWorker always dispatches with a job")
        val unit = CoroutineUnit(job)
        if (!admission.bind(context, unit.lane, block)) {
            return // withdrawn before it was ever queued
        }
        units[job] = unit
        try {
            unit.lane.execute(admission.start)
        } catch (rejected: RejectedExecutionException) {
            units.remove(job, unit)
            admission.rejected(rejected)
            return
        }
        admission.queued()
        job.invokeOnCompletion(unit)
    }

    /**
     * `delay` on this dispatcher waits on the pool's shared timer, not on kotlinx's
     * `DefaultExecutor` thread: when due, the timer hands a task to the pool (admitted work, never
     * rejected for load), which resumes the coroutine on that worker without a second dispatch.
     * Cancelling the coroutine cancels the timer at once. A shut-down pool takes no timer: the
     * `delay` throws a [CancellationException] whose cause is the pool's [RejectedExecutionException]
     * (a [dev.warmpool.PoolClosedException]), as a dispatch to a closed pool would, so none hangs.
     */
    override fun scheduleResumeAfterDelay(timeMillis: Long, continuation: CancellableContinuation<Unit>) {
        val timer = try {
            pool.schedule(DelayedResume(continuation), timeMillis.coerceAtLeast(0), TimeUnit.MILLISECONDS)
        } catch (closed: RejectedExecutionException) {
            // A shut-down pool takes no timer: the delay ends at once with the closed pool as cause.
            continuation.cancel(rejectedBy(closed))
            return
        }
        continuation.invokeOnCancellation { timer.cancel(false) }
    }

    /**
     * A delay's resume. When due it resumes the coroutine on the worker that runs it. If the pool
     * cancels the timer (it shut down) while the coroutine still waits, the `delay` throws a
     * [CancellationException] whose cause is a [dev.warmpool.PoolClosedException], so a pending
     * `delay` never hangs and the coroutine learns why (DESIGN guarantee 7). A coroutine's own
     * cancellation also cancels the timer; then the continuation is no longer active.
     */
    private inner class DelayedResume(private val continuation: CancellableContinuation<Unit>) : CancellationAware {
        @OptIn(ExperimentalCoroutinesApi::class) // resumeUndispatched, as kotlinx's executor dispatchers use it
        override fun run() {
            with(continuation) { this@PoolDispatcher.resumeUndispatched(Unit) }
        }

        override fun onCancel() {
            if (continuation.isActive) {
                continuation.cancel(timerCancelledByShutdown("delay", "delay"))
            }
        }
    }

    /**
     * `withTimeout` on this dispatcher: the timeout fires from the pool's shared timer too. A
     * shut-down pool takes no timer: the timed block is cancelled at once with the pool's
     * [RejectedExecutionException] (a [dev.warmpool.PoolClosedException]) as the cause, as a `delay`
     * is, rather than reporting a timeout that never happened. If the pool shuts down while the
     * timeout is pending, see [TimeoutTimer].
     */
    override fun invokeOnTimeout(timeMillis: Long, block: Runnable, context: CoroutineContext): DisposableHandle {
        val timer = try {
            pool.schedule(TimeoutTimer(block, context), timeMillis.coerceAtLeast(0), TimeUnit.MILLISECONDS)
        } catch (closed: RejectedExecutionException) {
            context.cancel(rejectedBy(closed))
            return DisposableHandle { }
        }
        return DisposableHandle { timer.cancel(false) }
    }

    /**
     * A `withTimeout`'s timer. A pool shutdown cancels pending timers (DESIGN guarantee 7), so this
     * timeout will never fire: the timed block is cancelled instead, with a [PoolClosedException] as
     * the cause, as a pending `delay` is. Otherwise a block suspended on something that never comes
     * (a channel, a deferred) would wait for ever for a timeout that kotlinx promises. Disposing the
     * handle (the block completed) also cancels the timer; the block's job is then no longer active.
     */
    private inner class TimeoutTimer(
        private val block: Runnable,
        private val context: CoroutineContext,
    ) : CancellationAware {
        override fun run() = block.run()

        override fun onCancel() {
            if (context[Job]?.isActive == true && pool.isShutdown) {
                context.cancel(timerCancelledByShutdown("timeout", "withTimeout"))
            }
        }
    }

    /** The kotlinx convention for a block the pool refused: cancel its coroutine, finish elsewhere. */
    private fun reject(context: CoroutineContext, block: Runnable, cause: RejectedExecutionException) {
        context.cancel(rejectedBy(cause))
        Dispatchers.IO.dispatch(context, block)
    }

    /** How a coroutine learns that the pool refused its block or its timer. */
    private fun rejectedBy(cause: RejectedExecutionException) =
        CancellationException("The task was rejected by $pool", cause)

    /** How a `delay` or `withTimeout` learns that a pool shutdown cancelled its pending timer. */
    private fun timerCancelledByShutdown(timer: String, during: String) =
        CancellationException("The $timer's timer was cancelled by $pool",
            PoolClosedException("pool '${pool.name()}' shut down during a $during"))

    /**
     * [parallelism] >= capacity: this dispatcher. Otherwise a view backed by a core subpool
     * ([WorkerPool.newSubpool]) of this pool with capacity [parallelism], blocking mode and an
     * unbounded line: at most [parallelism] blocks run at once, on this pool's threads; a block
     * beyond that waits in the subpool's FIFO line without a thread, and a block with a seat waits
     * its turn in this pool's line. Like kotlinx's own views it has no rejection of its own, and it
     * is not rejected for load by this pool either (only a shut-down pool rejects it). The subpool
     * lives as long as the view is referenced and closes with this pool.
     */
    override fun limitedParallelism(parallelism: Int, name: String?): CoroutineDispatcher {
        require(parallelism >= 1) { "parallelism must be >= 1, was $parallelism" }
        if (parallelism >= pool.capacity()) return this
        val subpool = try {
            pool.newSubpool(name ?: "${pool.name()}.limitedParallelism($parallelism)", parallelism, false, Int.MAX_VALUE)
        } catch (closed: RejectedExecutionException) {
            return this // a shut-down pool rejects every dispatch anyway, with the same exception
        }
        return PoolDispatcher(subpool, root, name)
    }

    /** Whether [interceptor] runs its coroutines on this dispatcher's threads (this pool or a view). */
    fun isOnSamePool(interceptor: Any?): Boolean = interceptor is PoolDispatcher && interceptor.root === root

    override fun equals(other: Any?): Boolean = other is PoolDispatcher && other.pool === pool

    override fun hashCode(): Int = System.identityHashCode(pool)

    override fun toString(): String = label ?: pool.toString()

    /** A coroutine's lane; also the completion handler that forgets it. */
    private inner class CoroutineUnit(private val job: Job) : (Throwable?) -> Unit {
        val lane: SerialExecutor = pool.newSerialExecutor()

        /** A later dispatch: the lane is admitted, so only a shut-down pool refuses it. */
        fun execute(context: CoroutineContext, block: Runnable) {
            try {
                lane.execute(block)
            } catch (rejected: RejectedExecutionException) {
                reject(context, block, rejected)
            }
        }

        /**
         * Admits the lane of a job inside admitted work without rejecting it. The first attempt is
         * the ordinary one, which succeeds whenever the pool is not full (and then costs nothing
         * more); a full pool refuses it (counted in `stats().rejected`), and the lane is then
         * admitted by a delayed task that is cancelled before it can run, so the block waits in line.
         */
        fun admitInherited(block: Runnable) {
            lane.executeAdmitted(block) // waits its turn, or throws if the pool shut down
        }

        override fun invoke(cause: Throwable?) {
            units.remove(job, this)
        }
    }

    companion object {

        /** One dispatcher per pool while anything uses it, so that units are shared by all callers. */
        private val instances = WeakHashMap<WorkerPool, WeakReference<PoolDispatcher>>()

        /** The last one handed out: spares the lock for the common case of one pool used repeatedly. */
        @Volatile
        private var last: WeakReference<PoolDispatcher>? = null

        fun of(pool: WorkerPool): PoolDispatcher {
            val recent = last?.get()
            if (recent != null && recent.pool === pool) return recent
            val d = synchronized(instances) {
                instances[pool]?.get() ?: PoolDispatcher(pool, pool, null).also { instances[pool] = WeakReference(it) }
            }
            last = WeakReference(d)
            return d
        }
    }
}
