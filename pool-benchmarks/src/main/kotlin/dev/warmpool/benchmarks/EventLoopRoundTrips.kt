@file:JvmName("EventLoopRoundTrips")

package dev.warmpool.benchmarks

import dev.warmpool.WorkerPool
import dev.warmpool.kotlin.asCoroutineDispatcher
import java.nio.file.Files
import java.nio.file.Paths
import java.util.Locale
import java.util.concurrent.Executors
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.sync.Semaphore
import kotlinx.coroutines.withContext

/**
 * Not a test: the two Kotlin rows of issue 33, warmpool against `newFixedThreadPool(20)
 * .asCoroutineDispatcher()` in one JVM, interleaved (the order alternates round by round), a
 * warm-up, then the median of the measured rounds and the ratio warmpool / fixed (above 1: warmpool
 * is faster). Each line carries `/proc/loadavg`, and the CPU time per trip of the whole JVM and of the
 * thread that runs `runBlocking` (on a shared machine CPU per trip moves less than throughput).
 *
 * - `loop`: `trips` round trips `withContext(d) {}` from 64 coroutines of ONE `runBlocking` event
 *   loop (the shape that was 1.02 on version 2).
 * - `default`: `trips` coroutines launched on [Dispatchers.Default], at most 64 in flight, each one
 *   `withContext(d) {}`.
 *
 * Depends on the public API only (`WorkerPool.builder()`, `asCoroutineDispatcher()`), so the same
 * compiled class runs against older pool-core / pool-kotlin classes (a bisect). Usage:
 * `EventLoopRoundTrips [shape=loop|default|both] [rounds=7] [warmup=2] [trips=200000] [capacity=20]`
 */
fun main(args: Array<String>) {
    val o = args.associate { it.substringBefore('=') to it.substringAfter('=') }
    val shape = o["shape"] ?: "loop"
    val rounds = o["rounds"]?.toInt() ?: 7
    val warmup = o["warmup"]?.toInt() ?: 2
    val trips = o["trips"]?.toInt() ?: 200_000
    val capacity = o["capacity"]?.toInt() ?: 20
    val pool = WorkerPool.builder().name("kt-wp").capacity(capacity).build()
    val fixed = Executors.newFixedThreadPool(capacity)
    val peers = listOf("warmpool" to pool.asCoroutineDispatcher(), "fixed" to fixed.asCoroutineDispatcher())
    val shapes = when (shape) {
        "both" -> listOf("loop", "default")
        else -> listOf(shape)
    }
    println("JVM ${System.getProperty("java.version")}, ${Runtime.getRuntime().availableProcessors()} CPUs, " +
        "capacity $capacity, $trips trips, $rounds rounds after $warmup warm-up; load ${load()}")
    for (s in shapes) {
        val values = peers.associate { it.first to mutableListOf<Double>() }
        val cpu = peers.associate { it.first to mutableListOf<Double>() }
        val loopCpu = peers.associate { it.first to mutableListOf<Double>() }
        for (r in 0 until warmup + rounds) {
            val order = if (r % 2 == 0) peers else peers.reversed()
            val line = StringBuilder()
            for ((name, d) in order) {
                val p0 = processCpu()
                val t0 = threads.currentThreadCpuTime
                val v = if (s == "loop") loopRoundTrips(d, trips) else defaultRoundTrips(d, trips)
                val c = (processCpu() - p0) / 1e3 / trips
                val lc = (threads.currentThreadCpuTime - t0) / 1e3 / trips
                if (r >= warmup) {
                    values.getValue(name) += v
                    cpu.getValue(name) += c
                    loopCpu.getValue(name) += lc
                }
                line.append(String.format(Locale.ROOT, " %s %.0fk/s (cpu %.2f us/trip, main thread %.2f)", name, v / 1e3, c, lc))
            }
            println("$s round ${r - warmup + 1}${if (r < warmup) " (warm-up)" else ""}:$line; load ${load()}")
        }
        val w = median(values.getValue("warmpool"))
        val f = median(values.getValue("fixed"))
        val perRound = values.getValue("warmpool").zip(values.getValue("fixed")) { a, b -> a / b }
        println(String.format(Locale.ROOT,
            "RESULT %s: warmpool %.0fk/s fixed %.0fk/s ratio %.2f (median of per-round ratios %.2f); load %s",
            s, w / 1e3, f / 1e3, w / f, median(perRound), load()))
        val wc = median(cpu.getValue("warmpool"))
        val fc = median(cpu.getValue("fixed"))
        println(String.format(Locale.ROOT,
            "RESULT %s cpu: warmpool %.2f us/trip fixed %.2f us/trip ratio fixed/warmpool %.2f; main thread %.2f vs %.2f us/trip",
            s, wc, fc, fc / wc, median(loopCpu.getValue("warmpool")), median(loopCpu.getValue("fixed"))))
    }
    pool.shutdownNow()
    fixed.shutdownNow()
}

private val abPools by lazy {
    val pool = WorkerPool.builder().name("kt-ab").capacity(20).build()
    mapOf("warmpool" to pool.asCoroutineDispatcher(), "fixed" to Executors.newFixedThreadPool(20).asCoroutineDispatcher())
}

/**
 * One round for an A/B run that loads this class twice, against two builds of pool-core and
 * pool-kotlin, in one JVM: [peer] `warmpool` or `fixed` (capacity 20, made on first use), [shape]
 * `loop` or `default`; returns trips per second and CPU microseconds per trip of the whole JVM.
 */
fun abRound(peer: String, shape: String, trips: Int): DoubleArray {
    val d = abPools.getValue(peer)
    val p0 = processCpu()
    val v = if (shape == "loop") loopRoundTrips(d, trips) else defaultRoundTrips(d, trips)
    return doubleArrayOf(v, (processCpu() - p0) / 1e3 / trips)
}

/** 64 coroutines of one `runBlocking` loop, each `trips / 64` times `withContext(d) {}`; trips per second. */
private fun loopRoundTrips(d: CoroutineDispatcher, trips: Int): Double {
    val each = trips / 64
    val t0 = System.nanoTime()
    runBlocking {
        repeat(64) { launch { repeat(each) { withContext(d) {} } } }
    }
    return each * 64 / ((System.nanoTime() - t0) / 1e9)
}

/** [trips] coroutines launched on [Dispatchers.Default], 64 in flight, each one `withContext(d) {}`. */
private fun defaultRoundTrips(d: CoroutineDispatcher, trips: Int): Double {
    val t0 = System.nanoTime()
    runBlocking(Dispatchers.Default) {
        val inFlight = Semaphore(64)
        repeat(trips) {
            inFlight.acquire()
            launch {
                try {
                    withContext(d) {}
                } finally {
                    inFlight.release()
                }
            }
        }
    }
    return trips / ((System.nanoTime() - t0) / 1e9)
}

private val threads = java.lang.management.ManagementFactory.getThreadMXBean()

/** CPU time of the whole JVM, ns: under load, CPU per trip moves less than wall-clock throughput. */
private fun processCpu(): Long =
    (java.lang.management.ManagementFactory.getOperatingSystemMXBean() as com.sun.management.OperatingSystemMXBean).processCpuTime

private fun median(xs: List<Double>): Double = xs.sorted()[xs.size / 2]

private fun load(): String = try {
    Files.readAllLines(Paths.get("/proc/loadavg"))[0].split(' ').take(3).joinToString(" ")
} catch (e: Exception) {
    "?"
}
