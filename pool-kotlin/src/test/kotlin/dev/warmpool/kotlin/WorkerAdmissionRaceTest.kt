package dev.warmpool.kotlin

import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference
import kotlin.coroutines.EmptyCoroutineContext
import kotlinx.coroutines.Job
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout

/**
 * The lost `withWorker` start: a worker runs the admission's start while the dispatching thread,
 * whose `lane.execute` has just returned, marks it queued. The start used to try QUEUED -> RUNNING
 * and then PENDING -> RUNNING as two CASes; `queued()` (PENDING -> QUEUED) landing between them made
 * both fail, so the block never ran and the `withWorker` caller waited for ever, with the pool idle and
 * its counters exact (the start itself ran and completed). Races the two calls head to head, many
 * times: the block must run exactly once each time.
 */
@Timeout(120)
class WorkerAdmissionRaceTest {
    private val pools = TestPools()

    @AfterEach
    fun tearDown() = pools.close()

    @Test
    fun aStartRacingTheQueuedMarkRunsTheBlockExactlyOnce() {
        val pool = pools.pool(1)
        val unit = PoolDispatcher.CoroutineUnit(Job(), PoolDispatcher.of(pool), EmptyCoroutineContext)
        val rounds = 100_000
        val ran = AtomicInteger()
        val current = AtomicReference<WorkerAdmission>()
        val go = AtomicInteger()
        val done = AtomicInteger()
        val worker = Thread {
            for (round in 1..rounds) {
                while (go.get() < round) Thread.onSpinWait()
                current.get().start.run()
                done.set(round)
            }
        }
        worker.isDaemon = true
        worker.start()
        try {
            for (round in 1..rounds) {
                val admission = WorkerAdmission(pool)
                assertThat(admission.bind(EmptyCoroutineContext, unit, Runnable { ran.incrementAndGet() })).isTrue()
                current.set(admission)
                go.set(round) // the worker runs the start now, as a worker taking the lane would
                admission.queued() // while the dispatcher marks it queued
                val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
                while (done.get() < round) {
                    check(System.nanoTime() < deadline) { "worker stuck in round $round" }
                    Thread.onSpinWait()
                }
                assertThat(ran.get()).`as`("blocks run after round %d", round).isEqualTo(round)
            }
        } finally {
            go.set(Int.MAX_VALUE)
            worker.join(10_000)
        }
    }
}
