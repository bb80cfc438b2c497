package dev.warmpool.samples

import dev.warmpool.PoolOverloadedException
import dev.warmpool.kotlin.WorkerPool
import dev.warmpool.kotlin.asCoroutineDispatcher
import dev.warmpool.kotlin.withWorker
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext

/**
 * Coroutines on a warmpool: a fan-out of blocking calls through the pool's dispatcher, the same with
 * `withWorker` (callers suspend while they wait, holding no thread), and `withWorker` on a
 * nonblocking pool, where a full pool is an exception the caller handles rather than a cancellation.
 */
object CoroutineSample {
    @JvmStatic
    fun run() {
        WorkerPool {
            name = "blocking-io"
            capacity = 8
            maxIdle = 10.seconds
        }.use { pool ->
            val io = pool.asCoroutineDispatcher()
            runBlocking {
                var start = System.nanoTime()
                val viaDispatcher = (1..16).map { i -> async { withContext(io) { blockingLookup(i) } } }.awaitAll()
                println("coroutines: 16 blocking 50 ms calls with withContext($io): ${millisSince(start)} ms " +
                    "(8 workers: two waves, plus warm-up), e.g. ${viaDispatcher.first()}")

                start = System.nanoTime()
                val viaWithWorker = (1..16).map { i -> async { pool.withWorker { blockingLookup(i) } } }.awaitAll()
                println("coroutines: the same with pool.withWorker {}: ${millisSince(start)} ms, " +
                    "e.g. ${viaWithWorker.last()}")
            }
            println("coroutines: $pool ${pool.stats()}")
        }

        WorkerPool {
            name = "strict"
            capacity = 2
            nonblocking = true
        }.use { strict ->
            runBlocking {
                val answers = (1..5).map { i ->
                    async {
                        try {
                            strict.withWorker { blockingLookup(i, millis = 200) }
                        } catch (full: PoolOverloadedException) {
                            "fallback$i" // the caller is still active: degrade instead of failing
                        }
                    }
                }.awaitAll()
                println("coroutines: 5 concurrent withWorker calls on a nonblocking pool of 2: $answers")
            }
        }
    }

    private fun blockingLookup(i: Int, millis: Long = 50): String {
        Thread.sleep(millis) // stands for a JDBC call or a blocking HTTP client
        return "item$i@${Thread.currentThread().name}"
    }

    private fun millisSince(start: Long): Long = (System.nanoTime() - start) / 1_000_000
}
