package dev.warmpool.kotlin

import dev.warmpool.PoolOverloadedException
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout

/** Issue 14 for coroutines: a core subpool as a dispatcher, and `limitedParallelism` as a subpool view. */
@Timeout(60)
class SubpoolDispatcherTest {
    private val pools = TestPools()

    @AfterEach
    fun close() = pools.close()

    @Test
    fun aSubpoolDispatcherRunsOnTheParentsThreadsWithinBothBounds() = pools.runBlocking {
        val pool = pools.pool(4)
        val db = pool.newSubpool("db", 2)
        val inDb = AtomicInteger()
        val maxDb = AtomicInteger()
        val results = List(40) { i ->
            async(db.asCoroutineDispatcher()) {
                assertThat(pool.isOwnThread()).isTrue()
                maxDb.accumulateAndGet(inDb.incrementAndGet()) { a, b -> maxOf(a, b) }
                Thread.sleep(1)
                inDb.decrementAndGet()
                delay(1) // resumes through the subpool's lane, admitted
                i
            }
        }.awaitAll()
        assertThat(results).hasSize(40)
        assertThat(maxDb.get()).isBetween(1, 2)
        assertThat(db.stats().workersStarted()).isZero()
        assertThat(db.stats().rejected()).isZero()
    }

    @Test
    fun aSaturatedNonblockingSubpoolRejectsItsCoroutineWhileAnotherSubpoolAccepts() = pools.runBlocking {
        val pool = pools.pool(4, nonblocking = true)
        val db = pool.newSubpool("db", 1)
        val api = pool.newSubpool("api", 2)
        val gate = pools.occupy(db, 1)
        val cause = java.util.concurrent.CompletableFuture<Throwable?>()
        val rejected = launch(db.asCoroutineDispatcher()) { error("must not run on the pool") }
        rejected.invokeOnCompletion { cause.complete(it) }
        rejected.join()
        assertThat(rejected.isCancelled).isTrue()
        assertThat(cause.get()).isInstanceOf(CancellationException::class.java)
            .hasCauseInstanceOf(PoolOverloadedException::class.java)
        assertThat(cause.get()!!.cause!!.message).contains("subpool \"db\"")
        val value = withContext(api.asCoroutineDispatcher()) { 42 }
        assertThat(value).isEqualTo(42)
        assertThatThrownBy { kotlinx.coroutines.runBlocking { db.withWorker { 1 } } }
            .isInstanceOf(PoolOverloadedException::class.java)
        gate.open()
    }

    @Test
    fun limitedParallelismIsASubpoolViewThatWaitsInsteadOfRejecting() = pools.runBlocking {
        val pool = pools.pool(3, nonblocking = true)
        val view = pool.asCoroutineDispatcher().limitedParallelism(1, "serial")
        assertThat(view.toString()).isEqualTo("serial")
        val before = pool.stats().rejected()
        val order = java.util.concurrent.CopyOnWriteArrayList<Int>()
        val jobs = List(20) { i -> launch(view) { order.add(i); Thread.sleep(1) } }
        jobs.forEach { it.join() }
        assertThat(jobs).allMatch { !it.isCancelled }
        assertThat(order).hasSize(20)
        assertThat(pool.stats().rejected()).isEqualTo(before)
        // re-entrant: withWorker on the pool from a coroutine on its view runs in place
        val outer = withContext(view) {
            val t = Thread.currentThread()
            pool.withWorker { Thread.currentThread() === t }
        }
        assertThat(outer).isTrue()
    }
}
