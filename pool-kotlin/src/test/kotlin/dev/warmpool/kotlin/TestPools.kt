package dev.warmpool.kotlin

import dev.warmpool.WorkerPool
import java.time.Duration
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext
import kotlinx.coroutines.CoroutineScope
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await

/** Pools for one test class, shut down after each test. */
class TestPools : AutoCloseable {
    private val pools = CopyOnWriteArrayList<WorkerPool>()
    private val gates = CopyOnWriteArrayList<Gate>()

    fun pool(
        capacity: Int,
        nonblocking: Boolean = false,
        maxWaiting: Int = 100,
        configure: WorkerPool.Builder.() -> Unit = {},
    ): WorkerPool =
        WorkerPool.builder()
            .name("kt" + counter.incrementAndGet())
            .capacity(capacity)
            .nonblocking(nonblocking)
            .maxWaiting(maxWaiting)
            .apply(configure)
            .build()
            .also(pools::add)

    /** Occupies [workers] workers of [pool] until the gate opens (or the test ends). */
    fun occupy(pool: WorkerPool, workers: Int): Gate = Gate().also {
        gates.add(it)
        it.occupy(pool, workers)
    }

    /**
     * `runBlocking` for a test body that returns Unit (JUnit skips test methods that return a value)
     * and that opens every gate when the body fails or times out: otherwise runBlocking would wait
     * for children queued behind a closed gate, turning a failure into a hang.
     */
    fun runBlocking(context: CoroutineContext = EmptyCoroutineContext, body: suspend CoroutineScope.() -> Unit) {
        kotlinx.coroutines.runBlocking(context) {
            try {
                body()
            } finally {
                gates.forEach(Gate::open)
            }
        }
    }

    override fun close() {
        gates.forEach(Gate::open)
        pools.forEach { it.shutdownNow() }
    }

    class Gate {
        private val release = CountDownLatch(1)

        fun occupy(pool: WorkerPool, workers: Int) {
            val started = CountDownLatch(workers)
            val task = Runnable {
                started.countDown()
                try {
                    release.await()
                } catch (stopped: InterruptedException) {
                    // shutdownNow at the end of the test
                }
            }
            repeat(workers) {
                val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5)
                // a worker that just finished may not be back on the stack yet: try again
                while (!pool.tryExecute(task)) {
                    check(System.nanoTime() < deadline) { "could not occupy $pool: ${pool.stats()}" }
                    Thread.sleep(1)
                }
            }
            assertThat(started.await(5, TimeUnit.SECONDS)).isTrue()
        }

        fun open() = release.countDown()
    }

    companion object {
        private val counter = AtomicInteger()
    }
}

fun WorkerPool.isOwnThread(thread: Thread = Thread.currentThread()): Boolean =
    thread.name.startsWith(name() + "-")

fun awaitStats(pool: WorkerPool, what: String, condition: (dev.warmpool.PoolStats) -> Boolean) {
    await(what).atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(2))
        .until { condition(pool.stats()) }
}

fun Throwable.causes(): Sequence<Throwable> = generateSequence(this) { it.cause }
