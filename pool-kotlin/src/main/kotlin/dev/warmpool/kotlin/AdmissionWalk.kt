package dev.warmpool.kotlin

import kotlin.coroutines.Continuation
import kotlin.coroutines.jvm.internal.CoroutineStackFrame
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.Job

/**
 * The walk behind [PoolDispatcher]'s admission check: from a job seen for the first time and the
 * coroutine stack its first dispatch resumes, follows every job's parent and (for a scope, which is
 * a stack frame too) its caller, and every frame's job and caller, until it meets a job that [holds]
 * a unit. Bounded by [maxSteps], so a pathological stack costs a rejection at worst.
 *
 * It runs on every first dispatch that ancestry alone did not admit (each `withContext` from
 * outside the pool), so it allocates nothing: one walk per thread is reused, its arrays cleared
 * after each use, and the set of jobs and frames met is an identity array scanned linearly (walks
 * meet a handful). The arrays are of `Any`: a store into an array of an interface type checks the
 * element's class, and on JDK 17 such checks, made by several threads on the same classes, contend
 * on one cache word per class (JDK-8180450). A frame is followed once: a job that is also a frame (a scope) adds its caller,
 * and so may the frame above it, and without this a walk from a deep stack paid each caller chain
 * again for every job on it.
 */
internal class AdmissionWalk private constructor() {
    private var jobs = arrayOfNulls<Any>(8)
    private var jobCount = 0
    private var frames = arrayOfNulls<Any>(8)
    private var frameCount = 0
    private var seen = arrayOfNulls<Any>(8)
    private var seenCount = 0
    private var busy = false

    @OptIn(ExperimentalCoroutinesApi::class) // Job.parent
    private fun walk(job: Job, frame: CoroutineStackFrame?, maxSteps: Int, holds: (Job) -> Boolean): Boolean {
        pushJob(job)
        if (frame != null) pushFrame(frame)
        repeat(maxSteps) {
            if (jobCount > 0) {
                val j = jobs[--jobCount] as Job
                jobs[jobCount] = null
                if (firstMeeting(j)) {
                    if (j !== job && holds(j)) return true // job's own unit is being admitted
                    j.parent?.let(::pushJob)
                    (j as? CoroutineStackFrame)?.callerFrame?.let(::pushFrame)
                }
            } else if (frameCount > 0) {
                val f = frames[--frameCount] as CoroutineStackFrame
                frames[frameCount] = null
                if (firstMeeting(f)) {
                    (f as? Continuation<*>)?.context?.get(Job)?.let(::pushJob)
                    f.callerFrame?.let(::pushFrame)
                }
            } else {
                return false
            }
        }
        return false
    }

    private fun pushJob(j: Job) {
        if (jobCount == jobs.size) jobs = jobs.copyOf(jobCount * 2)
        jobs[jobCount++] = j
    }

    private fun pushFrame(f: CoroutineStackFrame) {
        if (frameCount == frames.size) frames = frames.copyOf(frameCount * 2)
        frames[frameCount++] = f
    }

    /** Records [x] (a job or a frame) as met; false if it was met before. */
    private fun firstMeeting(x: Any): Boolean {
        for (i in 0 until seenCount) {
            if (seen[i] === x) return false
        }
        if (seenCount == seen.size) seen = seen.copyOf(seenCount * 2)
        seen[seenCount++] = x
        return true
    }

    /** Drops every reference, so a parked thread's walk keeps no coroutine reachable. */
    private fun clear() {
        jobs.fill(null, 0, jobCount)
        frames.fill(null, 0, frameCount)
        seen.fill(null, 0, seenCount)
        jobCount = 0
        frameCount = 0
        seenCount = 0
    }

    companion object {
        private val perThread = ThreadLocal.withInitial { AdmissionWalk() }

        /** Whether the walk from [job] and [frame] meets a job that [holds] a unit. */
        fun reaches(job: Job, frame: CoroutineStackFrame?, maxSteps: Int, holds: (Job) -> Boolean): Boolean {
            val mine = perThread.get()
            val w = if (mine.busy) AdmissionWalk() else mine // [holds] never walks again; be safe anyway
            w.busy = true
            try {
                return w.walk(job, frame, maxSteps, holds)
            } finally {
                w.clear()
                w.busy = false
            }
        }
    }
}
