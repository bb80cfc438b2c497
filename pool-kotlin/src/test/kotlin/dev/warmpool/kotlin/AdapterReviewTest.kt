package dev.warmpool.kotlin

import dev.warmpool.PoolClosedException
import dev.warmpool.PoolOverloadedException
import dev.warmpool.WorkerPool
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference
import kotlin.coroutines.Continuation
import kotlin.coroutines.resume
import kotlin.coroutines.startCoroutine
import kotlin.coroutines.suspendCoroutine
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineExceptionHandler
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.selects.select
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Disabled
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource

/** Reviewer r3: adversarial tests of the Kotlin adapter (DESIGN guarantees 4-9, 13 and section 6). */
@Timeout(20)
class AdapterReviewTest {
    private val pools = TestPools()

    @AfterEach
    fun tearDown() = pools.close()

    private class Boom(msg: String) : RuntimeException(msg)

    /** A pool whose explicit failure handler records what it sees. */
    private fun failurePool(capacity: Int = 2, seen: ConcurrentLinkedQueue<Throwable>): WorkerPool =
        pools.pool(capacity) { failureHandler { _, t -> seen.add(t) } }

    private fun quiet() = CoroutineExceptionHandler { _, _ -> }

    private fun assertCountedOnce(pool: WorkerPool, seen: ConcurrentLinkedQueue<Throwable>, boom: Boom) {
        awaitStats(pool, "quiescent") { it.busy() == 0 && it.waiting() == 0 }
        val s = pool.stats()
        assertThat(seen.filter { it === boom }).describedAs("failure handler saw it once; stats %s", s).hasSize(1)
        assertThat(s.failed()).describedAs("failed counts it once: %s", s).isEqualTo(1)
        assertThat(s.submitted()).describedAs("exact counters: %s", s).isEqualTo(s.completed() + s.failed())
    }

    // ---------------------------------------------------------------- guarantee 8: failures

    @Test
    fun failureInLaunchCountedOnce() {
        val seen = ConcurrentLinkedQueue<Throwable>()
        val pool = failurePool(seen = seen)
        val boom = Boom("launch")
        pools.runBlocking {
            launch(pool.asCoroutineDispatcher() + SupervisorJob() + quiet()) { throw boom }.join()
        }
        assertCountedOnce(pool, seen, boom)
    }

    @Test
    fun failureAfterDelayCountedOnce() {
        val seen = ConcurrentLinkedQueue<Throwable>()
        val pool = failurePool(seen = seen)
        val boom = Boom("after delay")
        pools.runBlocking {
            launch(pool.asCoroutineDispatcher() + SupervisorJob() + quiet()) { delay(1); throw boom }.join()
        }
        assertCountedOnce(pool, seen, boom)
    }

    @Test
    fun failureInAsyncCountedOnce() {
        val seen = ConcurrentLinkedQueue<Throwable>()
        val pool = failurePool(seen = seen)
        val boom = Boom("async")
        pools.runBlocking {
            val d = async(pool.asCoroutineDispatcher() + SupervisorJob()) { throw boom }
            assertThat(runCatching { d.await() }.exceptionOrNull()).isSameAs(boom)
        }
        assertCountedOnce(pool, seen, boom)
    }

    @Test
    fun failureInWithContextFromOutsideCountedOnce() {
        val seen = ConcurrentLinkedQueue<Throwable>()
        val pool = failurePool(seen = seen)
        val boom = Boom("withContext")
        pools.runBlocking {
            val thrown = runCatching { withContext(pool.asCoroutineDispatcher()) { delay(1); throw boom } }
            assertThat(thrown.exceptionOrNull()).isSameAs(boom)
        }
        assertCountedOnce(pool, seen, boom)
    }

    @Test
    fun failureInWithWorkerCountedOnce() {
        val seen = ConcurrentLinkedQueue<Throwable>()
        val pool = failurePool(seen = seen)
        val boom = Boom("withWorker")
        pools.runBlocking {
            val thrown = runCatching { pool.withWorker { throw boom } }
            assertThat(thrown.exceptionOrNull()).isSameAs(boom)
        }
        assertCountedOnce(pool, seen, boom)
    }

    @ParameterizedTest(name = "handler={0}")
    @ValueSource(booleans = [true, false])
    fun childFailingParentCountedOnce(handler: Boolean) {
        val seen = ConcurrentLinkedQueue<Throwable>()
        val pool = failurePool(seen = seen)
        val boom = Boom("child")
        pools.runBlocking {
            val ctx = pool.asCoroutineDispatcher() + SupervisorJob() + (if (handler) quiet() else kotlin.coroutines.EmptyCoroutineContext)
            launch(ctx) {
                launch { delay(1); throw boom }
                awaitCancellation()
            }.join()
        }
        assertCountedOnce(pool, seen, boom)
    }

