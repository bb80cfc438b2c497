package dev.warmpool.kotlin

import dev.warmpool.PoolClosedException
import java.io.Closeable
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.EmptyCoroutineContext
import kotlin.time.Duration.Companion.hours
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineExceptionHandler
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Delay
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.ExecutorCoroutineDispatcher
import kotlinx.coroutines.InternalCoroutinesApi
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.asExecutor
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout

/**
 * What kotlinx-coroutines expects of an executor-backed dispatcher (the behaviour of
 * `ExecutorCoroutineDispatcher` and its tests: dispatch never throws, `isDispatchNeeded`, `Delay`
 * with `delay` and `withTimeout`, cancellation, `limitedParallelism`, `close`), checked against
 * `pool.asCoroutineDispatcher()`, with the documented deviations asserted as documented.
 * Correctness waits on latches, joins and deferreds; no sleeps.
 */
@OptIn(InternalCoroutinesApi::class) // Delay, as kotlinx's own dispatcher tests use it
@Timeout(30)
class DispatcherContractTest {
    private val pools = TestPools()

    @AfterEach
    fun tearDown() = pools.close()

    // ---- dispatch --------------------------------------------------------------------------------

    @Test
    fun dispatchIsAlwaysNeededAndBlocksRunOnPoolThreads() = pools.runBlocking {
        val pool = pools.pool(2)
        val d = pool.asCoroutineDispatcher()
        assertThat(d.isDispatchNeeded(EmptyCoroutineContext)).isTrue()
        val inside = withContext(d) {
            assertThat(d.isDispatchNeeded(coroutineContext)).isTrue() // also on its own thread
            Thread.currentThread()
        }
        assertThat(pool.isOwnThread(inside)).isTrue()
    }

    @Test
    fun runBlockingOnTheDispatcherStaysOnThePoolAcrossDelayAndYield() {
        val pool = pools.pool(2)
        val threads = kotlinx.coroutines.runBlocking(pool.asCoroutineDispatcher()) {
            val seen = mutableListOf(Thread.currentThread())
            delay(10)
            seen += Thread.currentThread()
            yield()
            seen += Thread.currentThread()
            seen
        }
        assertThat(threads).allMatch { pool.isOwnThread(it) }
    }

    @Test
    fun nestedWithContextHopsAndComesBack() = pools.runBlocking {
        val a = pools.pool(1)
        val b = pools.pool(1)
        withContext(a.asCoroutineDispatcher()) {
            assertThat(a.isOwnThread()).isTrue()
            withContext(b.asCoroutineDispatcher()) {
                assertThat(b.isOwnThread()).isTrue()
                withContext(a.asCoroutineDispatcher()) { assertThat(a.isOwnThread()).isTrue() }
                assertThat(b.isOwnThread()).isTrue()
            }
            assertThat(a.isOwnThread()).isTrue()
            withContext(Dispatchers.Default) { assertThat(a.isOwnThread()).isFalse() }
            assertThat(a.isOwnThread()).isTrue()
        }
    }

    @Test
    fun theDispatcherAsAnExecutorRunsOnThePool() {
        val pool = pools.pool(1)
        val ran = CompletableDeferred<Thread>()
        pool.asCoroutineDispatcher().asExecutor().execute { ran.complete(Thread.currentThread()) }
        val thread = kotlinx.coroutines.runBlocking { withTimeout(5.seconds) { ran.await() } }
        assertThat(pool.isOwnThread(thread)).isTrue()
    }

    @Test
    fun dispatchAfterCloseNeitherThrowsNorHangsAndCancelsWithThePoolAsCause() = pools.runBlocking {
        val pool = pools.pool(1)
        val d = pool.asCoroutineDispatcher()
        pool.close()
        // a raw dispatch: never throws; the block still runs (on the fallback)
        val ran = CountDownLatch(1)
        d.dispatch(Job(), Runnable { ran.countDown() })
        assertThat(ran.await(5, TimeUnit.SECONDS)).isTrue()

        val job = launch(d) { error("must not run as an active coroutine") }
        job.join()
        assertCancelledByThePoolClosing(job)
        val result = runCatching { withContext(d) { 1 } }
        assertThat(result.exceptionOrNull()).isInstanceOf(CancellationException::class.java)
    }

    // ---- Delay: delay --------------------------------------------------------------------------

