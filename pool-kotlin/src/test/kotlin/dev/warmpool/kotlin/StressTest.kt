package dev.warmpool.kotlin

import dev.warmpool.PoolOverloadedException
import java.util.concurrent.atomic.AtomicInteger
import kotlin.random.Random
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.delay
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Timeout
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource

/** Races of admission, resume, rejection and cancellation; short, but many at once. */
@Timeout(30)
@Tag("stress")
class StressTest {
    private val pools = TestPools()

    @AfterEach
    fun tearDown() = pools.close()

    @ParameterizedTest(name = "nonblocking={0}")
    @ValueSource(booleans = [true, false])
    fun withWorkerUnderTimeoutsNeverLeaksAWorkerNorRunsAWithdrawnBlock(nonblocking: Boolean) {
        val pool = pools.pool(2, nonblocking = nonblocking, maxWaiting = 10_000)
        val entered = AtomicInteger()
        val returned = AtomicInteger()
        val timedOut = AtomicInteger()
        val overloaded = AtomicInteger()
        pools.runBlocking(Dispatchers.Default) {
            List(1_000) { i ->
                launch {
                    try {
                        withTimeout(Random.nextLong(1, 4)) {
                            pool.withWorker {
                                entered.incrementAndGet()
                                if (i % 4 == 0) delay(1) else Thread.sleep(0, 200_000)
                            }
                        }
                        returned.incrementAndGet()
                    } catch (e: TimeoutCancellationException) {
                        timedOut.incrementAndGet()
                    } catch (e: PoolOverloadedException) {
                        overloaded.incrementAndGet()
                    }
                }
            }.joinAll()
        }
        assertThat(returned.get() + timedOut.get() + overloaded.get()).isEqualTo(1_000)
        assertThat(entered.get()).isGreaterThanOrEqualTo(returned.get())
        awaitStats(pool, "quiescent") { it.busy() == 0 && it.waiting() == 0 }
        val stats = pool.stats()
        assertThat(stats.submitted()).isEqualTo(stats.completed() + stats.failed())
        if (!nonblocking) assertThat(overloaded.get()).isZero()
    }

    @ParameterizedTest(name = "nonblocking={0}")
    @ValueSource(booleans = [true, false])
    fun everyCoroutineCompletesUnderRejectionsResumesAndCancellations(nonblocking: Boolean) {
        val pool = pools.pool(2, nonblocking = nonblocking, maxWaiting = 4)
        val d = pool.asCoroutineDispatcher()
        val finished = AtomicInteger()
        pools.runBlocking(Dispatchers.Default) {
            val jobs = List(2_000) { i ->
                launch(d) {
                    try {
                        delay(Random.nextLong(0, 2))
                        yield()
                        if (i % 3 == 0) launch { delay(1) }.join()
                    } finally {
                        finished.incrementAndGet()
                    }
                }
            }
            jobs.filterIndexed { i, _ -> i % 5 == 0 }.forEach { it.cancel(CancellationException("test")) }
            jobs.joinAll()
            assertThat(jobs).noneMatch { it.isActive }
        }
        awaitStats(pool, "quiescent") { it.busy() == 0 && it.waiting() == 0 }
    }
}
