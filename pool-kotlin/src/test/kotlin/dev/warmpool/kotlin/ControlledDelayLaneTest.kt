package dev.warmpool.kotlin

import dev.warmpool.WorkerPool
import java.time.Duration

/**
 * Issue 34: every test of [LaneDeadlineTest] again on a pool with `controlledDelay(5 ms, 50 ms)`:
 * a coroutine's first dispatch shed by controlled delay cancels it with the cause, as a line
 * deadline's expiry does, and `withWorker` throws it.
 */
class ControlledDelayLaneTest : LaneDeadlineTest() {
    override fun line(b: WorkerPool.Builder) {
        b.controlledDelay(Duration.ofMillis(5), Duration.ofMillis(50))
    }
}