    /**
     * A scope (`coroutineScope`, `withTimeout`) whose first suspension is a `delay` on the pool has no
     * unit when the delay's timer resumes it; the body then throws on the pool's worker and the caller
     * rethrows it in place. Neither unit is "running" on that thread, so nobody counts it.
     */
    @Disabled("FAULT: a failure thrown by a scope (coroutineScope, withTimeout) resumed by its first delay on the pool is counted 0 times in stats().failed and the explicit failure handler never sees it")
    @ParameterizedTest(name = "withTimeout={0}")
    @ValueSource(booleans = [false, true])
    fun failureInScopeAfterDelayCountedOnce(timeout: Boolean) {
        val seen = ConcurrentLinkedQueue<Throwable>()
        val pool = failurePool(seen = seen)
        val boom = Boom("scope after delay")
        pools.runBlocking {
            launch(pool.asCoroutineDispatcher() + SupervisorJob() + quiet()) {
                if (timeout) {
                    withTimeout(10_000) { delay(1); throw boom }
                } else {
                    coroutineScope { delay(1); throw boom }
                }
            }.join()
        }
        assertCountedOnce(pool, seen, boom)
    }

    /**
     * A coroutine on the pool that calls `withContext(view)` where the block throws: one exception,
     * one failing user block; the view's unit counts it, and then the caller, resumed by a dispatch,
     * rethrows it and its unit counts it again.
     */
    @Disabled("FAULT: one exception thrown in withContext(view) from a coroutine on the pool is counted twice in stats().failed and the explicit failure handler sees it twice")
    @Test
    fun failureThroughWithContextOnViewCountedOnce() {
        val seen = ConcurrentLinkedQueue<Throwable>()
        val pool = failurePool(capacity = 4, seen = seen)
        val view = pool.asCoroutineDispatcher().limitedParallelism(2)
        val boom = Boom("view")
        pools.runBlocking {
            launch(pool.asCoroutineDispatcher() + SupervisorJob() + quiet()) {
                withContext(view) { throw boom }
            }.join()
        }
        assertCountedOnce(pool, seen, boom)
    }

    // ---------------------------------------------------------------- guarantee 6: resumes never rejected

    private fun interface ResumePath {
        suspend fun exercise(pool: WorkerPool, full: CountDownLatch)
    }