    @Test
    fun theDispatcherIsADelayAndDelayNeverResumesEarly() = pools.runBlocking {
        val pool = pools.pool(2)
        val d = pool.asCoroutineDispatcher()
        assertThat(d).isInstanceOf(Delay::class.java)
        withContext(d) {
            for (ms in listOf(1L, 20L, 50L)) {
                val start = System.nanoTime()
                delay(ms)
                val took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)
                assertThat(took).`as`("delay($ms) took $took ms").isGreaterThanOrEqualTo(ms)
                assertThat(pool.isOwnThread()).isTrue()
            }
        }
    }

    @Test
    fun delaysResumeInDeadlineOrder() = pools.runBlocking {
        val d = pools.pool(4).asCoroutineDispatcher()
        val order = CopyOnWriteArrayList<Long>()
        val jobs = listOf(60L, 20L, 40L).map { ms -> launch(d) { delay(ms); order += ms } }
        jobs.forEach { it.join() }
        assertThat(order).containsExactly(20L, 40L, 60L)
    }

    @Test
    fun cancellingACoroutineWaitingInDelayEndsItAtOnce() = pools.runBlocking {
        val pool = pools.pool(2)
        val d = pool.asCoroutineDispatcher()
        val finallyRanOnPool = CompletableDeferred<Boolean>()
        val sleeper = launchEntered(d) { enter ->
            try {
                enter()
                delay(1.hours)
            } finally {
                finallyRanOnPool.complete(pool.isOwnThread())
            }
        }
        withTimeout(5.seconds) { sleeper.cancelAndJoin() }
        assertThat(sleeper.isCancelled).isTrue()
        assertThat(cancellationOf(sleeper).causes().none { it is PoolClosedException }).isTrue()
        assertThat(finallyRanOnPool.await()).isTrue()
    }

    @Test
    fun aContinuationCancelledRightAfterScheduleResumeAfterDelayIsNeverResumed() = pools.runBlocking {
        val delay = pools.pool(1).asCoroutineDispatcher() as Delay
        val outcome = runCatching {
            suspendCancellableCoroutine<Unit> { cont: CancellableContinuation<Unit> ->
                // Not 10 ms: a preempted test thread then cancelled after the timer had resumed the
                // continuation, which returned normally (1 of 8 runs under load)
                delay.scheduleResumeAfterDelay(1.hours.inWholeMilliseconds, cont)
                cont.cancel()
            }
        }
        assertThat(outcome.exceptionOrNull()).isInstanceOf(CancellationException::class.java)
    }

    @Test
    fun aVeryLongDelayNeitherOverflowsNorFiresEarly() = pools.runBlocking {
        val d = pools.pool(2).asCoroutineDispatcher()
        val fired = AtomicInteger()
        val long = launch(d) {
            delay(Long.MAX_VALUE - 1)
            fired.incrementAndGet()
        }
        val shortWait = launch(d) { delay(30) }
        shortWait.join() // the pool's timer passed a later deadline than a broken huge one would have
        assertThat(fired.get()).isZero()
        assertThat(long.isActive).isTrue()
        long.cancelAndJoin()
        assertThat(withContext(d) { withTimeout(Long.MAX_VALUE - 1) { 42 } }).isEqualTo(42)
    }

    // ---- Delay: withTimeout ----------------------------------------------------------------------

    @Test
    fun withTimeoutFiresNotEarlyOnThePoolAndWithTimeoutOrNullGivesNull() = pools.runBlocking {
        val pool = pools.pool(2)
        val d = pool.asCoroutineDispatcher()
        withContext(d) {
            val start = System.nanoTime()
            val e = runCatching { withTimeout(50) { awaitCancellation() } }.exceptionOrNull()
            val took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)
            assertThat(e).isInstanceOf(TimeoutCancellationException::class.java)
            assertThat(took).isGreaterThanOrEqualTo(50)
            assertThat(pool.isOwnThread()).isTrue()
            assertThat(withTimeoutOrNull<Unit>(20) { awaitCancellation() }).isNull()
            assertThat(withTimeoutOrNull(5.seconds) { "in time" }).isEqualTo("in time")
        }
    }

    @Test
    fun aPendingWithTimeoutEndsTheCoroutineWhenThePoolShutsDown() = pools.runBlocking {
        val pool = pools.pool(2)
        val d = pool.asCoroutineDispatcher()
        val never = CompletableDeferred<Unit>()
        val waiter = launchEntered(d) { enter ->
            withTimeout(1.hours) {
                enter()
                never.await() // nothing completes this: only the timeout can end the wait
            }
        }
        pool.shutdown()
        // The timeout's timer is cancelled by the shutdown; the coroutine must not hang on it.
        val ended = withTimeoutOrNull(5.seconds) { waiter.join() } != null
        assertThat(ended).`as`("coroutine in withTimeout ended after the pool shut down").isTrue()
        assertCancelledByThePoolClosing(waiter)
    }

    @Test
    fun aWithTimeoutStartedOnAShutDownPoolEndsWithThePoolClosedCauseNotATimeout() = pools.runBlocking {
        val pool = pools.pool(2)
        val d = pool.asCoroutineDispatcher()
        val shutDown = java.util.concurrent.CountDownLatch(1)
        val never = CompletableDeferred<Unit>()
        val caller = launchEntered(d) { enter ->
            enter()
            shutDown.await() // holds the worker, so this coroutine is still running when the pool closes
            withTimeout(1.hours) { never.await() }
        }
        pool.shutdown()
        shutDown.countDown()
        withTimeout(5.seconds) { caller.join() }
        assertCancelledByThePoolClosing(caller)
        val causes = cancellationOf(caller).causes()
        assertThat(causes.none { it is kotlinx.coroutines.TimeoutCancellationException })
            .`as`("no timeout was reported: %s", causes).isTrue()
    }

    @Test
    fun aPendingDelayEndsWithThePoolClosedCauseWhenThePoolShutsDown() = pools.runBlocking {
        val pool = pools.pool(2)
        val d = pool.asCoroutineDispatcher()
        val sleeper = launchEntered(d) { enter ->
            enter()
            delay(1.hours)
        }
        pool.shutdown()
        withTimeout(5.seconds) { sleeper.join() }
        assertCancelledByThePoolClosing(sleeper)
    }

    // ---- exceptions ------------------------------------------------------------------------------

    @Test
    fun anExceptionOfALaunchedCoroutineReachesItsHandlerOnceAndTheWorkerSurvives() = pools.runBlocking {
        val pool = pools.pool(1)
        val d = pool.asCoroutineDispatcher()
        val caught = CopyOnWriteArrayList<Throwable>()
        val handled = CountDownLatch(1)
        val handler = CoroutineExceptionHandler { _, e ->
            caught += e
            handled.countDown()
        }
        val scope = CoroutineScope(SupervisorJob() + d + handler)
        scope.launch { throw IllegalStateException("boom") }.join()
        assertThat(handled.await(5, TimeUnit.SECONDS)).isTrue()
        assertThat(caught).hasSize(1)
        assertThat(caught[0]).isInstanceOf(IllegalStateException::class.java).hasMessage("boom")
        assertThat(scope.launch { }.also { it.join() }.isCancelled).isFalse() // the pool still works
        // reported once, through kotlinx (PoolDispatcherGuaranteesTest checks that the pool adds no second report)
    }

    @Test
    fun anExceptionInsideWithContextIsRethrownToTheCaller() = pools.runBlocking {
        val d = pools.pool(1).asCoroutineDispatcher()
        assertThatThrownBy { kotlinx.coroutines.runBlocking { withContext(d) { error("inside") } } }
            .isInstanceOf(IllegalStateException::class.java).hasMessage("inside")
    }

    // ---- limitedParallelism ----------------------------------------------------------------------

    @Test
    fun limitedParallelismViewsLimitAndSupportDelay() = pools.runBlocking {
        val pool = pools.pool(4)
        val d = pool.asCoroutineDispatcher()
        assertThatThrownBy { d.limitedParallelism(0) }.isInstanceOf(IllegalArgumentException::class.java)
        val view = d.limitedParallelism(2)
        val inside = AtomicInteger()
        val most = AtomicInteger()
        fun running() { // counts blocks running at once; a suspended coroutine does not count
            most.accumulateAndGet(inside.incrementAndGet(), ::maxOf)
            repeat(10_000) { Thread.onSpinWait() }
            inside.decrementAndGet()
        }
        val jobs = List(8) {
            launch(view) {
                running()
                delay(5) // Delay on the view
                running()
            }
        }
        jobs.forEach { it.join() }
        assertThat(most.get()).isBetween(1, 2)
        assertThat(withContext(view) { withTimeoutOrNull<Unit>(10) { awaitCancellation() } }).isNull()
    }

    // ---- close: a documented deviation -----------------------------------------------------------

    @Test
    fun theDispatcherDoesNotOwnThePoolSoThereIsNothingToClose() {
        val pool = pools.pool(1)
        val d = pool.asCoroutineDispatcher()
        // Documented: unlike Executor.asCoroutineDispatcher(), this is no ExecutorCoroutineDispatcher
        // (no close()); closing the pool is the owner's business.
        assertThat(d).isNotInstanceOf(ExecutorCoroutineDispatcher::class.java)
        assertThat(d).isNotInstanceOf(Closeable::class.java)
        assertThat(d).isNotInstanceOf(AutoCloseable::class.java)
    }

    @Test
    fun undispatchedStartThenResumeOnAClosedPoolIsCancelledNotLost() = pools.runBlocking {
        val pool = pools.pool(1)
        val d = pool.asCoroutineDispatcher()
        val gate = CompletableDeferred<Unit>()
        val job = launch(d, start = CoroutineStart.UNDISPATCHED) { gate.await() }
        pool.close()
        gate.complete(Unit)
        withTimeout(5.seconds) { job.join() }
        assertThat(job.isCancelled).isTrue()
    }

    private fun cancellationOf(job: Job): Throwable = job.getCancellationException()

    /** Launches [body] on [dispatcher]; returns its job once [body] has called `enter()`. */
    private suspend fun CoroutineScope.launchEntered(
        dispatcher: CoroutineDispatcher,
        body: suspend (enter: () -> Unit) -> Unit,
    ): Job {
        val entered = CompletableDeferred<Unit>()
        val job = launch(dispatcher) { body { entered.complete(Unit) } }
        entered.await()
        return job
    }

    /** The job was cancelled, with a [PoolClosedException] among the causes of its cancellation. */
    private fun assertCancelledByThePoolClosing(job: Job) {
        assertThat(job.isCancelled).isTrue()
        val causes = cancellationOf(job).causes().toList()
        assertThat(causes.any { it is PoolClosedException }).`as`("causes %s", causes).isTrue()
    }
}
