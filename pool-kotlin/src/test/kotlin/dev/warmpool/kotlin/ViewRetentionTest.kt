package dev.warmpool.kotlin

import dev.warmpool.WorkerPool
import java.lang.ref.WeakReference
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test

/**
 * kotlinx treats `limitedParallelism` views as cheap, made per use and never closed. Core keeps a
 * subpool whose termination someone waits for until it terminates (a subpool kept only by its stage
 * still terminates with its parent); a view must not be such a subpool, or every view made per call
 * would live as long as its pool. A used view's subpool is collected once nobody references it, and a
 * view still sweeps its handed-back coroutines when the pool terminates (PoolDispatcherGuaranteesTest).
 */
class ViewRetentionTest {
    @Test
    fun aViewMadePerCallIsCollectedOnceUsedAndDropped() {
        val pool = WorkerPool { capacity = 2 }
        try {
            val dispatcher = pool.asCoroutineDispatcher()
            val subpools = (1..20).map { useAViewOnce(dispatcher) }
            val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20)
            while (subpools.any { it.get() != null } && System.nanoTime() < deadline) {
                System.gc()
                Thread.sleep(10)
            }
            assertThat(subpools.count { it.get() != null }).`as`("views' subpools still reachable").isZero()
        } finally {
            pool.shutdown()
        }
        assertThat(pool.awaitTermination(20, TimeUnit.SECONDS)).isTrue()
    }

    private fun useAViewOnce(dispatcher: kotlinx.coroutines.CoroutineDispatcher): WeakReference<WorkerPool> {
        val view = dispatcher.limitedParallelism(1) as PoolDispatcher
        val ran = runBlocking { withContext(view) { Thread.currentThread().name } }
        assertThat(ran).startsWith("warmpool")
        assertThat(view.pool).isNotSameAs((dispatcher as PoolDispatcher).pool)
        return WeakReference(view.pool)
    }
}
