package dev.warmpool.kotlin

import dev.warmpool.CancellationAware
import dev.warmpool.PoolOverloadedException
import dev.warmpool.FailureAware
import dev.warmpool.WorkerPool
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers

/**
 * What a [WorkerAdmission] needs of the coroutine's unit (the dispatcher's, which it does not know):
 * run the block counted as the unit's task, and give up the unit's place in the pool.
 */
internal interface AdmittedUnit {
    /** Runs the block on the current worker and throws the failure its coroutine started cancelling with. */
    fun runTracked(block: Runnable)

    /** A failure already reported by kotlinx: no second report. */
    fun onFailure(failure: Throwable)

    /** Closes the unit's lane: a start still queued there is discarded when the line reaches it. */
    fun giveUpLane()
}

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
 *   QUEUED  -> REJECTED   the start waited in line past `maxWaitInLine` (also from PENDING, if the
 *                         expiry beats [queued]): the same, with the pool's PoolOverloadedException
 *   QUEUED  -> REJECTED   the pool terminated after `shutdownNow` handed the start back: the same,
 *                         with a PoolClosedException ([handedBack])
 *   PENDING -> CANCELLED  the caller was cancelled before the start was queued; whoever sees it
 *                         next (bind or queued) sends the start to the fallback
 *   QUEUED  -> CANCELLED  the caller was cancelled while waiting: the lane is closed (its queued start
 *                         is discarded when the line reaches it) and the start goes to the fallback
 * ```
 * On the fallback the start sees its job cancelled and completes without running the user's block
 * ([enter] throws in any case: the rejection, or the caller's own cancellation cause), so the caller
 * resumes at once instead of waiting for a worker. Every
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
    private lateinit var unit: AdmittedUnit
    private lateinit var block: Runnable
    private var rejection: RejectedExecutionException? = null

    // The caller's own cancellation, written before the CAS to CANCELLED that publishes it.
    private var cancellation: Throwable? = null

    /**
     * What the lane runs: the block's start, unless it was withdrawn meanwhile. One CAS from the state
     * just read, retried while the dispatcher moves it PENDING -> QUEUED: two fixed CASes (QUEUED, then
     * PENDING) both fail when [queued] lands between them, and the block would never run.
     */
    val start: Runnable = object : CancellationAware, FailureAware {
        override fun run() {
            while (true) {
                val s = state.get()
                if (s != PENDING && s != QUEUED) return // rejected, expired or withdrawn: the fallback has it
                if (state.compareAndSet(s, RUNNING)) {
                    unit.runTracked(block) // throws the block's failure, for the pool to count
                    return
                }
            }
        }

        override fun onCancel() {
            // Only a timer hears this; the start is an immediate task of the lane.
        }

        override fun onFailure(failure: Throwable) = unit.onFailure(failure)

        /** It waited in line past `maxWaitInLine`: refused as a rejection is, unless withdrawn first. */
        override fun onExpired(cause: PoolOverloadedException) {
            rejection = cause // published by the CAS below
            while (true) {
                val s = state.get()
                if (s != PENDING && s != QUEUED) return
                if (state.compareAndSet(s, REJECTED)) break
            }
            Dispatchers.IO.dispatch(context, block)
        }
    }

    /**
     * Claims the first dispatch. Returns false if the caller was already cancelled: then the start has
     * been sent to the fallback and must not be queued.
     */
    fun bind(context: CoroutineContext, unit: AdmittedUnit, block: Runnable): Boolean {
        this.context = context
        this.unit = unit
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
     * The pool terminated with the start still queued: `shutdownNow` handed it back. Refused as a
     * closed pool refuses it, so the caller wakes with the [dev.warmpool.PoolClosedException] instead
     * of waiting for ever; if the caller of `shutdownNow` runs the start, it finds REJECTED and does
     * nothing. (A start still PENDING is left to [rejected] or [queued], which the dispatching thread
     * is about to call.)
     */
    fun handedBack(cause: () -> RejectedExecutionException) {
        if (state.get() != QUEUED) return
        rejection = cause() // published by the CAS below; read only in REJECTED
        if (state.compareAndSet(QUEUED, REJECTED)) Dispatchers.IO.dispatch(context, block)
    }

    /** The caller's watch job completed; a non-null cause means the caller is being cancelled. */
    override fun invoke(cause: Throwable?) {
        if (cause == null) return
        cancellation = cause
        if (state.compareAndSet(PENDING, CANCELLED)) return
        if (state.compareAndSet(QUEUED, CANCELLED)) withdraw()
    }

    private fun withdraw() {
        unit.giveUpLane()
        Dispatchers.IO.dispatch(context, block)
    }

    /** First statement of the block's coroutine: throws unless a worker of the pool runs it. */
    fun enter() {
        when (state.get()) {
            RUNNING -> return
            REJECTED -> throw rejection!!
            // The caller's own cause (a withTimeout's TimeoutCancellationException): kotlinx rethrows a
            // scope block's exception as is when the block ends before the scope suspends, so a fresh
            // CancellationException here could reach the caller instead of its timeout.
            CANCELLED -> throw cancellation as? CancellationException
                ?: CancellationException("withWorker was cancelled while waiting for a worker", cancellation)
            else -> state.compareAndSet(PENDING, RUNNING) // started without a dispatch: already on the pool
        }
    }
}
