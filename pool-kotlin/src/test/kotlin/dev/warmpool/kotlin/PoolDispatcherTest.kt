package dev.warmpool.kotlin

import dev.warmpool.PoolClosedException
import dev.warmpool.PoolOverloadedException
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicIntegerArray
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.DelicateCoroutinesApi
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.flowOn
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource

@Timeout(20)
class PoolDispatcherTest {
    private val pools = TestPools()

    @AfterEach
    fun tearDown() = pools.close()

    // ---------------------------------------------------------------------------------------------
    // Identity

    @Test
    fun dispatchersOfOnePoolAreEqualAndNestedWithContextDoesNotDispatch() = pools.runBlocking {
        val pool = pools.pool(2)
        val d = pool.asCoroutineDispatcher()
        assertThat(pool.asCoroutineDispatcher()).isEqualTo(d).hasSameHashCodeAs(d)
        assertThat(pools.pool(2).asCoroutineDispatcher()).isNotEqualTo(d)
        assertThat(d.toString()).isEqualTo(pool.toString())

        withContext(d) {
            val outer = Thread.currentThread()
            withContext(pool.asCoroutineDispatcher()) {
                assertThat(Thread.currentThread()).isSameAs(outer)
            }
        }
        // one task in all: the outer start (the count moves just after the hand-off, hence the wait)
        awaitStats(pool, "outer block counted") { it.submitted() == 1L && it.completed() == 1L }
        assertThat(pool.stats().submitted()).isEqualTo(1L)
    }

    // ---------------------------------------------------------------------------------------------
    // 1. dispatch never blocks, never throws, never drops a block, never runs it inline

    @Test
    fun dispatchRunsTheBlockOnAWorkerNeverInPlace() {
        val pool = pools.pool(2)
        val d = pool.asCoroutineDispatcher()
        val context = Job()
        assertThat(d.isDispatchNeeded(context)).isTrue()
        val ranOn = CompletableFuture<Thread>()
        d.dispatch(context, Runnable { ranOn.complete(Thread.currentThread()) })
        val thread = ranOn.get(5, TimeUnit.SECONDS)
        assertThat(thread).isNotSameAs(Thread.currentThread())
        assertThat(pool.isOwnThread(thread)).isTrue()
    }

