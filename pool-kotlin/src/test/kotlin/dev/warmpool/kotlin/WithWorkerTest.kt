package dev.warmpool.kotlin

import dev.warmpool.PoolClosedException
import dev.warmpool.PoolOverloadedException
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.time.Duration.Companion.milliseconds
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.delay
import kotlinx.coroutines.isActive
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource

@Timeout(20)
class WithWorkerTest {
    private val pools = TestPools()

    @AfterEach
    fun tearDown() = pools.close()

    @Test
    fun runsTheBlockOnAWorkerAndReturnsItsResult() = pools.runBlocking {
        val pool = pools.pool(2)
        val result = pool.withWorker {
            delay(1)
            Thread.currentThread()
        }
        assertThat(pool.isOwnThread(result)).isTrue()
        assertThat(pool.isOwnThread()).isFalse()
    }

    @Test
    fun throwsPoolOverloadedInTheCallersContextWhenNonblockingAndFull() = pools.runBlocking {
        val pool = pools.pool(1, nonblocking = true)
        pools.occupy(pool, 1)
        val ran = AtomicBoolean()
        val failure = runCatching { pool.withWorker { ran.set(true) } }.exceptionOrNull()
        assertThat(failure).isInstanceOf(PoolOverloadedException::class.java)
            .isNotInstanceOf(CancellationException::class.java)
        assertThat(currentCoroutineContext().isActive).isTrue()
        assertThat(ran).isFalse()
    }

    @Test
    fun waitersSuspendWithoutAThreadAndAreServedInOrder() = pools.runBlocking {
        val pool = pools.pool(1, maxWaiting = 100)
        val gate = pools.occupy(pool, 1)
        val order = CopyOnWriteArrayList<Int>()
        // every waiter runs on this one runBlocking thread: it could not go on if any of them held it
        val waiters = List(20) { i ->
            launch {
                pool.withWorker { order += i }
            }.also { awaitWaiting(pool, i + 1) }
        }
        assertThat(order).isEmpty()
        gate.open()
        waiters.joinAll()
        assertThat(order).isEqualTo((0 until 20).toList())
    }

    @Test
    fun waitersAreBoundedByMaxWaiting() = pools.runBlocking {
        val pool = pools.pool(1, maxWaiting = 2)
        val gate = pools.occupy(pool, 1)
        val waiters = List(2) { i -> launch { pool.withWorker { } }.also { awaitWaiting(pool, i + 1) } }
        val failure = runCatching { pool.withWorker { } }.exceptionOrNull()
        assertThat(failure).isInstanceOf(PoolOverloadedException::class.java)
        assertThat(currentCoroutineContext().isActive).isTrue()
        gate.open()
        waiters.joinAll()
    }

    @Test
    fun cancellingAWaiterResumesItAtOnceAndNeitherRunsTheBlockNorLeaksAWorker() = pools.runBlocking {
        val pool = pools.pool(1, maxWaiting = 100)
        val gate = pools.occupy(pool, 1)
        val ran = AtomicBoolean()

        val timedOut = runCatching { withTimeout(50.milliseconds) { pool.withWorker { ran.set(true) } } }
        assertThat(timedOut.exceptionOrNull()).isInstanceOf(TimeoutCancellationException::class.java)
        // Issue 12, fault 6: the withdrawn waiter left the line at once (v1 kept its place).
        assertThat(pool.stats().waiting()).`as`("waiting after the timed-out waiter").isZero()

        val waiter = launch { pool.withWorker { ran.set(true) } }
        awaitWaiting(pool, 1)
        waiter.cancel()
        waiter.join()
        assertThat(waiter.isCancelled).isTrue()
        assertThat(pool.stats().waiting()).`as`("waiting after the cancelled waiter").isZero()

        gate.open()
        awaitStats(pool, "withdrawn entries left the line, no worker held") {
            it.waiting() == 0 && it.busy() == 0
        }
        assertThat(ran).isFalse()
        assertThat(pool.withWorker { 42 }).isEqualTo(42)
    }

    @ParameterizedTest(name = "nonblocking={0}")
    @ValueSource(booleans = [true, false])
    fun nestedWithWorkerOnTheSamePoolRunsInPlace(nonblocking: Boolean) = pools.runBlocking {
        val pool = pools.pool(1, nonblocking = nonblocking)
        val result = pool.withWorker {
            val outer = Thread.currentThread()
            pool.withWorker {
                assertThat(Thread.currentThread()).isSameAs(outer)
                withContext(pool.asCoroutineDispatcher().limitedParallelism(1)) {
                    pool.withWorker { 42 }
                }
            }
        }
        assertThat(result).isEqualTo(42)
    }

    @Test
    fun coroutinesStartedInsideTheBlockAreAdmitted() = pools.runBlocking {
        val pool = pools.pool(2, nonblocking = true)
        val childRanOn = CompletableDeferred<Thread>()
        pool.withWorker {
            val gate = pools.occupy(pool, 1)
            val child = launch { childRanOn.complete(Thread.currentThread()) }
            awaitStats(pool, "child waits in line") { it.waiting() == 1 }
            assertThat(child.isActive).isTrue()
            gate.open()
        }
        assertThat(pool.isOwnThread(childRanOn.await())).isTrue()
    }

    @Test
    fun throwsPoolClosedWhenThePoolIsShutDown() = pools.runBlocking {
        val pool = pools.pool(1)
        pool.shutdown()
        val failure = runCatching { pool.withWorker { } }.exceptionOrNull()
        assertThat(failure).isInstanceOf(PoolClosedException::class.java)
    }

    @Test
    fun callerOnAnotherDispatcherIsResumedThere() = pools.runBlocking {
        val pool = pools.pool(1)
        withContext(Dispatchers.Default + Job()) {
            pool.withWorker { assertThat(pool.isOwnThread()).isTrue() }
            assertThat(pool.isOwnThread()).isFalse()
        }
    }

    private suspend fun awaitWaiting(pool: dev.warmpool.WorkerPool, n: Int) {
        withTimeout(5_000) {
            while (pool.stats().waiting() < n) delay(1)
        }
    }
}
