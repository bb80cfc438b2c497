@file:JvmName("CoroutineShapes")

package dev.warmpool.benchmarks

import dev.warmpool.WorkerPool
import dev.warmpool.kotlin.asCoroutineDispatcher
import java.util.concurrent.Executors
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.sync.Semaphore
import kotlinx.coroutines.withContext

/**
 * Scenario 7, Kotlin: `items` round trips `withContext(d) {}` from 64 coroutines of a `runBlocking`
 * loop (each round trip is a dispatch to `d` and one back to the loop); round trips per second.
 * Every dispatcher has at most 10 x nproc threads. One dispatcher per fresh JVM.
 *
 * Usage: `CoroutineShapes <warmpool|io-limited|fixed-dispatcher> [items=200000] [reps=3]`
 */
fun main(args: Array<String>) {
    val peer = args[0]
    val o = Harness.options(args, 1)
    val items = Harness.intOption(o, "items", 200_000)
    val reps = Harness.intOption(o, "reps", 3)
    val threads = AdapterShapes.THREADS
    val pool = WorkerPool.builder().name("coroutines").capacity(threads).build()
    val fixed = Executors.newFixedThreadPool(threads, Peers.named("fixed"))
    val d: CoroutineDispatcher = when (peer) {
        Peers.WARMPOOL -> pool.asCoroutineDispatcher()
        "io-limited" -> Dispatchers.IO.limitedParallelism(threads)
        "fixed-dispatcher" -> fixed.asCoroutineDispatcher()
        else -> throw IllegalArgumentException("unknown dispatcher $peer")
    }
    try {
        AdapterShapes.measure("kotlin", peer, "withContext round trips/s", reps) { roundTrips(d, items) }
    } finally {
        pool.shutdownNow()
        fixed.shutdownNow()
    }
}

private fun roundTrips(d: CoroutineDispatcher, items: Int): Double {
    val perCoroutine = items / AdapterShapes.CONCURRENCY
    val t0 = System.nanoTime()
    runBlocking {
        repeat(AdapterShapes.CONCURRENCY) {
            launch {
                repeat(perCoroutine) { withContext(d) {} }
            }
        }
    }
    return perCoroutine * AdapterShapes.CONCURRENCY / ((System.nanoTime() - t0) / 1e9)
}

/**
 * For [GoalTable]'s Kotlin shape: `roundTrips` round trips `withContext(d) {}` issued by `concurrency`
 * coroutines of a `runBlocking` loop; round trips per second.
 */
fun withContextRoundTripsPerSecond(d: CoroutineDispatcher, roundTrips: Int, concurrency: Int): Double {
    val each = roundTrips / concurrency
    val t0 = System.nanoTime()
    runBlocking {
        repeat(concurrency) {
            launch { repeat(each) { withContext(d) {} } }
        }
    }
    return each * concurrency / ((System.nanoTime() - t0) / 1e9)
}

/**
 * For [GoalTable]'s shape 11: [coroutines] coroutines launched on [Dispatchers.Default], at most
 * [inFlight] at a time, each one `withContext(d) {}`; coroutines per second.
 */
fun withContextFromDefaultPerSecond(d: CoroutineDispatcher, coroutines: Int, inFlight: Int): Double {
    val t0 = System.nanoTime()
    runBlocking(Dispatchers.Default) {
        val seats = Semaphore(inFlight)
        repeat(coroutines) {
            seats.acquire()
            launch {
                try {
                    withContext(d) {}
                } finally {
                    seats.release()
                }
            }
        }
    }
    return coroutines / ((System.nanoTime() - t0) / 1e9)
}

/** The three dispatchers of [GoalTable]'s Kotlin shape, in the order warmpool, fixed pool, IO view. */
fun goalDispatchers(pool: WorkerPool, fixed: java.util.concurrent.ExecutorService, parallelism: Int):
    List<CoroutineDispatcher> =
    listOf(pool.asCoroutineDispatcher(), fixed.asCoroutineDispatcher(), Dispatchers.IO.limitedParallelism(parallelism))
