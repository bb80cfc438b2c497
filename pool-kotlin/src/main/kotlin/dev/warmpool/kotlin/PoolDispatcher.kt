package dev.warmpool.kotlin

import dev.warmpool.CancellationAware
import dev.warmpool.FailureAware
import dev.warmpool.PoolClosedException
import dev.warmpool.PoolOverloadedException
import dev.warmpool.SerialExecutor
import dev.warmpool.TaskHandle
import dev.warmpool.WorkerPool
import java.lang.ref.WeakReference
import java.util.Collections
import java.util.WeakHashMap
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater
import java.util.concurrent.RejectedExecutionException
import kotlin.coroutines.Continuation
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.jvm.internal.CoroutineStackFrame
import kotlinx.coroutines.AbstractCoroutine
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
 * a *unit*, whose first dispatch is admitted or rejected like any task (a plain task of the pool), and
 * a serial lane of the pool ([WorkerPool.newSerialExecutor]), made on the second dispatch, that
 * carries every later dispatch as admitted work ([SerialExecutor.executeAdmitted]): admission once,
 * never rejected for being full again (later dispatches wait their turn in line, where a lane holds
 * at most one place). A coroutine has at most one dispatch outstanding at a time, so a lane per
 * coroutine changes no ordering; a `withContext` job that runs once never makes one. The unit is removed
 * when the job completes: by its first run's tail if the job completed in that run (no job handler is
 * ever registered then), else by the handler that tail registers. A job that is not itself a coroutine (a plain `Job()` in the context of raw
 * coroutines) may be shared by several coroutines at once, so it gets no lane of its own: after its
 * admission each dispatch takes a fresh admitted lane, and those coroutines run side by side, as on any
 * dispatcher, instead of one waiting behind the other.
 *
 * **Family.** This pool's dispatcher and its `limitedParallelism` views share one map of units, so
 * work admitted through any of them counts as admitted for all (they run on the same threads); each
 * unit belongs to the dispatcher whose lane it holds.
 *
 * **Admitted work.** Scoping builders (`coroutineScope`, `withTimeout`, `supervisorScope`, a
 * `withContext` on this same dispatcher, also with `NonCancellable` or a `Job()`) run their block as a
 * new job that starts undispatched inside a running coroutine and is first dispatched on a *resume*;
 * no public API tells such a job from a new coroutine. A job seen here for the first time is admitted
 * work, never rejected, when it reaches a job that holds a unit of this family, by either of two
 * links: its ancestry (`Job.parent`: children and most scopes) or the coroutine stack its block
 * resumes ([CoroutineStackFrame.callerFrame], which leads from a scope's block back to the suspended
 * coroutine that called the scope; ancestry stops at `NonCancellable` and `Job()`, the stack does
 * not). Both links are followed from every job met on the way, so a child launched inside a
 * `NonCancellable` cleanup is found too. Such a job's lane is admitted through the core's explicit
 * admission ([SerialExecutor.executeAdmitted]): its block waits its turn when the pool is full.
 *
 * **Rejection.** A rejected first dispatch follows `Executor.asCoroutineDispatcher()`: the job is
 * cancelled with a [CancellationException] whose cause is the [RejectedExecutionException] and the
 * block runs on [Dispatchers.IO], so the coroutine completes and no scope hangs. The same happens to
 * any dispatch once the pool is shut down.
 *
 * **withWorker.** The first dispatch whose context holds an unbound [WorkerAdmission] is the start
 * of a [withWorker] block: see [dispatchAdmission]. Its later dispatches are ordinary.
 *
 * **Handed back by `shutdownNow`.** `shutdownNow()` returns a unit whose block waits in line (a first
 * dispatch waiting for admission, a resume waiting its turn, a `withWorker` start) to its caller, and
 * nothing else tells the coroutine: it would stay suspended for ever. So each dispatcher watches its
 * pool's termination ([watchTermination]); then every unit of it whose block was handed back is
 * refused as a closed pool refuses a dispatch: the coroutine is cancelled with a [PoolClosedException]
 * cause and its block finishes on [Dispatchers.IO] (a waiting `withWorker` caller throws the
 * [PoolClosedException]). The block is taken from the unit with one CAS, so if the caller of
 * `shutdownNow` runs the handed-back task, that run finds nothing to do: the block runs exactly once.
 * The same CAS settles a first dispatch that the pool refuses while the sweep runs (a unit is
 * registered before the pool decides): whichever takes the block refuses it, once.
 *
 * **Generations** (review r7, F5). A terminated pool can be rebooted, also before the hook of its
 * old generation has run (the stage completes after the pool reads terminated, and a `whenTerminated`
 * dependent registered later runs first), and core shows no generation's identity: `whenTerminated()`
 * returns a fresh stage per call. So a sweep does not ask "which generation was this block queued
 * in" but "was it handed back": a first dispatch and a `withWorker` start keep the [TaskHandle] of
 * their queued task, which reads done (not cancelled, not expired) once `shutdownNow` handed it back,
 * and one still waiting in a rebooted pool's line is left alone. A block queued without a handle (a
 * resume in an admitted lane) is refused only while the pool still reads terminated. Every dispatch
 * that queues a block first publishes it in its unit, then checks that a hook is watching
 * ([watchTermination]: registering one, on the pool's current generation, if none is), and a hook
 * that finds a block still waiting in a live line watches the current generation again: so every
 * generation a block waits in is watched, whichever way a reboot races the hooks.
 */
@OptIn(InternalCoroutinesApi::class) // Delay: kotlinx's own executor dispatchers implement it too
internal class PoolDispatcher private constructor(
    pool: WorkerPool,
    /** The pool whose threads run this dispatcher's blocks: [pool], or the pool a view limits. */
    private val root: WorkerPool,
    private val label: String?,
    /** For a view: the pool's own dispatcher, whose units it shares (and keeps reachable); else null. */
    family: PoolDispatcher?,
    /** For a view: the dispatcher it limits (the pool's, or a view's); else null. */
    private val limits: PoolDispatcher? = null,
    /** For a view: its bound. */
    private val parallelism: Int = 0,
    /** A view asked of a shut-down pool: its subpool is made on first use once the pool is open ([ready]). */
    unbound: Boolean = false,
) : CoroutineDispatcher(), Delay {
    /** The pool this dispatcher submits to: the pool itself, or a view's subpool (once [ready]). */
    @Volatile
    var pool: WorkerPool = pool
        private set

    @Volatile
    private var unbound: Boolean = unbound

    /**
     * Jobs of the coroutines of this dispatcher's family (the pool's dispatcher and its views), each
     * with its lane; a job leaves when it completes.
     */
    private val units: ConcurrentHashMap<Job, CoroutineUnit> = family?.units ?: ConcurrentHashMap()
    private val family: PoolDispatcher = family ?: this

    /** How many jobs of this family hold a unit now (for tests: a unit is forgotten when its job completes). */
    internal val unitsHeld: Int get() = units.size

    /**
     * Failures this family has counted (weakly held, by identity). One exception may end two units on
     * pool threads: a `withContext(view)` block's, then its caller's, which rethrows it (kotlinx may
     * rethrow a copy whose cause is the original, to recover its stack trace). It is one failure,
     * counted once (guarantee 8).
     */
    private val counted: MutableSet<Throwable> =
        family?.counted ?: Collections.synchronizedSet(Collections.newSetFromMap(WeakHashMap()))

    /** Whether [failure] is not yet counted in this family; if so it is now. */
    private fun firstCount(failure: Throwable): Boolean {
        val original = failure.cause?.takeIf { it.javaClass == failure.javaClass }
        // One step under the set's lock: two workers may count the same failure at once (a child's,
        // heard by its parent's first run while the child ends: review r10, F4).
        synchronized(counted) {
            if (failure in counted || (original != null && original in counted)) return false
            counted += failure
            return true
        }
    }

    /**
     * Whether a termination hook is registered whose sweep has not started (see [watchTermination]).
     * Set when one is registered, cleared by that hook as it starts, so at most one is pending.
     */
    private val watching = AtomicBoolean()

    override fun dispatch(context: CoroutineContext, block: Runnable) {
        if (!ready()) {
            reject(context, block, closedCause())
            return
        }
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
        if (unit == null) admit(job, context, block) else execute(unit, context, block)
    }

    /** A dispatch of a job that holds a unit: admitted, so only a shut-down pool refuses it. */
    private fun execute(unit: CoroutineUnit, context: CoroutineContext, block: Runnable) {
        try {
            reopening {
                if (unit.owner === this && unit.isCoroutine && unit.offer(block)) {
                    try {
                        // admitted: the unit's first dispatch was (a plain task, or the lane's first)
                        unit.lane.executeAdmitted(unit)
                    } catch (closed: RejectedExecutionException) {
                        if (unit.takeBack(block)) throw closed
                        return@reopening
                    }
                    // Published, then checked: the pool may have been rebooted since any hook was registered.
                    watchTermination()
                } else {
                    // a job shared by raw coroutines, or admitted through another dispatcher of the family
                    pool.newSerialExecutor().executeAdmitted(block)
                }
            }
        } catch (rejected: RejectedExecutionException) {
            reject(context, block, rejected)
        }
    }

    /** First dispatch of [job] here: gives it a unit whose lane is admitted (or rejected) now. */
    private fun admit(job: Job, context: CoroutineContext, block: Runnable) {
        watchTermination()
        val unit = CoroutineUnit(job, this, context)
        // Registered before the lane runs anything: the coroutine may resume before admit returns.
        val raced = units.putIfAbsent(job, unit)
        if (raced != null) {
            execute(raced, context, block)
            return
        }
        // A coroutine's unit registers its completion handler after its first run, and only if the job
        // is still live then ([CoroutineUnit.run]): a withContext job completes inside that run.
        if (!unit.isCoroutine) unit.watch()
        unit.offerFirst(block)
        try {
            reopening {
                // Admitted or refused like any task; a lane is made only if the job dispatches again
                // (most withContext jobs never do), and then it is admitted work (see [execute]).
                if (isAdmittedWork(job, context, block)) unit.lane.executeAdmitted(unit) else unit.firstHandle = pool.enqueue(unit)
            }
        } catch (rejected: RejectedExecutionException) {
            units.remove(job, unit)
            // Refused once: the unit was registered (and its block held) before the pool refused, so a
            // shutdownNow racing this dispatch may have swept the unit and refused the block already.
            if (unit.takeBack(unit)) reject(context, block, rejected)
            return
        }
        // Published (the block, then its handle), then checked: the watch taken above may be on a
        // generation that terminated before the pool accepted the block (a reboot raced this dispatch).
        watchTermination()
        val handle = unit.firstHandle
        if (handle != null && handedBack(handle)) unit.refuse(unit, ::handedBackCause)
    }

    /**
     * Whether a job seen here for the first time is part of admitted work of this family, and so is
     * never rejected (guarantee 6): it reaches a job holding a unit through its ancestry or through
     * the coroutine stack that [block] resumes (see the class notes).
     *
     * One pass over the ancestry answers unless a link leaves it. The stack can reach a job outside
     * the ancestry only where a scope's caller runs in another job than the scope's parent (the
     * scope was given `NonCancellable` or a `Job()` of its own: the cut the stack exists to cross),
     * or where [block] is a frame of another job: a scope's caller is otherwise its parent's own
     * code, whose frames lead to that parent and, if it is a scope, to its caller, and so on up the
     * ancestry; a job that is not a scope has no caller. Only then is the full walk taken
     * ([reachesAdmittedWork]). A `withContext(pool)` from outside the pool is the common first
     * dispatch, and its answer (no) took the full walk, 25 % of an event loop's time (issue 33).
     */
    @OptIn(ExperimentalCoroutinesApi::class) // Job.parent
    private fun isAdmittedWork(job: Job, context: CoroutineContext, block: Runnable): Boolean {
        var stackLeaves = block is CoroutineStackFrame && frameJobDiffers(block, context, job)
        var j = job
        while (true) {
            val parent = j.parent
            if (!stackLeaves && j is CoroutineStackFrame) {
                val caller = j.callerFrame
                stackLeaves = caller != null && frameJobDiffers(caller, null, parent)
            }
            j = parent ?: break
            if (units.containsKey(j)) return true
        }
        return stackLeaves && reachesAdmittedWork(job, block as? CoroutineStackFrame)
    }

    /**
     * Whether [frame] runs in another job than [expected] (a frame that is no continuation, or that
     * has no job, counts as another: the full walk decides). [known] is a context [frame] is known
     * to have, which spares the look-up when it is the frame's own.
     */
    private fun frameJobDiffers(frame: CoroutineStackFrame, known: CoroutineContext?, expected: Job?): Boolean {
        val context = (frame as? Continuation<*>)?.context ?: return true
        if (context === known) return false
        val frameJob = context[Job] ?: return true
        return frameJob !== expected
    }

    /**
     * Follows ancestry and coroutine stacks together from [job] and [frame] ([AdmissionWalk]): every
     * job met has its parent and (for a scope, which is a stack frame too) its caller followed, every
     * frame its job and its caller. Bounded, so a pathological stack costs a rejection at worst, never
     * a long walk.
     */
    private fun reachesAdmittedWork(job: Job, frame: CoroutineStackFrame?): Boolean =
        AdmissionWalk.reaches(job, frame, MAX_WALK, holdsUnit)

    private val holdsUnit: (Job) -> Boolean = { units.containsKey(it) }

    /**
     * A context without a job (a raw `startCoroutine`) has no identity to admit once: each dispatch
     * is a task of its own, enqueued without blocking and run on the fallback if rejected.
     */
    private fun dispatchJobless(context: CoroutineContext, block: Runnable) {
        try {
            reopening { pool.enqueue(JoblessDispatch(context, block)) }
        } catch (rejected: RejectedExecutionException) {
            reject(context, block, rejected)
        }
    }

    /**
     * A jobless block in the pool's line. If it waits there past `maxWaitInLine`, the pool refuses
     * it then, as it would have at once: it finishes on the fallback ([reject]).
     */
    private inner class JoblessDispatch(
        private val context: CoroutineContext,
        private val block: Runnable,
    ) : CancellationAware {
        override fun run() = block.run()

        override fun onCancel() {
            // Only a timer hears this; the block is an immediate task (a shutdownNow hands it back).
        }

        override fun onExpired(cause: PoolOverloadedException) = reject(context, block, cause)
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
        watchTermination()
        val unit = CoroutineUnit(job, this, context)
        unit.admission = admission
        if (!admission.bind(context, unit, block)) {
            return // withdrawn before it was ever queued
        }
        units[job] = unit
        unit.watch()
        val start = try {
            reopening { unit.lane.enqueue(admission.start) }
        } catch (rejected: RejectedExecutionException) {
            units.remove(job, unit)
            admission.rejected(rejected)
            return
        }
        unit.start = start
        admission.queued()
        // Published, then checked, as in [admit]. Handed back and swept while still PENDING (the sweep
        // leaves a PENDING start alone): refuse it now.
        watchTermination()
        if (handedBack(start)) admission.handedBack(::handedBackCause)
    }

    /**
     * Makes sure a hook is watching: if none is pending, registers one on the pool's current
     * generation (a rebooted pool has a fresh termination; a hook clears [watching] as it starts, so
     * the next dispatch registers again), then sweeps, since a block may have been handed back by a
     * generation that ended before this registration. Called before a unit is made (so a `shutdownNow`
     * racing a first dispatch is heard) and again after each dispatch has queued its block (publish,
     * then check). A pending hook may belong to a generation that already ended (a reboot raced it):
     * when it runs, it finds the blocks still waiting in the new line and watches again ([onTerminated]).
     */
    private fun watchTermination() {
        // A view's subpool terminates before its root pool (core's rule), so the family's dispatcher,
        // which watches the root, sweeps the views' units too. A view registers nothing of its own: a
        // hook on the root would keep every view made per call for the root's life, and asking its own
        // subpool for its termination makes core keep that subpool until it terminates, which a view,
        // never closed, does only with the root.
        if (family !== this) {
            family.watchTermination()
            return
        }
        if (watching.get() || !watching.compareAndSet(false, true)) return
        pool.whenTerminated().thenRun(::onTerminated)
        sweepHandedBack()
    }

    /**
     * A watched generation terminated (this may run after a reboot). Sweeps; if a block still waits
     * in a live line, it was queued in a later generation, which is watched now, unless the pool
     * reads terminated again (then no line holds a block, and a registration would only run at once).
     */
    private fun onTerminated() {
        watching.set(false)
        if (sweepHandedBack() && !pool.isTerminated) watchTermination()
    }

    /**
     * Refuses every unit of this family whose block `shutdownNow` handed back (see the class notes), so
     * the coroutine completes. Returns whether a block still waits in a live line.
     */
    private fun sweepHandedBack(): Boolean {
        var waiting = false
        for (unit in units.values) {
            val owner = unit.owner
            if (unit.sweep(owner::handedBackCause)) waiting = true
        }
        return waiting
    }

    private fun handedBackCause() =
        PoolClosedException("pool '${pool.name()}' was shut down (shutdownNow) while this coroutine waited in its line")

    /**
     * `delay` on this dispatcher waits on the pool's shared timer, not on kotlinx's
     * `DefaultExecutor` thread: when due, the timer hands a task to the pool (admitted work, never
     * rejected for load), which resumes the coroutine on that worker without a second dispatch.
     * Cancelling the coroutine cancels the timer at once. A shut-down pool takes no timer: the
     * `delay` throws a [CancellationException] whose cause is the pool's [RejectedExecutionException]
     * (a [dev.warmpool.PoolClosedException]), as a dispatch to a closed pool would, so none hangs.
     */
    override fun scheduleResumeAfterDelay(timeMillis: Long, continuation: CancellableContinuation<Unit>) {
        if (!ready()) {
            continuation.cancel(rejectedBy(closedCause()))
            return
        }
        val timer = try {
            reopening { pool.schedule(DelayedResume(continuation), timeMillis.coerceAtLeast(0), TimeUnit.MILLISECONDS) }
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
    private inner class DelayedResume(
        private val continuation: CancellableContinuation<Unit>,
    ) : CancellationAware, FailureAware {
        /** Resumes the coroutine here, as its unit's run would: a failure it throws is counted. */
        @OptIn(ExperimentalCoroutinesApi::class) // resumeUndispatched, as kotlinx's executor dispatchers use it
        override fun run() {
            val job = continuation.context[Job]
            val unit = job?.let { units[it] }
            if (unit == null && job != null) {
                runUnitless(job)
                return
            }
            val outer = unit?.enter()
            try {
                with(continuation) { this@PoolDispatcher.resumeUndispatched(Unit) }
            } finally {
                unit?.leave(outer)
            }
            unit?.rethrowFailure()
        }

        /**
         * The job has no unit: a scope (`coroutineScope`, `withTimeout`) or a child started undispatched,
         * first resumed by this timer. A failure it starts cancelling with on this thread is counted here,
         * as a unit counts its coroutine's: a scope's caller, resumed in place when the scope ends, then
         * rethrows it on this thread without a unit of its own running, so nobody else would count it.
         */
        @OptIn(ExperimentalCoroutinesApi::class, InternalCoroutinesApi::class)
        private fun runUnitless(job: Job) {
            val thread = Thread.currentThread()
            var failure: Throwable? = null
            val handle = job.invokeOnCompletion(onCancelling = true, invokeImmediately = false) { cause ->
                if (cause != null && cause !is CancellationException && Thread.currentThread() === thread) failure = cause
            }
            try {
                with(continuation) { this@PoolDispatcher.resumeUndispatched(Unit) }
            } finally {
                handle.dispose()
            }
            val f = failure ?: return
            if (firstCount(f)) throw f
        }

        override fun onFailure(failure: Throwable) {
            // Already reported by kotlinx, as for a unit's run.
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
        if (!ready()) {
            context.cancel(rejectedBy(closedCause()))
            return DisposableHandle { }
        }
        val timer = try {
            reopening { pool.schedule(TimeoutTimer(block, context), timeMillis.coerceAtLeast(0), TimeUnit.MILLISECONDS) }
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

    /**
     * Runs [action] against this dispatcher's pool; if it refuses because the pool is closed, and this
     * is a view whose parent was rebooted since, reopens the view ([reopenedAfterReboot]) and runs it
     * again.
     */
    private inline fun <T> reopening(action: () -> T): T = try {
        action()
    } catch (closed: PoolClosedException) {
        if (!reopenedAfterReboot()) throw closed
        action()
    }

    /**
     * A view's subpool shuts down with its pool and stays terminated when the pool is rebooted
     * (core reopens only the pool itself); the view reboots its subpool the first time it is used
     * on the open pool again, so a view lives as long as its pool. False if this is not a view or the
     * pool itself is shut down.
     */
    private fun reopenedAfterReboot(): Boolean {
        val limited = limits ?: return false
        if (root.isShutdown) return false
        // A view of a view: the subpool it limits reopens first, or its own cannot.
        if (limited.pool.isShutdown && !limited.reopenedAfterReboot()) return false
        if (pool.isShutdown) {
            try {
                pool.reboot()
            } catch (notTerminated: IllegalStateException) {
                // a racing call rebooted it first; or the pool is shutting down again (checked below)
            } catch (closed: RejectedExecutionException) {
                return false // the pool shut down again meanwhile
            }
        }
        return !pool.isShutdown
    }

    /**
     * Whether this dispatcher has a pool to submit to: false only for a view asked of a shut-down pool
     * whose pool is still shut down. Such a view makes its subpool the first time it is used on the
     * open pool, so it keeps its bound after a reboot.
     */
    private fun ready(): Boolean = !unbound || bindView()

    private fun bindView(): Boolean = synchronized(this) {
        if (!unbound) return true
        val limited = limits!!
        if (!limited.ready()) return false
        try {
            pool = limited.reopening { limited.pool.newSubpool(label ?: viewName(limited), parallelism, false, Int.MAX_VALUE) }
        } catch (closed: RejectedExecutionException) {
            return false
        }
        unbound = false
        true
    }

    private fun viewName(limited: PoolDispatcher) = "${limited.pool.name()}.limitedParallelism($parallelism)"

    /** Why an unbound view refuses: its pool is shut down. */
    private fun closedCause() = PoolClosedException("pool '${root.name()}' is shut down")

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
     * A view backed by a core subpool ([WorkerPool.newSubpool]) of this pool with capacity
     * [parallelism], blocking mode and an unbounded line: at most [parallelism] blocks run at once, on
     * this pool's threads, however the pool is resized later; a block beyond that waits in the
     * subpool's FIFO line without a thread, and a block with a seat waits its turn in this pool's line.
     * Like kotlinx's own views it has no rejection of its own, and it is not rejected for load by this
     * pool either (only a shut-down pool rejects it). The subpool lives as long as the view is
     * referenced; it closes with this pool and reopens with it ([reopenedAfterReboot]).
     *
     * This dispatcher itself only for a [parallelism] no pool can reach (above core's largest
     * capacity), and, on a view, for one at least the view's own (fixed) bound.
     */
    override fun limitedParallelism(parallelism: Int, name: String?): CoroutineDispatcher {
        require(parallelism >= 1) { "parallelism must be >= 1, was $parallelism" }
        if (parallelism > MAX_CAPACITY || (limits != null && parallelism >= this.parallelism)) return this
        val subpool = try {
            if (!ready()) null else reopening { pool.newSubpool(name ?: viewName(this), parallelism, false, Int.MAX_VALUE) }
        } catch (closed: RejectedExecutionException) {
            null
        }
        // A shut-down pool: a view that makes its subpool once the pool is open again (see [ready]).
        return PoolDispatcher(subpool ?: pool, root, name, family, this, parallelism, unbound = subpool == null)
    }

    /** Whether [interceptor] runs its coroutines on this dispatcher's threads (this pool or a view). */
    fun isOnSamePool(interceptor: Any?): Boolean = interceptor is PoolDispatcher && interceptor.root === root

    /** The pool's dispatchers are equal (see [asCoroutineDispatcher]); a view equals only itself. */
    override fun equals(other: Any?): Boolean =
        other === this || (other is PoolDispatcher && limits == null && other.limits == null && other.pool === pool)

    override fun hashCode(): Int = if (limits == null) System.identityHashCode(pool) else System.identityHashCode(this)

    override fun toString(): String = label ?: pool.toString()

    /**
     * A coroutine's lane, in the dispatcher that admitted it ([owner]), and the one task that lane
     * carries: a coroutine has at most one dispatch outstanding, so the unit holds it ([offer]) and
     * runs it, and a dispatch allocates nothing. A job that is not a coroutine ([isCoroutine] false:
     * raw coroutines may share it) uses its lane for its admission only.
     *
     * **Line deadline.** Its first dispatch may wait in line for the lane's first seat; if it waits
     * past `maxWaitInLine`, the pool refuses it then ([onExpired]), as it would have at once.
     *
     * **Failures** (guarantee 8). kotlinx catches a coroutine's exception inside the block and reports
     * it itself (its exception handler, or the caller of `await` / `withContext`), so the pool would
     * never see the task fail. The unit hears the job start cancelling with a failure on the thread that
     * runs it, and throws that failure from its task after the block: the pool counts it in `failed`
     * and gives it to a failure handler set on its builder; by default [onFailure] adds no second
     * report. A failure heard on another thread (a child's, propagating up) is the child's to count,
     * with one exception: the handler is registered only when the first run ends ([run]), so a
     * failure that reached the job while that run was still going counts once here, wherever it began.
     */
    internal class CoroutineUnit(
        private val job: Job,
        val owner: PoolDispatcher,
        /** The first dispatch's context: where an expired first dispatch is refused. */
        private val context: CoroutineContext,
    ) : CancellationAware, FailureAware, AdmittedUnit, (Throwable?) -> Unit {
        @Volatile
        private var madeLane: SerialExecutor? = null

        /**
         * The unit's lane, made on first use: the second dispatch of a coroutine, or a [withWorker]
         * start. A first dispatch goes to the pool as a plain task (issue 33: a lane per
         * `withContext` call was a fifth of an event loop's time); a coroutine has one dispatch
         * outstanding at a time, so its later dispatches find its lane and run in order.
         */
        val lane: SerialExecutor
            get() = madeLane ?: synchronized(this) {
                madeLane ?: owner.pool.newSerialExecutor().also { madeLane = it }
            }
        // A class check first: every kotlinx coroutine is an AbstractCoroutine, and an interface check
        // scans (and on JDK 17 rewrites) the class's secondary-supers cache, shared with the workers.
        val isCoroutine: Boolean = job is AbstractCoroutine<*> || job is Continuation<*>

        /**
         * The dispatch this unit runs next, if one is held: a later dispatch's block, or the unit
         * itself while it holds its first dispatch ([firstBlock]; the marker pairs [firstHandle] with
         * that dispatch and no later one, since kotlinx dispatches one block object again and again).
         * Taken with one CAS by whoever runs, refuses or expires it (fields and updaters, not atomic
         * objects: a `withContext` from outside the pool makes a unit per call, issue 33).
         */
        @Volatile
        @JvmField
        internal var pending: Runnable? = null

        /** The first dispatch's block; written before [pending] publishes it. */
        private var firstBlock: Runnable? = null

        /** The handle of the plain pool task that carries the first dispatch, once the pool accepted it. */
        @Volatile
        @JvmField
        internal var firstHandle: TaskHandle? = null

        /** For the unit of a [withWorker] call: its admission, whose start this lane carries. */
        @Volatile
        var admission: WorkerAdmission? = null

        // The failure heard on a thread that runs this unit's block. Which unit a thread runs is a
        // thread-local ([running]): a due delay's resume may run the coroutine on another worker while
        // the first is still leaving (or, if the timer beat the suspension, the first continues it in
        // place), so one shared "runner" field lost the failure in that race.
        @Volatile
        @JvmField
        internal var failure: Throwable? = null

        /** 1 once [watch] registered the job handler (at most once: a run's tail may race a refusal). */
        @Volatile
        @JvmField
        internal var watched: Int = 0

        /**
         * Registers one handler ([invoke]), once: for a coroutine an `onCancelling` one, which hears
         * the failure on the thread where the body threw and, if nothing cancelled the job, its normal
         * completion (kotlinx runs such a handler once, at whichever comes first); otherwise a
         * completion handler. One registration per unit, not two: a `withContext` from outside the
         * pool makes a unit per call. A coroutine's unit registers it only after its first run, if the
         * job is still live then ([run]), or when its first dispatch is refused ([refuse]).
         */
        @OptIn(InternalCoroutinesApi::class) // onCancelling
        fun watch() {
            if (watched != 0 || !WATCHED.compareAndSet(this, 0, 1)) return
            if (isCoroutine) job.invokeOnCompletion(onCancelling = true, invokeImmediately = true, handler = this)
            else job.invokeOnCompletion(this)
        }

        /** Holds [block] as the dispatch this unit runs next; false if one is outstanding already. */
        fun offer(block: Runnable): Boolean = PENDING.compareAndSet(this, null, block)

        /** Holds the first dispatch's [block] (marked by the unit itself in [pending]). */
        fun offerFirst(block: Runnable) {
            firstBlock = block
            pending = this
        }

        /**
         * Takes [block] (the unit itself for the first dispatch) back after the pool refused it;
         * false if a run or a sweep took it meanwhile.
         */
        fun takeBack(block: Runnable): Boolean = PENDING.compareAndSet(this, block, null)

        /** For the unit of a [withWorker] call: the handle of its start's lane task, once queued. */
        @Volatile
        var start: TaskHandle? = null

        /**
         * Runs the held dispatch. The run that ends with no handler registered (a coroutine's first;
         * its tail may overlap the next run) settles the unit while this thread still runs it: a job
         * that completed normally is forgotten at once and never gets a handler (a `withContext` job
         * completes inside its first run: issue 33); otherwise the handler is registered now. Any
         * cancellation that started before (by this run's failure, or by a resume on another worker
         * while this tail ran) reaches the handler at once, here, so the failure is still counted
         * once ([invoke]); one that starts later reaches it where it starts.
         */
        override fun run() {
            val block = unwrap(PENDING.getAndSet(this, null) ?: return)
            val outer = enter()
            try {
                block.run()
            } finally {
                if (watched == 0) settle()
                leave(outer)
            }
            rethrowFailure()
        }

        /** See [run]: forget a job that completed normally, else watch it. */
        private fun settle() {
            if (job.isCompleted && !job.isCancelled) owner.units.remove(job, this) else watch()
        }

        /** Runs [block] and throws the failure its coroutine started cancelling with, if any. */
        override fun runTracked(block: Runnable) {
            val outer = enter()
            try {
                block.run()
            } finally {
                leave(outer)
            }
            rethrowFailure()
        }

        /**
         * The current thread runs this coroutine now (its unit's run, or a due delay's resume); returns
         * the unit it ran before, for [leave].
         */
        fun enter(): CoroutineUnit? = running.get().also { running.set(this) }

        fun leave(outer: CoroutineUnit?) = running.set(outer)

        /** Throws the failure heard while this thread ran the coroutine, for the pool to count. */
        fun rethrowFailure() {
            if (failure == null) return
            val f = FAILURE.getAndSet(this, null) ?: return
            if (owner.firstCount(f)) throw f
        }


        override fun giveUpLane() = lane.close()

        override fun onFailure(failure: Throwable) {
            // Already reported by kotlinx (exception handler, await or withContext): no second report.
        }

        override fun onCancel() {
            // Only a timer hears this; the unit is an immediate task (a shutdownNow hands it back).
        }

        override fun onExpired(cause: PoolOverloadedException) {
            owner.units.remove(job, this)
            val block = PENDING.getAndSet(this, null) ?: return
            owner.reject(context, unwrap(block), cause)
        }

        /**
         * A sweep: refuses what `shutdownNow` handed back of this unit, as a closed pool refuses a
         * dispatch (the CAS makes a later run of the handed-back unit a no-op). A `withWorker` start
         * or a first dispatch with a handle is refused if its handle says handed back; a block
         * without one (still on its way into the pool, or queued in an admitted lane) only if the
         * root pool reads terminated (then no line holds it; a view's subpool may still read
         * terminated after the root's reboot, and a dispatch on its way reopens it): a block waiting
         * in a rebooted pool's line was accepted, and runs.
         * Returns whether a block of this unit still waits in a live line.
         */
        fun sweep(cause: () -> PoolClosedException): Boolean {
            val a = admission
            val s = start
            if (a != null && s != null && handedBack(s)) a.handedBack(cause)
            val p = pending ?: return a != null && s != null && !s.isDone
            val handle = if (p === this) firstHandle else null
            return when {
                handle != null && !handle.isDone -> true
                handle != null || owner.root.isTerminated -> {
                    if (handle == null || handedBack(handle)) refuse(p, cause)
                    false
                }
                // in an admitted lane, or on its way into the pool (whose dispatch checks again after it)
                else -> true
            }
        }

        /** Refuses [block] if it is still this unit's held dispatch: `shutdownNow` handed it back. */
        fun refuse(block: Runnable, cause: () -> PoolClosedException) {
            if (!PENDING.compareAndSet(this, block, null)) return
            watch() // a first dispatch refused never ran: its unit is forgotten when the job completes
            owner.reject(context, unwrap(block), cause())
        }

        private fun unwrap(block: Runnable): Runnable = if (block === this) firstBlock!! else block

        /**
         * The job completed (forget it), or a coroutine started cancelling: a failure heard on the
         * thread that runs it is kept for [rethrowFailure], and the unit is forgotten only when the
         * job completes, since a cancelled coroutine still dispatches (its `finally` blocks) until then.
         */
        override fun invoke(cause: Throwable?) {
            if (cause == null || !isCoroutine) {
                owner.units.remove(job, this)
                return
            }
            if (cause !is CancellationException && running.get() === this) failure = cause
            job.invokeOnCompletion { owner.units.remove(job, this) }
        }

        private companion object {
            val PENDING: AtomicReferenceFieldUpdater<CoroutineUnit, Runnable?> =
                AtomicReferenceFieldUpdater.newUpdater(CoroutineUnit::class.java, Runnable::class.java, "pending")
            val FAILURE: AtomicReferenceFieldUpdater<CoroutineUnit, Throwable?> =
                AtomicReferenceFieldUpdater.newUpdater(CoroutineUnit::class.java, Throwable::class.java, "failure")
            val WATCHED: AtomicIntegerFieldUpdater<CoroutineUnit> =
                AtomicIntegerFieldUpdater.newUpdater(CoroutineUnit::class.java, "watched")
        }
    }

    companion object {
        /**
         * Whether a queued task's [handle] was handed back by `shutdownNow`: done, though it neither
         * ran (its unit's block would be gone), was withdrawn, nor expired (its expiry refuses it).
         */
        private fun handedBack(handle: TaskHandle): Boolean = handle.isDone && !handle.isCancelled && !handle.isExpired

        /** Core's largest capacity (`WorkerPool.Builder.capacity`): no pool runs more at once. */
        private const val MAX_CAPACITY = 131_072

        /** The unit whose block the current thread runs, if any (see [CoroutineUnit.enter]). */
        private val running = ThreadLocal<CoroutineUnit?>()

        /** Steps of [reachesAdmittedWork]: far more than scopes nest in practice. */
        private const val MAX_WALK = 1_000

        /** One dispatcher per pool while anything uses it, so that units are shared by all callers. */
        private val instances = WeakHashMap<WorkerPool, WeakReference<PoolDispatcher>>()

        /** The last one handed out: spares the lock for the common case of one pool used repeatedly. */
        @Volatile
        private var last: WeakReference<PoolDispatcher>? = null

        fun of(pool: WorkerPool): PoolDispatcher {
            val recent = last?.get()
            if (recent != null && recent.pool === pool) return recent
            val d = synchronized(instances) {
                instances[pool]?.get() ?: PoolDispatcher(pool, pool, null, null).also { instances[pool] = WeakReference(it) }
            }
            last = WeakReference(d)
            return d
        }
    }
}
