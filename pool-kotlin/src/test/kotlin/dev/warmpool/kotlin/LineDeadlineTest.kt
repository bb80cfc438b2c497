package dev.warmpool.kotlin

import dev.warmpool.PoolOverloadedException
import java.time.Duration
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicReference
import kotlin.coroutines.Continuation
import kotlin.coroutines.startCoroutine
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout

/**
 * Line deadlines in the Kotlin adapter (DESIGN section 6, last paragraph; issue 23): a coroutine or
 * a `withWorker` caller waiting for admission past `maxWaitInLine` is refused like a rejection; an
 * admitted coroutine never expires. Nothing here waits for time to pass except the deadline itself,
 * and its expiry is read from the outcome, never from a clock.
 */
@Timeout(30)
class LineDeadlineTest {
    private val pools = TestPools()

    @AfterEach
    fun tearDown() = pools.close()

    private fun deadlinePool() = pools.pool(1, maxWaiting = 100) { maxWaitInLine(Duration.ofMillis(50)) }

    @Test
    fun aCoroutineWaitingForAdmissionPastTheDeadlineIsCancelledWithTheOverloadAsCause() = pools.runBlocking {
        val pool = deadlinePool()
        val gate = pools.occupy(pool, 1)
        val ran = AtomicBoolean()
        val ended = CompletableDeferred<Throwable?>()
        val job = launch(pool.asCoroutineDispatcher()) { ran.set(true) }
        job.invokeOnCompletion { ended.complete(it) }
        val cause = withTimeout(10_000) { ended.await() } // the deadline ends it; the gate is still closed
        assertThat(job.isCancelled).isTrue()
        assertThat(cause!!.causes().toList()).anyMatch { it is PoolOverloadedException }
        assertThat(ran).isFalse()
        assertThat(pool.stats().expired()).isEqualTo(1)
        assertThat(pool.stats().rejected()).isZero()
        gate.open()
        awaitStats(pool, "quiescent") { it.busy() == 0 && it.waiting() == 0 }
        assertThat(pool.stats().submitted()).isEqualTo(pool.stats().completed() + pool.stats().failed())
    }

    @Test
    fun withWorkerWaitingPastTheDeadlineThrowsTheOverload() = pools.runBlocking(Dispatchers.Default) {
        val pool = deadlinePool()
        val gate = pools.occupy(pool, 1)
        val ran = AtomicBoolean()
        val thrown = AtomicReference<Throwable>()
        try {
            pool.withWorker { ran.set(true) }
        } catch (e: PoolOverloadedException) {
            thrown.set(e)
        }
        assertThat(thrown.get()).isInstanceOf(PoolOverloadedException::class.java)
        assertThat(thrown.get()).hasMessageContaining("waited")
        assertThat(ran).isFalse()
        assertThat(pool.stats().expired()).isEqualTo(1)
        gate.open()
        assertThat(pool.withWorker { pool.isOwnThread() }).isTrue() // the pool takes the next one
        awaitStats(pool, "quiescent") { it.busy() == 0 && it.waiting() == 0 }
        assertThat(pool.stats().submitted()).isEqualTo(pool.stats().completed() + pool.stats().failed())
        assertThat(pool.stats().expired()).isEqualTo(1)
    }

    /**
     * A jobless dispatch (a raw `startCoroutine`) is a plain enqueued task: past the deadline it is
     * refused the same way, so the coroutine finishes on the fallback instead of waiting.
     */
    @Test
    fun aJoblessDispatchWaitingPastTheDeadlineFinishesOnTheFallback() {
        val pool = deadlinePool()
        val gate = pools.occupy(pool, 1)
        val ranOn = AtomicReference<Thread>()
        val done = CountDownLatch(1)
        val body: suspend () -> Unit = { ranOn.set(Thread.currentThread()) }
        body.startCoroutine(Continuation(pool.asCoroutineDispatcher()) { done.countDown() })
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue() // the gate is still closed
        assertThat(pool.isOwnThread(ranOn.get())).isFalse()
        assertThat(pool.stats().expired()).isEqualTo(1)
        gate.open()
    }

    /**
     * Admitted coroutines never expire: a resume that waits in line longer than the deadline still
     * runs on the pool. A plain task enqueued after it, with the same deadline, expires first; that
     * is the witness that the resume's deadline, had it one, would have passed too.
     */
    @Test
    fun anAdmittedCoroutineResumingOnAFullPoolNeverExpires() = pools.runBlocking(Dispatchers.Default) {
        val pool = deadlinePool()
        val d = pool.asCoroutineDispatcher()
        val go = CompletableDeferred<Unit>()
        val resumedOn = AtomicReference<Thread>()
        val coroutine = async(d, start = CoroutineStart.DEFAULT) {
            go.await()
            resumedOn.set(Thread.currentThread())
        }
        awaitStats(pool, "coroutine suspended") { it.busy() == 0 && it.submitted() == it.completed() }
        val gate = pools.occupy(pool, 1)
        go.complete(Unit) // the resume waits in line behind the gate
        awaitStats(pool, "resume in line") { it.waiting() == 1 }
        val witness = pool.enqueue({}, Duration.ofMillis(50))
        awaitStats(pool, "witness expired") { it.expired() == 1L }
        assertThat(witness.isExpired).isTrue()
        assertThat(pool.stats().waiting()).isEqualTo(1) // the resume is still there
        gate.open()
        withTimeout(10_000) { coroutine.await() }
        assertThat(pool.isOwnThread(resumedOn.get())).isTrue()
        assertThat(pool.stats().expired()).isEqualTo(1) // the witness only
    }

    /** The same for a `withWorker` block: once it has its worker, its resumes never expire. */
    @Test
    fun anAdmittedWithWorkerBlockResumingOnAFullPoolNeverExpires() = pools.runBlocking(Dispatchers.Default) {
        val pool = deadlinePool()
        val go = CompletableDeferred<Unit>()
        val started = CompletableDeferred<Unit>()
        val caller = async {
            pool.withWorker {
                started.complete(Unit)
                go.await()
                pool.isOwnThread()
            }
        }
        started.await()
        awaitStats(pool, "block suspended") { it.busy() == 0 }
        val gate = pools.occupy(pool, 1)
        go.complete(Unit)
        awaitStats(pool, "resume in line") { it.waiting() == 1 }
        pool.enqueue({}, Duration.ofMillis(50))
        awaitStats(pool, "witness expired") { it.expired() == 1L }
        gate.open()
        assertThat(withTimeout(10_000) { caller.await() }).isTrue()
        assertThat(pool.stats().expired()).isEqualTo(1)
    }
}