    /**
     * An admitted coroutine on a nonblocking pool of 2: it suspends, the test fills the other seat
     * and (when it suspended) its own is free; the resume must wait its turn, not be rejected.
     * [fill] is counted down by the path once the coroutine is suspended where a resume will come from
     * another thread; then the test fills every seat, and opens the gate after the resume is in line.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = ["yield", "suspendCoroutine", "suspendCancellableCoroutine", "delay", "channel", "mutex",
        "select", "childLaunch", "childAsync", "nonCancellableYield", "nonCancellableChildLaunch",
        "nonCancellableSuspendCoroutine"])
    fun resumeOfAdmittedCoroutineNeverRejected(path: String) {
        val pool = pools.pool(2, nonblocking = true)
        val onPool = AtomicInteger()
        val offPool = AtomicInteger()
        val cancelled = AtomicReference<Throwable>()
        val suspended = CountDownLatch(1)
        val filled = CountDownLatch(1) // child paths: the parent holds its seat until the other is taken
        val childPath = path.contains("Child") || path.startsWith("child")
        val proceed = CompletableDeferred<Unit>()
        val channel = Channel<Int>()
        val mutex = Mutex(locked = true)
        var gate: TestPools.Gate? = null
        fun check() = if (pool.isOwnThread()) onPool.incrementAndGet() else offPool.incrementAndGet()
        pools.runBlocking {
            val job = launch(pool.asCoroutineDispatcher()) {
                check()
                try {
                    when (path) {
                        "yield" -> { suspended.countDown(); proceed.await(); yield() }
                        "suspendCoroutine" -> suspendCoroutine<Unit> { c ->
                            Thread { suspended.countDown(); kotlinx.coroutines.runBlocking { proceed.await() }; c.resume(Unit) }.start()
                        }
                        "suspendCancellableCoroutine" -> suspendCancellableCoroutine<Unit> { c ->
                            Thread { suspended.countDown(); kotlinx.coroutines.runBlocking { proceed.await() }; c.resume(Unit) }.start()
                        }
                        "delay" -> { suspended.countDown(); delay(200) }
                        "channel" -> { suspended.countDown(); channel.receive() }
                        "mutex" -> { suspended.countDown(); mutex.lock() }
                        "select" -> { suspended.countDown(); select<Unit> { channel.onReceive { } } }
                        "childLaunch" -> { suspended.countDown(); filled.await(); launch { check() }.join() }
                        "childAsync" -> { suspended.countDown(); filled.await(); async { check() }.await() }
                        "nonCancellableYield" -> withContext(NonCancellable) {
                            suspended.countDown(); proceed.await(); yield()
                        }
                        "nonCancellableChildLaunch" -> withContext(NonCancellable) {
                            suspended.countDown(); filled.await(); launch { check() }.join()
                        }
                        "nonCancellableSuspendCoroutine" -> withContext(NonCancellable) {
                            suspendCoroutine<Unit> { c ->
                                Thread { suspended.countDown(); kotlinx.coroutines.runBlocking { proceed.await() }; c.resume(Unit) }.start()
                            }
                        }
                    }
                } catch (e: CancellationException) {
                    cancelled.set(e)
                    throw e
                }
                check()
            }
            withContext(Dispatchers.IO) { assertThat(suspended.await(5, TimeUnit.SECONDS)).isTrue() }
            if (childPath) {
                gate = pools.occupy(pool, 1)
                filled.countDown() // the child is dispatched on the full pool; the parent's join frees a seat
                job.join()
                gate!!.open()
                return@runBlocking
            }
            awaitStats(pool, "coroutine suspended, seat free") { it.busy() == 0 }
            gate = pools.occupy(pool, 2)
            when (path) {
                "channel", "select" -> launch(Dispatchers.IO) { channel.send(1) }
                "mutex" -> mutex.unlock()
                else -> proceed.complete(Unit)
            }
            if (path != "delay") {
                awaitStats(pool, "resume in line") { it.waiting() >= 1 }
            }
            gate!!.open()
            job.join()
        }
        assertThat(cancelled.get()).describedAs("admitted coroutine cancelled").isNull()
        assertThat(offPool.get()).describedAs("ran off the pool").isZero()
        assertThat(onPool.get()).isGreaterThanOrEqualTo(2)
        awaitStats(pool, "quiescent") { it.busy() == 0 && it.waiting() == 0 }
        assertThat(pool.stats().rejected()).isZero()
    }

    // ---------------------------------------------------------------- rejection at admission

    @Test
    fun notYetAdmittedCoroutineRejectedCancelledWithCauseAndNeverRunsOnPool() {
        val pool = pools.pool(1, nonblocking = true)
        pools.occupy(pool, 1)
        val bodyRan = AtomicBoolean()
        val finalThread = AtomicReference<Thread>()
        pools.runBlocking {
            val job = launch(pool.asCoroutineDispatcher()) { bodyRan.set(true) }
            job.invokeOnCompletion { finalThread.set(Thread.currentThread()) }
            job.join()
            val cause = runCatching { job.ensureActiveCause() }.getOrNull()
            assertThat(job.isCancelled).isTrue()
            assertThat(cause).isInstanceOf(CancellationException::class.java)
            assertThat(cause!!.cause).isInstanceOf(PoolOverloadedException::class.java)
        }
        assertThat(bodyRan.get()).isFalse()
        assertThat(pool.isOwnThread(finalThread.get())).isFalse()
    }

    @OptIn(kotlinx.coroutines.InternalCoroutinesApi::class)
    private fun Job.ensureActiveCause(): Throwable = getCancellationException()

    // ---------------------------------------------------------------- withWorker

    @Test
    fun withWorkerNonblockingThrowsInCaller() {
        val pool = pools.pool(1, nonblocking = true)
        pools.occupy(pool, 1)
        val ran = AtomicBoolean()
        pools.runBlocking {
            val thrown = runCatching { pool.withWorker { ran.set(true) } }.exceptionOrNull()
            assertThat(thrown).isInstanceOf(PoolOverloadedException::class.java)
            assertThat(coroutineContext[Job]!!.isActive).isTrue()
        }
        assertThat(ran.get()).isFalse()
    }

    @Test
    fun withWorkerCancelWithdrawsAtOnceAndBlockNeverRuns() {
        val pool = pools.pool(1, maxWaiting = 1)
        val gate = pools.occupy(pool, 1)
        val ran = AtomicBoolean()
        pools.runBlocking {
            val caller = launch(Dispatchers.IO) { pool.withWorker { ran.set(true) } }
            awaitStats(pool, "withWorker in line") { it.waiting() == 1 }
            caller.cancel()
            caller.join()
            // withdrawn at once: the line's place is free while the gate still holds the seat
            awaitStats(pool, "withdrawn entry left the line") { it.waiting() == 0 }
            assertThat(pool.tryExecute({}, java.time.Duration.ofMillis(1)) || pool.enqueue {}.let { true }).isTrue()
            gate.open()
            awaitStats(pool, "quiescent") { it.busy() == 0 && it.waiting() == 0 }
        }
        assertThat(ran.get()).isFalse()
    }

    // ---------------------------------------------------------------- views

    @Test
    fun viewKeepsItsBoundAcrossGrowAndShrink() {
        val pool = pools.pool(2)
        val view = pool.asCoroutineDispatcher().limitedParallelism(3)
        pool.resize(8)
        assertThat(maxConcurrency(pool, view, 3, coroutines = 12)).isEqualTo(3)
        pool.resize(4)
        assertThat(maxConcurrency(pool, view, 3, coroutines = 12)).isEqualTo(3)
    }

    /**
     * Runs [coroutines] blocking coroutines on [view]; each waits until [bound] run at once (or
     * 300 ms, a window in which an unbounded view would start more), and returns the largest number
     * seen running at once.
     */
    private fun maxConcurrency(pool: WorkerPool, view: kotlinx.coroutines.CoroutineDispatcher, bound: Int, coroutines: Int): Int {
        val running = AtomicInteger()
        val max = AtomicInteger()
        val reached = CountDownLatch(bound + 1)
        pools.runBlocking {
            List(coroutines) {
                launch(view) {
                    val now = running.incrementAndGet()
                    max.accumulateAndGet(now) { a, b -> maxOf(a, b) }
                    reached.countDown()
                    reached.await(300, TimeUnit.MILLISECONDS) // a window for an extra one to start
                    running.decrementAndGet()
                }
            }.forEach { it.join() }
        }
        return max.get()
    }

