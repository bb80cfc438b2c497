package dev.warmpool.kotlin

import dev.warmpool.PoolClosedException
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicReference
import kotlin.coroutines.Continuation
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.resume
import kotlin.coroutines.suspendCoroutine
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Job
import kotlinx.coroutines.ThreadContextElement
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource

/**
 * Issue 33: a coroutine's unit registers its job handler only after its first run, and only if the
 * job is still live then (a `withContext` job completes inside that run). These tests hold the README
 * rule "the dispatcher keeps a small entry per coroutine that has run on it until that coroutine
 * completes" (and no longer) and guarantee 8 (a failure counts once) across the lazy registration:
 * a job that completes in its first run, one that suspends, a resume that completes or fails the job
 * while the first run's tail has not yet settled the unit, and a first dispatch that never runs
 * because `shutdownNow` handed it back.
 */
@Timeout(30)
class UnitLifecycleTest {
    private val pools = TestPools()

    @AfterEach
    fun tearDown() = pools.close()

    @Test
    fun aUnitIsForgottenWhenItsJobCompletesWhetherItCompletedInItsFirstRunOrLater() {
        val pool = pools.pool(2)
        val d = pool.asCoroutineDispatcher() as PoolDispatcher
        kotlinx.coroutines.runBlocking {
            repeat(200) { withContext(d) {} } // complete inside their first run
            repeat(20) { withContext(d) { yield(); delay(1) } } // suspend, complete on a later run
            val failures = (1..20).map { runCatching { withContext(d) { delay(1); throw IllegalStateException("boom $it") } } }
            assertThat(failures).allMatch { it.isFailure }
            launch(d) { delay(1) }.join()
        }
        await().atMost(java.time.Duration.ofSeconds(5)).until { d.unitsHeld == 0 }
        awaitStats(pool, "20 failures counted") { it.failed() == 20L }
    }

    /**
     * The first run's tail is held (a [ThreadContextElement] restored on that worker once the body
     * suspended) while the body's resume runs on the other worker and ends the job there: normally,
     * or with a failure, which happens while no handler is registered. The unit is still forgotten
     * and the failure counted exactly once.
     */
    @ParameterizedTest
    @ValueSource(booleans = [false, true])
    fun aResumeThatEndsTheJobWhileTheFirstRunsTailIsHeldLeavesNoUnitAndCountsItsFailureOnce(fails: Boolean) {
        val pool = pools.pool(2)
        val d = pool.asCoroutineDispatcher() as PoolDispatcher
        val suspended = AtomicReference<Continuation<Unit>>()
        val jobRef = AtomicReference<Job>()
        val ended = CountDownLatch(1)
        val heldTail = HoldFirstTail {
            // On the first run's worker, after the body suspended, before the run's tail.
            jobRef.get().invokeOnCompletion { ended.countDown() }
            suspended.get().resume(Unit) // the next dispatch: runs on the other worker
            assertThat(ended.await(10, TimeUnit.SECONDS)).describedAs("the job ended on the other worker").isTrue()
        }
        val result = runCatching {
            kotlinx.coroutines.runBlocking {
                withContext(d + heldTail) {
                    jobRef.set(coroutineContext[Job])
                    suspendCoroutine<Unit> { suspended.set(it) }
                    if (fails) throw IllegalStateException("boom")
                }
            }
        }
        assertThat(heldTail.held.get()).describedAs("the first run's tail was held").isTrue()
        assertThat(result.isFailure).isEqualTo(fails)
        await().atMost(java.time.Duration.ofSeconds(5)).until { d.unitsHeld == 0 }
        if (fails) awaitStats(pool, "the failure counted") { it.failed() == 1L }
        assertThat(pool.stats().failed()).isEqualTo(if (fails) 1L else 0L)
    }

    /** A first dispatch handed back by `shutdownNow` never runs: its unit is forgotten once its job ends. */
    @Test
    fun aFirstDispatchHandedBackByShutdownNowLeavesNoUnitOnceItsCoroutineEnds() {
        val pool = pools.pool(1)
        val d = pool.asCoroutineDispatcher() as PoolDispatcher
        val gate = pools.occupy(pool, 1)
        val cause = AtomicReference<Throwable?>()
        kotlinx.coroutines.runBlocking {
            val job = launch(d) { }
            job.invokeOnCompletion { cause.set(it) }
            await().atMost(java.time.Duration.ofSeconds(5)).until { pool.stats().waiting() == 1 }
            pool.shutdownNow() // hands the launch's first dispatch back
            gate.open()
            job.join()
        }
        assertThat(cause.get()).isInstanceOf(CancellationException::class.java)
        assertThat(cause.get()?.cause).isInstanceOf(PoolClosedException::class.java)
        await().atMost(java.time.Duration.ofSeconds(5)).until { d.unitsHeld == 0 }
    }

    /**
     * README (failures): a failure that a child on another dispatcher brings to its parent while the
     * parent's first run on the pool is still going counts once (the parent is watched from the end of
     * that run). The first run waits, blocking, until the child has failed.
     */
    @Test
    fun aChildsFailureThatReachesTheParentDuringItsFirstRunCountsOnce() {
        val pool = pools.pool(2)
        val d = pool.asCoroutineDispatcher() as PoolDispatcher
        val childEnded = CountDownLatch(1)
        val result = runCatching {
            kotlinx.coroutines.runBlocking {
                withContext(d) {
                    val child = launch(kotlinx.coroutines.Dispatchers.Default) { throw IllegalStateException("child") }
                    child.invokeOnCompletion { childEnded.countDown() }
                    assertThat(childEnded.await(10, TimeUnit.SECONDS)).isTrue() // blocks the first run
                }
            }
        }
        assertThat(result.exceptionOrNull()).isInstanceOf(IllegalStateException::class.java)
        awaitStats(pool, "the failure counted") { it.failed() == 1L }
        await().atMost(java.time.Duration.ofSeconds(5)).until { d.unitsHeld == 0 }
        assertThat(pool.stats().failed()).isEqualTo(1L)
    }

    /** Runs [onFirstTail] where the coroutine leaves the thread of its first dispatch, once. */
    private class HoldFirstTail(private val onFirstTail: () -> Unit) : ThreadContextElement<Unit> {
        val held = AtomicBoolean()
        override val key: CoroutineContext.Key<*> get() = Key

        override fun updateThreadContext(context: CoroutineContext) {}

        override fun restoreThreadContext(context: CoroutineContext, oldState: Unit) {
            if (held.compareAndSet(false, true)) onFirstTail()
        }

        companion object Key : CoroutineContext.Key<HoldFirstTail>
    }
}
