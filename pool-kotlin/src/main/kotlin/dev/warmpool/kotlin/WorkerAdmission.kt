package dev.warmpool.kotlin

import dev.warmpool.CancellationAware
import dev.warmpool.PoolOverloadedException
import dev.warmpool.SerialExecutor
import dev.warmpool.WorkerPool
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers

/**
 * The admission of one [withWorker] call: a context element that marks the block's first dispatch
 * as a request for a worker, and the cancellation handler of the caller's watch job.
 *
 * ## States
 * ```
 *   PENDING -> QUEUED     the start entered the job's lane (it waits in the pool's line or runs soon)
 *   PENDING -> RUNNING    a worker took the start before the dispatcher marked it QUEUED
 *   QUEUED  -> RUNNING    a worker took the start: the user's block runs on it
 *   PENDING -> REJECTED   the pool refused the start; it runs on the fallback only to throw that
 *   QUEUED  -> REJECTED   the start's lane expired in the pool's line (maxWaitInLine): likewise
 *                         (also from PENDING, if it expired before the dispatcher marked it QUEUED)
 *   PENDING -> CANCELLED  the caller was cancelled before the start was queued; whoever sees it
 *                         next (bind or queued) sends the start to the fallback
 *   QUEUED  -> CANCELLED  the caller was cancelled while waiting: the lane is closed (its queued start
 *                         is discarded when the line reaches it) and the start goes to the fallback
 * ```
 * On the fallback the start sees its job cancelled and completes without running the user's block
 * ([enter] throws in any case), so the caller resumes at once instead of waiting for a worker. Every
 * transition is one CAS, so exactly one of run, reject or withdraw sends the start anywhere.
 */
internal class WorkerAdmission(
    /** The pool asked for: only its dispatcher binds this admission. */
    val pool: WorkerPool,
) : AbstractCoroutineContextElement(Key), (Throwable?) -> Unit {
    companion object Key : CoroutineContext.Key<WorkerAdmission> {
        private const val PENDING = 0
        private const val QUEUED = 1
        private const val RUNNING = 2
        private const val REJECTED = 3
        private const val CANCELLED = 4
    }

    private val state = AtomicInteger(PENDING)

    /** Set once the first dispatch has claimed this admission; later dispatches are ordinary. */
    @Volatile
    var isBound: Boolean = false
        private set

    // Written by bind before the state can leave PENDING through the dispatcher; read after a CAS.
    private lateinit var context: CoroutineContext
    private lateinit var lane: SerialExecutor
    private lateinit var block: Runnable
    private var rejection: RejectedExecutionException? = null

    /**
     * What the lane runs: the block's start, unless it was withdrawn meanwhile. If the lane waits in
     * the pool's line past its deadline, the start expires with it ([expired]).
     */
    val start: Runnable = object : CancellationAware {
        override fun run() {
            if (state.compareAndSet(QUEUED, RUNNING) || state.compareAndSet(PENDING, RUNNING)) {
                block.run()
            }
        }

        override fun onCancel() {
            // a lane's immediate task is never cancelled by the pool; expiry comes as onExpired
        }

        override fun onExpired(cause: PoolOverloadedException) = expired(cause)
    }

    /**
     * Claims the first dispatch. Returns false if the caller was already cancelled: then the start has
     * been sent to the fallback and must not be queued.
     */
    fun bind(context: CoroutineContext, lane: SerialExecutor, block: Runnable): Boolean {
        this.context = context
        this.lane = lane
        this.block = block
        isBound = true
        if (state.get() == CANCELLED) {
            Dispatchers.IO.dispatch(context, block)
            return false
        }
        return true
    }

    /** The start is in the lane. */
    fun queued() {
        if (!state.compareAndSet(PENDING, QUEUED) && state.get() == CANCELLED) {
            withdraw() // cancelled between bind and now
        }
    }

    /** The pool refused the start: run it on the fallback, where [enter] throws [cause]. */
    fun rejected(cause: RejectedExecutionException) {
        rejection = cause
        state.compareAndSet(PENDING, REJECTED) // if cancelled meanwhile, enter throws a cancellation
        Dispatchers.IO.dispatch(context, block)
    }

    /**
     * The start's lane waited in the pool's line past its deadline: refused as by a full pool, so
     * [enter] throws [cause] on the fallback; unless the caller was cancelled first (its withdrawal
     * sent the start to the fallback already).
     */
    private fun expired(cause: PoolOverloadedException) {
        rejection = cause
        if (state.compareAndSet(QUEUED, REJECTED) || state.compareAndSet(PENDING, REJECTED)) {
            Dispatchers.IO.dispatch(context, block)
        }
    }

    /** The caller's watch job completed; a non-null cause means the caller is being cancelled. */
    override fun invoke(cause: Throwable?) {
        if (cause == null || state.compareAndSet(PENDING, CANCELLED)) return
        if (state.compareAndSet(QUEUED, CANCELLED)) withdraw()
    }

    private fun withdraw() {
        lane.close()
        Dispatchers.IO.dispatch(context, block)
    }

    /** First statement of the block's coroutine: throws unless a worker of the pool runs it. */
    fun enter() {
        when (state.get()) {
            RUNNING -> return
            REJECTED -> throw rejection!!
            CANCELLED -> throw CancellationException("withWorker was cancelled while waiting for a worker")
            else -> state.compareAndSet(PENDING, RUNNING) // started without a dispatch: already on the pool
        }
    }
}
