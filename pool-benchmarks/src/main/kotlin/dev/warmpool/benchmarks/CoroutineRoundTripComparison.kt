@file:JvmName("CoroutineRoundTripComparison")

package dev.warmpool.benchmarks

import dev.warmpool.WorkerPool
import dev.warmpool.kotlin.asCoroutineDispatcher
import java.util.concurrent.Executors
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext

/**
 * Not a test: a side-by-side measurement for the closing note of the Kotlin adapter. 200k empty
 * `withContext(d) { }` round trips issued from [Dispatchers.Default] by 64 concurrent coroutines, for
 * this adapter, `Dispatchers.IO.limitedParallelism(capacity)` and a fixed thread pool's
 * `asCoroutineDispatcher()`, in one JVM: a warm-up, then 5 interleaved rounds; prints medians and
 * ratios (above 1: the other one takes longer). A fourth line, a bare `pool.enqueue` dispatcher over
 * the same core, separates the adapter's cost from the core's. Run from the repository root:
 * ```
 * ./mvnw -q -B -pl pool-benchmarks -am install -DskipTests
 * ./mvnw -q -B -pl pool-benchmarks dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * java -cp pool-benchmarks/target/classes:$(cat pool-benchmarks/target/cp.txt) \
 *     dev.warmpool.benchmarks.CoroutineRoundTripComparison
 * ```
 */
fun main() {
    val capacity = 64
    val roundTrips = 200_000
    val concurrency = 64
    val pool = WorkerPool.builder().name("warm").capacity(capacity).build()
    val fixed = Executors.newFixedThreadPool(capacity)
    // Control: the same core with no adapter logic at all (no admission once, no rejection handling),
    // to tell the adapter's cost from the core's hand-off cost.
    val bare = WorkerPool.builder().name("bare").capacity(capacity).build()
    val bareDispatcher = object : CoroutineDispatcher() {
        override fun dispatch(context: CoroutineContext, block: Runnable) {
            bare.enqueue(block)
        }
    }
    val candidates: List<Pair<String, CoroutineDispatcher>> = listOf(
        "warmpool asCoroutineDispatcher()" to pool.asCoroutineDispatcher(),
        "Dispatchers.IO.limitedParallelism($capacity)" to Dispatchers.IO.limitedParallelism(capacity),
        "newFixedThreadPool($capacity).asCoroutineDispatcher()" to fixed.asCoroutineDispatcher(),
        "control: bare pool.enqueue dispatcher (same core)" to bareDispatcher,
    )
    println("JVM ${System.getProperty("java.version")}, ${Runtime.getRuntime().availableProcessors()} CPUs; " +
        "$roundTrips round trips, $concurrency concurrent, capacity $capacity")

    repeat(2) { candidates.forEach { (_, d) -> roundTripNanos(d, roundTrips / 2, concurrency) } }

    val samples = candidates.associate { it.first to mutableListOf<Long>() }
    for (round in 1..5) {
        for ((name, d) in candidates) {
            samples.getValue(name) += roundTripNanos(d, roundTrips, concurrency)
        }
    }

    val ours = median(samples.getValue(candidates[0].first))
    println(String.format("%-55s %12s %10s %16s", "dispatcher", "median ms", "us/trip", "time vs ours"))
    for ((name, _) in candidates) {
        val m = median(samples.getValue(name))
        println(String.format("%-55s %12.1f %10.2f %16.2f", name, m / 1e6, m / 1e3 / roundTrips, m.toDouble() / ours))
    }
    println("rounds (ms): " + samples.entries.joinToString("; ") { (k, v) -> k + " " + v.map { it / 1_000_000 } })

    fixed.shutdown()
    pool.close()
    bare.close()
}

private fun roundTripNanos(d: CoroutineDispatcher, roundTrips: Int, concurrency: Int): Long =
    runBlocking(Dispatchers.Default) {
        val each = roundTrips / concurrency
        val start = System.nanoTime()
        coroutineScope {
            repeat(concurrency) {
                launch { repeat(each) { withContext(d) { } } }
            }
        }
        System.nanoTime() - start
    }

private fun median(xs: List<Long>): Long = xs.sorted()[xs.size / 2]
