package dev.warmpool.samples

import dev.warmpool.PoolOverloadedException
import dev.warmpool.WorkerPool
import dev.warmpool.kotlin.withWorker
import kotlinx.coroutines.runBlocking

/** The demo's Kotlin line: on a full nonblocking pool, `withWorker` throws the pool's exception in the caller. */
object KotlinRejection {
    @JvmStatic
    fun show(pool: WorkerPool): String = Demo.Occupied.fill(pool).use {
        runBlocking {
            try {
                pool.withWorker { "unexpected: admitted" }
            } catch (full: PoolOverloadedException) {
                "withWorker {} threw in the caller: ${full.message}"
            }
        }
    }
}
