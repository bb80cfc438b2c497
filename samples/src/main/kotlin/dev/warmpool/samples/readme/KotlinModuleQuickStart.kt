package dev.warmpool.samples.readme.module

// pool-kotlin/README.md's quick start, imports included (ReadmeSnippetsTest keeps them equal).
// snippet:quick-start
import dev.warmpool.PoolOverloadedException
import dev.warmpool.kotlin.WorkerPool
import dev.warmpool.kotlin.asCoroutineDispatcher
import dev.warmpool.kotlin.withWorker
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.withContext
import kotlin.time.Duration.Companion.seconds

suspend fun kotlinQuickStart() = coroutineScope {
    val pool = WorkerPool {          // the core builder as a DSL; every value is checked when set
        name = "io"
        capacity = 64
        maxIdle = 10.seconds
    }
    val io = pool.asCoroutineDispatcher()   // Java: PoolDispatchers.from(pool)

    // 1. A dispatcher, like Dispatchers.IO but bounded by the pool
    val rows = withContext(io) { jdbc.query(sql) }
    val pages = urls.map { async(io) { blockingHttp.get(it) } }.awaitAll()

    // 2. Admission: wait for a worker without holding a thread, or be told the pool is full
    val row = try {
        pool.withWorker { jdbc.query(sql) }
    } catch (e: PoolOverloadedException) {   // a plain exception: this coroutine is still active
        cachedRow
    }

    pool.close()   // the dispatcher does not own the pool
}
// end:quick-start

private object jdbc {
    fun query(sql: String): String = "row for $sql"
}

private object blockingHttp {
    fun get(url: String): String = "page $url"
}

private const val sql = "select 1"
private const val cachedRow = "cached row"
private val urls = listOf("https://example.com/a", "https://example.com/b")