    /**
     * `limitedParallelism` asked of a shut-down pool returns the pool's plain dispatcher; after
     * `reboot()` that "view" has no bound at all.
     */
    @Disabled("FAULT: limitedParallelism(n) asked of a shut-down pool returns the unbounded pool dispatcher, which stays unbounded after reboot()")
    @Test
    fun viewMadeWhileShutDownKeepsItsBoundAfterReboot() {
        val pool = pools.pool(4)
        pool.shutdown()
        assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue()
        val view = pool.asCoroutineDispatcher().limitedParallelism(1)
        pool.reboot()
        assertThat(maxConcurrency(pool, view, 1, coroutines = 4)).isEqualTo(1)
    }

    @Test
    fun viewWorksAfterShutdownAndReboot() {
        val pool = pools.pool(4)
        val view = pool.asCoroutineDispatcher().limitedParallelism(2)
        assertThat(maxConcurrency(pool, view, 2, coroutines = 4)).isEqualTo(2)
        pool.shutdown()
        assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue()
        pool.reboot()
        assertThat(maxConcurrency(pool, view, 2, coroutines = 6)).isEqualTo(2)
    }

    // ---------------------------------------------------------------- raw coroutines sharing a Job

    @Test
    fun rawCoroutinesSharingOneJobDoNotDeadlock() {
        val pool = pools.pool(4)
        val shared = Job()
        val ctx = pool.asCoroutineDispatcher() + shared
        val signal = CompletableDeferred<Unit>()
        val done = CountDownLatch(2)
        val onPool = AtomicInteger()
        suspend { signal.await(); if (pool.isOwnThread()) onPool.incrementAndGet(); Unit }
            .startCoroutine(Continuation(ctx) { done.countDown() })
        suspend { yield(); if (pool.isOwnThread()) onPool.incrementAndGet(); signal.complete(Unit); Unit }
            .startCoroutine(Continuation(ctx) { done.countDown() })
        assertThat(done.await(5, TimeUnit.SECONDS)).isTrue()
        assertThat(onPool.get()).isEqualTo(2)
    }

    // ---------------------------------------------------------------- shutdown with suspended coroutines