    @Test
    fun dispatchDoesNotBlockWhenEveryWorkerIsBusyInBlockingMode() {
        val pool = pools.pool(1, maxWaiting = 10)
        val gate = pools.occupy(pool, 1)
        val ranOn = CompletableFuture<Thread>()
        val start = System.nanoTime()
        pool.asCoroutineDispatcher().dispatch(Job(), Runnable { ranOn.complete(Thread.currentThread()) })
        assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(1))
        assertThat(pool.stats().waiting()).isEqualTo(1)
        assertThat(ranOn).isNotDone()
        gate.open()
        assertThat(pool.isOwnThread(ranOn.get(5, TimeUnit.SECONDS))).isTrue()
    }

    @Test
    fun dispatchDoesNotThrowWhenRejectedButCancelsTheJobAndRunsTheBlockOnTheFallback() {
        val pool = pools.pool(1, nonblocking = true)
        pools.occupy(pool, 1)
        val job = Job()
        val cause = CompletableFuture<Throwable?>()
        job.invokeOnCompletion { cause.complete(it) }
        val ranOn = CompletableFuture<Thread>()

        pool.asCoroutineDispatcher().dispatch(job, Runnable { ranOn.complete(Thread.currentThread()) })

        val thread = ranOn.get(5, TimeUnit.SECONDS)
        assertThat(thread).isNotSameAs(Thread.currentThread())
        assertThat(pool.isOwnThread(thread)).isFalse()
        assertThat(cause.get(5, TimeUnit.SECONDS)).isInstanceOf(CancellationException::class.java)
            .hasCauseInstanceOf(PoolOverloadedException::class.java)
    }

    @Test
    fun dispatchDoesNotThrowOnAShutDownPool() {
        val pool = pools.pool(1)
        pool.shutdown()
        val job = Job()
        val ranOn = CompletableFuture<Thread>()
        pool.asCoroutineDispatcher().dispatch(job, Runnable { ranOn.complete(Thread.currentThread()) })
        assertThat(ranOn.get(5, TimeUnit.SECONDS)).isNotSameAs(Thread.currentThread())
        assertThat(job.isCancelled).isTrue()
    }

    @ParameterizedTest(name = "nonblocking={0}")
    @ValueSource(booleans = [true, false])
    fun dispatchNeverDropsABlockUnderContention(nonblocking: Boolean) {
        val pool = pools.pool(2, nonblocking = nonblocking, maxWaiting = 8)
        val d = pool.asCoroutineDispatcher()
        val perThread = 2_000
        val threads = 4
        val runs = AtomicIntegerArray(perThread * threads)
        val done = CountDownLatch(perThread * threads)
        val submitters = List(threads) { t ->
            Thread {
                repeat(perThread) { i ->
                    d.dispatch(Job(), Runnable {
                        runs.incrementAndGet(t * perThread + i)
                        done.countDown()
                    })
                }
            }
        }
        submitters.forEach(Thread::start)
        submitters.forEach(Thread::join)
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue()
        assertThat((0 until runs.length()).all { runs[it] == 1 }).isTrue()
    }

    // ---------------------------------------------------------------------------------------------
    // 2. admission once per coroutine

    /**
     * Nonblocking mode, and blocking mode with an always-full line (maxWaiting 0): a new coroutine is
     * rejected when the pool is full, but an admitted one resuming after delay, or from a channel inside
     * withTimeout (a scope job of its own), waits its turn in line instead.
     */
    @ParameterizedTest(name = "nonblocking={0}")
    @ValueSource(booleans = [true, false])
    fun admittedCoroutineIsNeverRejectedWhenItResumes(nonblocking: Boolean) = pools.runBlocking {
        val pool = pools.pool(2, nonblocking = nonblocking, maxWaiting = 0)
        val d = pool.asCoroutineDispatcher()
        val channel = Channel<Int>()
        val suspended = Channel<String>(Channel.UNLIMITED)
        val threads = ConcurrentHashMap.newKeySet<Thread>()
        val job = launch(d) {
            threads += Thread.currentThread()
            suspended.send("delay")
            delay(300) // long enough for the test to fill the pool meanwhile
            threads += Thread.currentThread()
            withTimeout(10.seconds) {
                suspended.send("receive")
                assertThat(channel.receive()).isEqualTo(7)
            }
            threads += Thread.currentThread()
        }

        assertThat(suspended.receive()).isEqualTo("delay")
        awaitStats(pool, "coroutine suspended") { it.busy() == 0 }
        val first = pools.occupy(pool, 2)
        awaitStats(pool, "resume after delay waits in line") { it.waiting() == 1 || !job.isActive }
        assertThat(job.isActive).isTrue()
        // a coroutine that was never admitted is rejected meanwhile
        val newcomer = launch(d) { }
        newcomer.join()
        assertThat(newcomer.isCancelled).isTrue()
        assertThat(job.isActive).isTrue()
        first.open()

        assertThat(suspended.receive()).isEqualTo("receive")
        awaitStats(pool, "coroutine suspended") { it.busy() == 0 }
        val second = pools.occupy(pool, 2)
        channel.send(7)
        awaitStats(pool, "resume from the channel waits in line") { it.waiting() == 1 || !job.isActive }
        assertThat(job.isActive).isTrue()
        second.open()

        job.join()
        assertThat(job.isCancelled).isFalse()
        assertThat(threads).allMatch { pool.isOwnThread(it) }
    }

    /**
     * Issue 12, fault 1: `withContext(NonCancellable)` (and `withContext(Job())`) inside an admitted
     * coroutine starts a job with no admitted ancestor; when it resumes on a full pool it is part of
     * running work and waits its turn, instead of being rejected and finishing on Dispatchers.IO.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = ["NonCancellable", "explicit Job"])
    fun cleanupUnderNonCancellableIsNotRejectedWhenItResumesOnAFullPool_fault1(kind: String) = pools.runBlocking {
        val pool = pools.pool(1, nonblocking = true, maxWaiting = 0)
        val d = pool.asCoroutineDispatcher()
        val channel = Channel<Int>()
        val suspended = CompletableDeferred<Unit>()
        val cleanup = CompletableDeferred<Thread>()
        val job = launch(d) {
            val context = if (kind == "NonCancellable") NonCancellable else Job()
            withContext(context) {
                suspended.complete(Unit)
                channel.receive() // resumed by the test thread, outside the pool
                cleanup.complete(Thread.currentThread())
            }
        }
        suspended.await()
        awaitStats(pool, "coroutine suspended") { it.busy() == 0 }
        val full = pools.occupy(pool, 1)
        val rejectedBefore = pool.stats().rejected()
        channel.send(1)
        awaitStats(pool, "the resume waits in line") { it.waiting() == 1 || cleanup.isCompleted }
        assertThat(cleanup.isCompleted).describedAs("did not run elsewhere").isFalse()
        full.open()
        assertThat(pool.isOwnThread(cleanup.await())).describedAs("cleanup ran on the pool").isTrue()
        job.join()
        assertThat(job.isCancelled).isFalse()
        assertThat(pool.stats().rejected()).isEqualTo(rejectedBefore)
    }

    @Test
    fun childOfAnAdmittedCoroutineIsNotRejectedWhenThePoolIsFull() = pools.runBlocking {
        val pool = pools.pool(2, nonblocking = true)
        val d = pool.asCoroutineDispatcher()
        val childRanOn = CompletableDeferred<Thread>()
        val parent = launch(d) {
            val gate = pools.occupy(pool, 1) // with this coroutine's worker, the pool is full
            val child = launch { childRanOn.complete(Thread.currentThread()) }
            // keep this worker: the child must wait in line, not be rejected
            awaitStats(pool, "child waits in line") { it.waiting() == 1 }
            assertThat(child.isActive).isTrue()
            gate.open()
        }
        parent.join()
        assertThat(parent.isCancelled).isFalse()
        assertThat(pool.isOwnThread(childRanOn.await())).isTrue()
    }

    // ---------------------------------------------------------------------------------------------
    // 3. rejected at the first dispatch: cancelled with the cause, finished on the fallback

    @Test
    @OptIn(DelicateCoroutinesApi::class) // CoroutineStart.ATOMIC
    fun everyBuilderCompletesWhenRejectedAtItsFirstDispatch() = pools.runBlocking {
        val pool = pools.pool(1, nonblocking = true)
        val d = pool.asCoroutineDispatcher()
        pools.occupy(pool, 1)

        val launched = launch(d) { error("must not run") }
        launched.join()
        assertThat(launched.isCancelled).isTrue()
        assertRejection(cancellationOf(launched))

        val deferred = async(d) { 1 }
        assertRejection(runCatching { deferred.await() }.exceptionOrNull())

        assertRejection(runCatching { withContext(d) { error("must not run") } }.exceptionOrNull())

        val flowResult = runCatching { flow { emit(1) }.flowOn(d).toList() }
        assertThat(flowResult.exceptionOrNull() ?: CancellationException("completed"))
            .isInstanceOf(CancellationException::class.java)

        // ATOMIC: the body runs anyway (on the fallback), as with any rejecting executor
        val atomicRan = CompletableDeferred<Thread>()
        val atomic = launch(d, start = CoroutineStart.ATOMIC) { atomicRan.complete(Thread.currentThread()) }
        atomic.join()
        assertThat(atomic.isCancelled).isTrue()
        assertThat(pool.isOwnThread(atomicRan.await())).isFalse()

        assertThat(coroutineContextIsActive()).isTrue()
    }

    private suspend fun coroutineContextIsActive(): Boolean =
        kotlinx.coroutines.currentCoroutineContext()[Job]!!.isActive

    private fun cancellationOf(job: Job): Throwable? {
        val cause = CompletableFuture<Throwable?>()
        job.invokeOnCompletion { cause.complete(it) }
        return cause.get(5, TimeUnit.SECONDS)
    }

    private fun assertRejection(e: Throwable?) {
        assertThat(e).isInstanceOf(CancellationException::class.java)
        assertThat(e!!.causes().any { it is PoolOverloadedException }).describedAs("cause chain of %s", e).isTrue()
    }

    // ---------------------------------------------------------------------------------------------
    // 4. delay and withTimeout resume on pool threads

    @Test
    fun delayAndWithTimeoutResumeOnPoolThreads() = pools.runBlocking {
        val pool = pools.pool(2)
        withContext(pool.asCoroutineDispatcher()) {
            delay(5)
            assertThat(pool.isOwnThread()).isTrue()
            withTimeout(5.seconds) {
                delay(5)
                assertThat(pool.isOwnThread()).isTrue()
            }
            assertThat(pool.isOwnThread()).isTrue()
            val timedOut = runCatching { withTimeout(20.milliseconds) { awaitCancellation() } }
            assertThat(timedOut.exceptionOrNull()).isInstanceOf(TimeoutCancellationException::class.java)
            assertThat(pool.isOwnThread()).isTrue()
        }
    }

    // ---------------------------------------------------------------------------------------------
    // 5. limitedParallelism

    @Test
    fun limitedParallelismChecksItsArgumentAndIsAViewEvenAtCapacity() {
        val d = pools.pool(4).asCoroutineDispatcher()
        assertThatThrownBy { d.limitedParallelism(0) }.isInstanceOf(IllegalArgumentException::class.java)
            .hasMessageContaining("0")
        assertThatThrownBy { d.limitedParallelism(-1) }.isInstanceOf(IllegalArgumentException::class.java)
        // a view at or above capacity too: the pool may grow later, the view keeps its bound (issue 21)
        assertThat(d.limitedParallelism(4)).isNotSameAs(d)
        assertThat(d.limitedParallelism(5)).isNotSameAs(d)
        assertThat(d.limitedParallelism(Int.MAX_VALUE)).isSameAs(d) // no pool runs more at once
        val view = d.limitedParallelism(2)
        assertThat(view).isNotSameAs(d)
        assertThat(view.limitedParallelism(2)).isSameAs(view)
        assertThatThrownBy { view.limitedParallelism(0) }.isInstanceOf(IllegalArgumentException::class.java)
        assertThat(d.limitedParallelism(2, "db").toString()).isEqualTo("db")
    }

    @Test
    fun limitedParallelismNeverRunsMoreThanNAtOnce() = pools.runBlocking {
        val pool = pools.pool(6)
        val view = pool.asCoroutineDispatcher().limitedParallelism(2)
        val narrower = view.limitedParallelism(1)
        val running = AtomicInteger()
        val maxRunning = AtomicInteger()
        val narrowRunning = AtomicInteger()
        val maxNarrow = AtomicInteger()
        fun enter(counter: AtomicInteger, max: AtomicInteger) {
            max.accumulateAndGet(counter.incrementAndGet()) { a, b -> maxOf(a, b) }
            Thread.sleep(5)
            counter.decrementAndGet()
        }
        val jobs = List(12) {
            launch(view) {
                repeat(3) {
                    assertThat(pool.isOwnThread()).isTrue()
                    enter(running, maxRunning)
                    delay(1)
                }
            }
        } + List(4) {
            launch(narrower) {
                enter(running, maxRunning)
                enter(narrowRunning, maxNarrow)
            }
        }
        jobs.joinAll()
        assertThat(maxRunning.get()).isEqualTo(2)
        assertThat(maxNarrow.get()).isEqualTo(1)
    }

    // ---------------------------------------------------------------------------------------------
    // 6. closing the pool

    @Test
    fun closingThePoolLetsEveryCoroutineComplete() = pools.runBlocking {
        val pool = pools.pool(2, maxWaiting = 100)
        val d = pool.asCoroutineDispatcher()
        val running = CountDownLatch(2)
        val release = CountDownLatch(1)
        val busy = List(2) {
            launch(d) {
                running.countDown()
                release.await()
            }
        }
        val queued = List(3) { launch(d) { Thread.sleep(1) } }
        // Pending on the pool's timer when it shuts down: the delay ends with the PoolClosedException.
        val suspended = List(3) { launch(d) { delay(1.seconds * 3600) } }
        assertThat(running.await(5, TimeUnit.SECONDS)).isTrue()

        val closed = launch(Dispatchers.IO) { pool.close() }
        awaitStats(pool, "shutdown") { pool.isShutdown }
        release.countDown()
        closed.join()
        assertThat(pool.isTerminated).isTrue()

        (busy + queued + suspended).joinAll()
        (busy + queued).forEach { assertThat(it.isCancelled).describedAs("in-flight or accepted").isFalse() }
        suspended.forEach { assertThat(it.isCancelled).describedAs("resumed after close").isTrue() }
        assertThat(cancellationOf(suspended[0])!!.causes().any { it is PoolClosedException }).isTrue()
        assertThat(busy + queued + suspended).noneMatch { it.isActive }
    }

    // ---------------------------------------------------------------------------------------------
    // Issue 12: Delay on core's shared timer

    private fun resumedByThePoolsTimer(): Boolean = Thread.currentThread().stackTrace
        .any { it.className == "dev.warmpool.DelayedTask" }

    @Test
    fun delayAndWithTimeoutUseThePoolsTimerNotTheDefaultExecutor() = pools.runBlocking {
        val pool = pools.pool(2)
        val d = pool.asCoroutineDispatcher()
        val afterDelay = withContext(d) {
            delay(5)
            Pair(Thread.currentThread().name, resumedByThePoolsTimer())
        }
        assertThat(afterDelay.first).startsWith(pool.name() + "-")
        assertThat(afterDelay.second).`as`("resumed by a due timer task of the pool").isTrue()

        val timedOut = runCatching { withContext(d) { withTimeout(10.milliseconds) { awaitCancellation() } } }
        assertThat(timedOut.exceptionOrNull()).isInstanceOf(TimeoutCancellationException::class.java)

        // cancelling a long delay cancels its timer: the coroutine ends at once
        val sleeper = launch(d) { delay(1.seconds * 3600) }
        sleeper.cancel()
        sleeper.join()
        assertThat(sleeper.isCancelled).isTrue()
    }
}
