package dev.warmpool.kotlin

import dev.warmpool.PoolOverloadedException
import dev.warmpool.WorkerPool
import java.time.Duration
import java.util.concurrent.CancellationException
import java.util.concurrent.atomic.AtomicBoolean
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.async
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout

/**
 * Issue 23 (DESIGN.md section 6): a coroutine's unit is a serial lane; one that waits in a blocking
 * pool's line for its first seat past `maxWaitInLine` expires. The coroutine is then cancelled with
 * the [PoolOverloadedException] as cause and finishes on the fallback, and `withWorker` throws it:
 * neither hangs (before, core's lanes did not expire; once they did, an expired first dispatch was
 * dropped without a word).
 */
@Timeout(60)
open class LaneDeadlineTest {
    private val pools = TestPools()

    /**
     * How the pool's line sheds: a 50 ms deadline here; [ControlledDelayLaneTest] runs every test
     * again with `controlledDelay(5 ms, 50 ms)`, whose bound is the interval in a line that has not
     * stood yet.
     */
    open fun line(b: WorkerPool.Builder) {
        b.maxWaitInLine(Duration.ofMillis(50))
    }

    @AfterEach
    fun tearDown() = pools.close()

    @Test
    fun aCoroutineWhoseFirstDispatchExpiresIsCancelledWithTheCause() = pools.runBlocking {
        val pool = pools.pool(1) { line(this) }
        pools.occupy(pool, 1)
        val ran = AtomicBoolean()
        // not a child of this test's scope: a lost dispatch must fail the test, not hang it
        val d = CoroutineScope(Job()).async(pool.asCoroutineDispatcher()) { ran.set(true) }
        val failure = withTimeout(20_000) { runCatching { d.await() }.exceptionOrNull() }
        assertThat(failure).isInstanceOf(CancellationException::class.java)
        assertThat(PoolOverloadedException.findIn(failure!!)).isPresent
        assertThat(ran).isFalse()
        assertThat(pool.stats().expired()).isEqualTo(1)
        assertThat(pool.stats().waiting()).isZero()
    }

    @Test
    fun withWorkerThrowsTheCauseWhenItsStartExpires() = pools.runBlocking {
        val pool = pools.pool(1) { line(this) }
        pools.occupy(pool, 1)
        val ran = AtomicBoolean()
        val failure = withTimeout(20_000) {
            runCatching { pool.withWorker { ran.set(true) } }.exceptionOrNull()
        }
        assertThat(failure).isInstanceOf(PoolOverloadedException::class.java)
            .hasMessageContaining("ms in line")
        assertThat(ran).isFalse()
        assertThat(pool.stats().expired()).isEqualTo(1)
        assertThat(pool.stats().waiting()).isZero()
    }
}
