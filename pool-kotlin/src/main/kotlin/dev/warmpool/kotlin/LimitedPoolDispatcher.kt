package dev.warmpool.kotlin

import dev.warmpool.WorkerPool
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.CoroutineDispatcher

/**
 * A view of a pool dispatcher that runs at most [parallelism] blocks at once: a gate in front of
 * [parent]. A dispatch takes a permit and goes to [parent] at once, or, when all permits are taken,
 * waits in this view's FIFO queue (never rejected here) until a running block returns its permit.
 * Admission stays the parent's: a coroutine's first dispatch through the gate is admitted or rejected
 * there, per coroutine, exactly as without the view. A permit is held from the parent dispatch until
 * the block returns, so waiting in the pool's line counts as running (conservative: never more than
 * [parallelism]).
 *
 * No lost wake-up: a dispatcher offers to the queue then looks at the permits, a finishing block
 * returns its permit then looks at the queue; with both sides publishing before looking, at least one
 * sees the other.
 */
internal class LimitedPoolDispatcher(
    private val parent: CoroutineDispatcher,
    val pool: WorkerPool,
    private val parallelism: Int,
    private val name: String?,
) : CoroutineDispatcher() {
    private val queue = ConcurrentLinkedQueue<Gated>()
    private val running = AtomicInteger()

    override fun dispatch(context: CoroutineContext, block: Runnable) {
        queue.offer(Gated(context, block))
        pump()
    }

    /** Moves queued blocks to the parent while permits are free. */
    private fun pump() {
        while (true) {
            val r = running.get()
            if (r >= parallelism || queue.isEmpty()) return
            if (!running.compareAndSet(r, r + 1)) continue
            val next = queue.poll()
            if (next == null) {
                running.decrementAndGet() // another pump took it; look again
                continue
            }
            parent.dispatch(next.context, next)
        }
    }

    override fun limitedParallelism(parallelism: Int, name: String?): CoroutineDispatcher {
        require(parallelism >= 1) { "parallelism must be >= 1, was $parallelism" }
        if (parallelism >= this.parallelism) return this
        return LimitedPoolDispatcher(this, pool, parallelism, name)
    }

    override fun toString(): String = name ?: "$parent.limitedParallelism($parallelism)"

    /** A block with its permit: returns the permit when it has run. */
    private inner class Gated(val context: CoroutineContext, private val block: Runnable) : Runnable {
        override fun run() {
            try {
                block.run()
            } finally {
                running.decrementAndGet()
                pump()
            }
        }
    }
}
