package dev.warmpool.samples.readme

// The README's Kotlin quick start, imports included (ReadmeSnippetsTest keeps them equal).
// snippet:kotlin
import dev.warmpool.PoolOverloadedException
import dev.warmpool.kotlin.WorkerPool
import dev.warmpool.kotlin.asCoroutineDispatcher
import dev.warmpool.kotlin.withWorker
import kotlinx.coroutines.withContext
import kotlin.time.Duration.Companion.seconds

suspend fun quickStart() {
    val pool = WorkerPool { name = "io"; capacity = 64; maxIdle = 10.seconds }
    val io = pool.asCoroutineDispatcher()
    val rows = withContext(io) { jdbc.query(sql) }     // like Dispatchers.IO, but bounded
    val row = try {
        pool.withWorker { jdbc.query(sql) }            // suspends for a seat, holding no thread
    } catch (e: PoolOverloadedException) {             // full: an ordinary exception
        cachedRow
    }
    pool.close()                                       // the dispatcher does not own the pool
}
// end:kotlin

private object jdbc {
    fun query(sql: String): String = "row for $sql"
}

private const val sql = "select 1"
private const val cachedRow = "cached row"