    /**
     * A due delay waiting in line when shutdownNow runs: the coroutine completes (cancelled, cause
     * closed). Pool of 1: the parent holds the seat (blocked on a latch) while its child, started
     * undispatched, suspends in `delay(1)`; the due resume then waits in line.
     */
    @Test
    fun dueDelayHandedBackByShutdownNowCancelsCoroutine() {
        val pool = pools.pool(1)
        val cause = AtomicReference<Throwable>()
        val hold = CountDownLatch(1)
        val scope = kotlinx.coroutines.CoroutineScope(SupervisorJob())
        val child = AtomicReference<Job>()
        scope.launch(pool.asCoroutineDispatcher()) {
            child.set(launch(start = CoroutineStart.UNDISPATCHED) {
                try {
                    delay(1)
                } catch (e: CancellationException) {
                    cause.set(e)
                    throw e
                }
            })
            try { hold.await() } catch (stopped: InterruptedException) { /* shutdownNow */ }
        }
        awaitStats(pool, "due delay in line behind the parent") { it.waiting() == 1 && it.busy() == 1 }
        val handedBack = pool.shutdownNow()
        assertThat(handedBack).hasSize(1)
        val completed = kotlinx.coroutines.runBlocking { withTimeoutOrNull(5_000) { child.get().join() } != null }
        assertThat(completed).isTrue()
        assertThat(cause.get()).isNotNull()
        assertThat(cause.get().causes().any { it is PoolClosedException }).isTrue()
    }

    /** Not-due delay under shutdown(): cancelled with PoolClosedException; reboot then works. */
    @Test
    fun notDueDelayCancelledByShutdownThenRebootWorks() {
        val pool = pools.pool(2)
        val cause = AtomicReference<Throwable>()
        pools.runBlocking {
            val started = CompletableDeferred<Unit>()
            val job = launch(pool.asCoroutineDispatcher()) {
                try {
                    started.complete(Unit)
                    delay(60_000)
                } catch (e: CancellationException) {
                    cause.set(e)
                    throw e
                }
            }
            started.await()
            awaitStats(pool, "suspended") { it.busy() == 0 }
            pool.shutdown()
            withTimeout(5_000) { job.join() }
            assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue()
            pool.reboot()
            val ran = withContext(pool.asCoroutineDispatcher()) { delay(1); pool.isOwnThread() }
            assertThat(ran).isTrue()
        }
        assertThat(cause.get().causes().any { it is PoolClosedException }).isTrue()
    }

    /** A due delay in line under graceful shutdown(): it runs (guarantee 7), the coroutine completes normally. */
    @Test
    fun dueDelayRunsUnderGracefulShutdown() {
        val pool = pools.pool(1)
        val finished = AtomicBoolean()
        val hold = CountDownLatch(1)
        val child = AtomicReference<Job>()
        pools.runBlocking {
            val parent = launch(pool.asCoroutineDispatcher()) {
                child.set(launch(start = CoroutineStart.UNDISPATCHED) {
                    delay(1)
                    finished.set(pool.isOwnThread())
                })
                hold.await()
            }
            awaitStats(pool, "due delay in line behind the parent") { it.waiting() == 1 && it.busy() == 1 }
            pool.shutdown()
            hold.countDown()
            withTimeout(5_000) { parent.join() }
            assertThat(child.get().isCancelled).isFalse()
        }
        assertThat(finished.get()).isTrue()
    }

    /**
     * A coroutine whose resume (a channel receive) waits in line when shutdownNow runs: the unit's task
     * is handed back and nothing tells the coroutine, so it never completes (a due delay in the same
     * place is cancelled instead).
     */
    @Disabled("FAULT: a coroutine's resume waiting in line is handed back by shutdownNow() and the coroutine never completes, not even when cancelled")
    @Test
    fun resumeInLineHandedBackByShutdownNowStillCompletes() {
        val pool = pools.pool(1)
        val channel = Channel<Int>()
        val scope = kotlinx.coroutines.CoroutineScope(SupervisorJob()) // not a child of runBlocking: it may hang
        val suspended = CompletableDeferred<Unit>()
        val job = scope.launch(pool.asCoroutineDispatcher()) {
            suspended.complete(Unit)
            channel.receive()
        }
        pools.runBlocking {
            suspended.await()
            awaitStats(pool, "suspended") { it.busy() == 0 }
            pools.occupy(pool, 1)
            launch(Dispatchers.IO) { channel.send(1) }
            awaitStats(pool, "resume in line") { it.waiting() == 1 }
        }
        val handedBack = pool.shutdownNow()
        assertThat(handedBack).hasSize(1)
        job.cancel()
        val completed = kotlinx.coroutines.runBlocking { withTimeoutOrNull(3_000) { job.join() } != null }
        assertThat(completed).describedAs("coroutine completed after shutdownNow handed back its resume").isTrue()
    }

    /** Dispatch while shutting down: never throws, never drops. */
    @Test
    fun dispatchDuringShutdownCompletesSomewhere() {
        val pool = pools.pool(2)
        pools.runBlocking {
            val jobs = List(200) { i ->
                launch(pool.asCoroutineDispatcher()) { if (i % 2 == 0) yield() else delay(1) }
            }
            pool.shutdown()
            withTimeout(10_000) { jobs.forEach { it.join() } }
        }
        assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue()
    }
}
