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
import org.junit.jupiter.api.Tag
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
    @ParameterizedTest(name = "withTimeout={0}")
    @ValueSource(booleans = [false, true])
    fun failureInScopeAfterDelayCountedOnce(timeout: Boolean) {
        val seen = ConcurrentLinkedQueue<Throwable>()
        val pool = failurePool(seen = seen)
        val boom = Boom("scope after delay")
        pools.runBlocking {
            launch(pool.asCoroutineDispatcher() + SupervisorJob() + quiet()) {
                if (timeout) {
                    withTimeout(10_000) { delay(20); throw boom }
                } else {
                    // 20 ms: the timer fires after the coroutine suspended (with 1 ms it may beat it and run in place)
                    coroutineScope { delay(20); throw boom }
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

    /**
     * h10: r3's "await rethrow" shape: an async on the pool (or a view) inside a supervisorScope fails,
     * and the pool coroutine awaiting it rethrows the same exception in its own run: one failure.
     */
    @ParameterizedTest(name = "view={0}")
    @ValueSource(booleans = [false, true])
    fun failureRethrownByAwaitCountedOnce(onView: Boolean) {
        val seen = ConcurrentLinkedQueue<Throwable>()
        val pool = failurePool(capacity = 4, seen = seen)
        val target = if (onView) pool.asCoroutineDispatcher().limitedParallelism(2) else pool.asCoroutineDispatcher()
        val boom = Boom("await")
        pools.runBlocking {
            launch(pool.asCoroutineDispatcher() + SupervisorJob() + quiet()) {
                kotlinx.coroutines.supervisorScope {
                    async(target) { throw boom }.await()
                }
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
    fun resumeOfAdmittedCoroutineNeverRejected(path: String) = resumeCase(pools.pool(2, nonblocking = true), path)

    /** The same on a nonblocking subpool of 2 used as a dispatcher of its own (DESIGN section 5: adapters work on subpools). */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = ["yield", "suspendCoroutine", "delay", "channel", "mutex", "childLaunch",
        "nonCancellableYield", "nonCancellableChildLaunch"])
    fun resumeOnNonblockingSubpoolNeverRejected(path: String) {
        val parent = pools.pool(8)
        resumeCase(parent.newSubpool("sub", 2, true, 0), path, parent)
    }

    /** [threads]: the pool whose workers run [pool]'s tasks (the parent, for a subpool). */
    private fun resumeCase(pool: WorkerPool, path: String, threads: WorkerPool = pool) {
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
        fun check() = if (threads.isOwnThread()) onPool.incrementAndGet() else offPool.incrementAndGet()
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
        assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue()
        val s = pool.stats()
        assertThat(s.submitted()).describedAs("exact: %s, %d handed back", s, handedBack.size)
            .isEqualTo(s.completed() + s.failed() + handedBack.size)
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
     * A coroutine whose resume (a channel receive) waits in line when shutdownNow runs: shutdownNow
     * hands back its unit (CoroutineUnit.onCancel is a no-op and nothing else tells the coroutine), so
     * unless the caller runs the returned task it never completes, not even after cancel(); a due
     * delay in the same place is cancelled instead (DelayedResume.onCancel).
     */
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
        val gate = TestPools.Gate() // not opened by pools.runBlocking: it must hold the seat through shutdownNow
        kotlinx.coroutines.runBlocking {
            suspended.await()
            awaitStats(pool, "suspended") { it.busy() == 0 }
            gate.occupy(pool, 1)
            launch(Dispatchers.IO) { channel.send(1) }
            awaitStats(pool, "resume in line") { it.waiting() == 1 }
        }
        val handedBack = pool.shutdownNow() // hands back the coroutine's unit (its resume)
        gate.open()
        job.cancel()
        val completed = kotlinx.coroutines.runBlocking { withTimeoutOrNull(3_000) { job.join() } != null }
        assertThat(completed).describedAs("coroutine completed after shutdownNow (%d tasks handed back)", handedBack.size).isTrue()
    }

    /**
     * h10: the resume handed back by shutdownNow finishes on the fallback, cancelled with a
     * PoolClosedException cause; running the handed-back task afterwards (as its caller may) does not
     * run the coroutine's block a second time.
     */
    @Test
    fun handedBackResumeFinishesOnFallbackOnceEvenIfCallerRunsIt() {
        val pool = pools.pool(1)
        val channel = Channel<Int>()
        val cause = AtomicReference<Throwable>()
        val resumedOn = ConcurrentLinkedQueue<Thread>()
        val scope = kotlinx.coroutines.CoroutineScope(SupervisorJob())
        val suspended = CompletableDeferred<Unit>()
        val job = scope.launch(pool.asCoroutineDispatcher()) {
            suspended.complete(Unit)
            try {
                channel.receive()
            } finally {
                resumedOn.add(Thread.currentThread())
            }
        }
        job.invokeOnCompletion { cause.set(it) }
        val gate = TestPools.Gate()
        kotlinx.coroutines.runBlocking {
            suspended.await()
            awaitStats(pool, "suspended") { it.busy() == 0 }
            gate.occupy(pool, 1)
            launch(Dispatchers.IO) { channel.send(1) }
            awaitStats(pool, "resume in line") { it.waiting() == 1 }
        }
        val handedBack = pool.shutdownNow()
        assertThat(handedBack).hasSize(1)
        gate.open()
        val completed = kotlinx.coroutines.runBlocking { withTimeoutOrNull(5_000) { job.join() } != null }
        assertThat(completed).isTrue()
        assertThat(cause.get().causes().any { it is PoolClosedException }).describedAs("cause %s", cause.get()).isTrue()
        handedBack.forEach { it.run() } // the caller of shutdownNow runs what it got back
        assertThat(resumedOn).hasSize(1)
        assertThat(resumedOn.single()).isNotSameAs(Thread.currentThread())
        assertThat(pool.isOwnThread(resumedOn.single())).isFalse()
    }

    /**
     * h10: the same for a coroutine waiting for a seat of a `limitedParallelism` view when the pool's
     * shutdownNow runs: the view's subpool terminates with the pool and the coroutine completes,
     * cancelled with a PoolClosedException cause, off the pool.
     */
    @Test
    fun coroutineWaitingOnViewAtShutdownNowCompletes() {
        val pool = pools.pool(2)
        val view = pool.asCoroutineDispatcher().limitedParallelism(1)
        val hold = CountDownLatch(1)
        val scope = kotlinx.coroutines.CoroutineScope(SupervisorJob())
        val started = CountDownLatch(1)
        val first = scope.launch(view) { started.countDown(); try { hold.await() } catch (stopped: InterruptedException) { } }
        assertThat(started.await(5, TimeUnit.SECONDS)).isTrue()
        val ran = AtomicBoolean()
        val cause = AtomicReference<Throwable>()
        val second = scope.launch(view) { ran.set(true) }
        second.invokeOnCompletion { cause.set(it) }
        pool.shutdownNow()
        hold.countDown()
        val completed = kotlinx.coroutines.runBlocking { withTimeoutOrNull(5_000) { second.join(); first.join() } != null }
        assertThat(completed).isTrue()
        assertThat(ran.get()).isFalse()
        assertThat(cause.get().causes().any { it is PoolClosedException }).describedAs("cause %s", cause.get()).isTrue()
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

    // ---------------------------------------------------------------- guarantee 8 by default; decorators; thread factories

    /**
     * By default a coroutine failure is reported once, by kotlinx (here its CoroutineExceptionHandler):
     * the worker thread's uncaught-exception handler must not see it too, with or without a task
     * decorator wrapping the pool's tasks (a wrapper hides the task's own interfaces).
     */
    @ParameterizedTest(name = "decorated={0}")
    @ValueSource(booleans = [false, true])
    fun failureReportedOnceByDefault(decorated: Boolean) {
        val uncaught = ConcurrentLinkedQueue<Throwable>()
        val handled = ConcurrentLinkedQueue<Throwable>()
        val pool = pools.pool(2) {
            threadFactory { r -> Thread(r).apply { isDaemon = true; setUncaughtExceptionHandler { _, t -> uncaught.add(t) } } }
            if (decorated) taskDecorator { task -> Runnable { task.run() } }
        }
        val boom = Boom("default report")
        pools.runBlocking {
            launch(pool.asCoroutineDispatcher() + SupervisorJob() + CoroutineExceptionHandler { _, t -> handled.add(t) }) {
                delay(1)
                throw boom
            }.join()
        }
        awaitStats(pool, "quiescent") { it.busy() == 0 && it.waiting() == 0 }
        assertThat(handled).containsExactly(boom)
        assertThat(uncaught).describedAs("second report on the worker thread").isEmpty()
        assertThat(pool.stats().failed()).isEqualTo(1)
    }

    /**
     * An admitted coroutine resumes while its old worker is busy and the pool must start a thread for
     * it, but the ThreadFactory throws: guarantee 11 lets that cost only a task that is not yet
     * admitted; an admitted coroutine's resume must not be rejected (guarantee 6).
     */
    @Test
    fun admittedResumeSurvivesThrowingThreadFactory() {
        val failNext = AtomicBoolean()
        val made = java.util.concurrent.ConcurrentHashMap.newKeySet<Thread>()
        val pool = pools.pool(2, nonblocking = true) {
            threadFactory { r ->
                if (failNext.getAndSet(false)) throw IllegalStateException("hostile factory")
                Thread(r).apply { isDaemon = true; made.add(this) }
            }
        }
        val cancelled = AtomicReference<Throwable>()
        val ranOnPool = AtomicBoolean()
        val proceed = CompletableDeferred<Unit>()
        pools.runBlocking {
            val suspended = CompletableDeferred<Unit>()
            val job = launch(pool.asCoroutineDispatcher()) {
                try {
                    suspended.complete(Unit)
                    proceed.await()
                    ranOnPool.set(Thread.currentThread() in made)
                } catch (e: CancellationException) {
                    cancelled.set(e)
                    throw e
                }
            }
            suspended.await()
            awaitStats(pool, "suspended, one idle worker") { it.busy() == 0 && it.workers() == 1 }
            val gate = pools.occupy(pool, 1)
            failNext.set(true)
            proceed.complete(Unit) // the resume needs a second thread: the factory throws
            awaitStats(pool, "resume placed") { it.waiting() == 1 || job.isCompleted || !failNext.get() }
            gate.open()
            job.join()
        }
        assertThat(failNext.get()).describedAs("the factory was asked for the resume's thread").isFalse()
        assertThat(cancelled.get()).describedAs("admitted coroutine rejected by a thread factory failure").isNull()
        assertThat(ranOnPool.get()).isTrue()
    }

    // ---------------------------------------------------------------- storms

    /**
     * 1000 coroutines call withWorker under random timeouts on a small blocking pool: every one is
     * accounted for, no block starts after its caller gave up, and at quiescence the pool is idle with
     * exact counters.
     */
    @Tag("stress")
    @ParameterizedTest(name = "nonblocking={0}")
    @ValueSource(booleans = [false, true])
    fun withWorkerTimeoutStormAccountsEveryCoroutine(nonblocking: Boolean) {
        val pool = pools.pool(3, nonblocking = nonblocking, maxWaiting = 10_000)
        val returned = AtomicInteger()
        val timedOut = AtomicInteger()
        val overloaded = AtomicInteger()
        val lateStarts = AtomicInteger()
        pools.runBlocking(Dispatchers.Default) {
            List(1_000) { i ->
                launch {
                    val gaveUp = AtomicBoolean()
                    try {
                        withTimeout(kotlin.random.Random.nextLong(1, 5)) {
                            pool.withWorker {
                                if (gaveUp.get()) lateStarts.incrementAndGet()
                                if (i % 3 == 0) delay(1) else if (i % 3 == 1) yield() else Thread.sleep(0, 100_000)
                            }
                        }
                        returned.incrementAndGet()
                    } catch (e: kotlinx.coroutines.TimeoutCancellationException) {
                        gaveUp.set(true)
                        timedOut.incrementAndGet()
                    } catch (e: PoolOverloadedException) {
                        gaveUp.set(true)
                        overloaded.incrementAndGet()
                    }
                }
            }.forEach { it.join() }
        }
        assertThat(returned.get() + timedOut.get() + overloaded.get()).isEqualTo(1_000)
        assertThat(lateStarts.get()).isZero()
        awaitStats(pool, "quiescent") { it.busy() == 0 && it.waiting() == 0 }
        val s = pool.stats()
        assertThat(s.submitted()).describedAs("exact: %s", s).isEqualTo(s.completed() + s.failed())
        assertThat(s.workersStarted() - s.workersExpired() - s.workersStopped()).isEqualTo(s.workers().toLong())
    }

    /** A view's bound holds while the pool is resized up and down under it, many times. */
    @Tag("stress")
    @Test
    fun viewBoundHoldsUnderResizeStorm() {
        val pool = pools.pool(4)
        val view = pool.asCoroutineDispatcher().limitedParallelism(3)
        val running = AtomicInteger()
        val max = AtomicInteger()
        val stop = AtomicBoolean()
        val resizer = Thread {
            var i = 0
            while (!stop.get()) pool.resize(if (i++ % 2 == 0) 16 else 2)
        }.apply { start() }
        try {
            pools.runBlocking {
                List(2_000) { i ->
                    launch(view) {
                        max.accumulateAndGet(running.incrementAndGet()) { a, b -> maxOf(a, b) }
                        if (i % 2 == 0) Thread.sleep(0, 50_000)
                        running.decrementAndGet()
                        if (i % 3 == 0) delay(1) else yield() // resumes: by the view's timer task, by its lane
                        max.accumulateAndGet(running.incrementAndGet()) { a, b -> maxOf(a, b) }
                        Thread.sleep(0, 20_000)
                        running.decrementAndGet()
                    }
                }.forEach { it.join() }
            }
        } finally {
            stop.set(true)
            resizer.join()
        }
        assertThat(max.get()).isLessThanOrEqualTo(3)
        pool.resize(4)
        awaitStats(pool, "quiescent") { it.busy() == 0 && it.waiting() == 0 }
        val s = pool.stats()
        assertThat(s.submitted()).describedAs("exact: %s", s).isEqualTo(s.completed() + s.failed())
    }

    /** Nonblocking pool flooded by launches: each coroutine runs on the pool or is rejected, counters exact. */
    @Tag("stress")
    @Test
    fun launchFloodOnNonblockingPoolAccountsEveryCoroutine() {
        val pool = pools.pool(2, nonblocking = true)
        val ran = AtomicInteger()
        val rejected = AtomicInteger()
        val wrong = AtomicInteger()
        pools.runBlocking(Dispatchers.Default) {
            List(5_000) { i ->
                launch(pool.asCoroutineDispatcher()) {
                    if (!pool.isOwnThread()) wrong.incrementAndGet()
                    if (i % 2 == 0) yield() else delay(1)
                    if (!pool.isOwnThread()) wrong.incrementAndGet()
                    ran.incrementAndGet()
                }.also { job ->
                    job.invokeOnCompletion { c -> if (c?.causes()?.any { it is PoolOverloadedException } == true) rejected.incrementAndGet() }
                }
            }.forEach { it.join() }
        }
        assertThat(wrong.get()).describedAs("body ran off the pool").isZero()
        assertThat(ran.get() + rejected.get()).isEqualTo(5_000)
        awaitStats(pool, "quiescent") { it.busy() == 0 && it.waiting() == 0 }
        val s = pool.stats()
        assertThat(s.submitted()).describedAs("exact: %s", s).isEqualTo(s.completed() + s.failed())
        assertThat(s.rejected()).isEqualTo(rejected.get().toLong())
    }

    /**
     * The dispatching thread is paused inside the task decorator while it submits a withWorker start;
     * the caller is cancelled meanwhile. Once released, the start must be withdrawn at once: the caller
     * completes while the pool is still full, the line empties, and the block never runs.
     */
    @Test
    fun withWorkerCancelledWhileItsStartIsBeingSubmitted() {
        val pauseNext = AtomicBoolean()
        val inDecorator = CountDownLatch(1)
        val release = CountDownLatch(1)
        val pool = pools.pool(1) {
            taskDecorator { task ->
                if (pauseNext.getAndSet(false)) {
                    inDecorator.countDown()
                    release.await(5, TimeUnit.SECONDS)
                }
                task
            }
        }
        val gate = pools.occupy(pool, 1)
        val ran = AtomicBoolean()
        val outcome = AtomicReference<Throwable>()
        pools.runBlocking {
            pauseNext.set(true)
            val caller = launch(Dispatchers.IO) {
                try {
                    pool.withWorker { ran.set(true) }
                } catch (e: Throwable) {
                    outcome.set(e)
                    throw e
                }
            }
            withContext(Dispatchers.IO) { assertThat(inDecorator.await(5, TimeUnit.SECONDS)).isTrue() }
            caller.cancel()
            release.countDown()
            withTimeout(5_000) { caller.join() } // while the gate still holds the only seat
            awaitStats(pool, "withdrawn start left the line") { it.waiting() == 0 }
            gate.open()
            awaitStats(pool, "quiescent") { it.busy() == 0 && it.waiting() == 0 }
        }
        assertThat(ran.get()).isFalse()
        assertThat(outcome.get()).isInstanceOf(CancellationException::class.java)
        val s = pool.stats()
        assertThat(s.submitted()).describedAs("exact: %s", s).isEqualTo(s.completed() + s.failed())
    }

    /**
     * A coroutine admitted before shutdown() stays suspended (on a channel) while the pool terminates
     * and is rebooted; its resume on the open pool must run there, not be refused as if closed.
     */
    @Test
    fun suspendedCoroutineResumesOnRebootedPool() {
        val pool = pools.pool(2)
        val channel = Channel<Int>()
        val cause = AtomicReference<Throwable>()
        val after = AtomicBoolean()
        pools.runBlocking {
            val suspended = CompletableDeferred<Unit>()
            val job = launch(pool.asCoroutineDispatcher()) {
                try {
                    suspended.complete(Unit)
                    channel.receive()
                    after.set(pool.isOwnThread())
                } catch (e: CancellationException) {
                    cause.set(e)
                    throw e
                }
            }
            suspended.await()
            awaitStats(pool, "suspended") { it.busy() == 0 }
            pool.shutdown()
            assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue()
            pool.reboot()
            channel.send(1)
            withTimeout(5_000) { job.join() }
        }
        assertThat(cause.get()).describedAs("admitted coroutine refused by a rebooted, open pool").isNull()
        assertThat(after.get()).isTrue()
    }

    /**
     * Core check behind [resumeInLineHandedBackByShutdownNowStillCompletes]: a lane that was admitted
     * once, gave its seat back, and has a task waiting in line when shutdownNow runs must have that
     * task handed back (guarantee 9) or run; it must not vanish.
     */
    @ParameterizedTest(name = "admittedBefore={0}")
    @ValueSource(booleans = [false, true])
    fun laneTaskWaitingAtShutdownNowIsHandedBack(admittedBefore: Boolean) {
        val pool = pools.pool(1)
        val lane = pool.newSerialExecutor()
        if (admittedBefore) {
            val first = CountDownLatch(1)
            lane.execute { first.countDown() }
            assertThat(first.await(5, TimeUnit.SECONDS)).isTrue()
            awaitStats(pool, "lane gave its seat back") { it.busy() == 0 }
        }
        pools.occupy(pool, 1)
        val ran = AtomicBoolean()
        val task = Runnable { ran.set(true) }
        lane.execute(task)
        awaitStats(pool, "lane in line") { it.waiting() == 1 }
        val handedBack = pool.shutdownNow()
        assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue()
        assertThat(handedBack.contains(task) || ran.get()).describedAs("handed back %s, ran %s", handedBack, ran.get()).isTrue()
    }

    /**
     * A view of a view (`limitedParallelism` on a view) after the pool is shut down and rebooted,
     * used before the outer view is: it must work again like the outer view does.
     */
    @Test
    fun viewOfViewWorksAfterReboot() {
        val pool = pools.pool(4)
        val outer = pool.asCoroutineDispatcher().limitedParallelism(3)
        val inner = outer.limitedParallelism(1)
        assertThat(kotlinx.coroutines.runBlocking { withContext(inner) { pool.isOwnThread() } }).isTrue()
        pool.shutdown()
        assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue()
        pool.reboot()
        val outcome = runCatching { kotlinx.coroutines.runBlocking { withContext(inner) { pool.isOwnThread() } } }
        assertThat(outcome.exceptionOrNull()).describedAs("inner view after reboot").isNull()
        assertThat(outcome.getOrNull()).isTrue()
        assertThat(maxConcurrency(pool, inner, 1, coroutines = 3)).isEqualTo(1)
    }

    /**
     * A child started UNDISPATCHED on the pool's dispatcher inside a supervisor scope of a coroutine
     * on the pool throws before its first suspension: its body ran on a pool worker, inside the
     * parent's task, yet the parent is not cancelled and the child has no unit yet.
     */
    @Disabled("FAULT: a child started UNDISPATCHED on the pool inside a supervisorScope that throws before suspending is counted 0 times in stats().failed; the explicit failure handler never sees it")
    @Test
    fun undispatchedChildFailureInSupervisorCountedOnce() {
        val seen = ConcurrentLinkedQueue<Throwable>()
        val pool = failurePool(seen = seen)
        val boom = Boom("undispatched child")
        val handled = ConcurrentLinkedQueue<Throwable>()
        pools.runBlocking {
            launch(pool.asCoroutineDispatcher() + CoroutineExceptionHandler { _, t -> handled.add(t) }) {
                kotlinx.coroutines.supervisorScope {
                    launch(start = CoroutineStart.UNDISPATCHED) { throw boom }
                }
            }.join()
        }
        assertThat(handled).containsExactly(boom)
        assertCountedOnce(pool, seen, boom)
    }

    /**
     * A withWorker caller suspended in line (blocking pool, every seat busy) when shutdownNow runs:
     * a waiting caller wakes with PoolClosedException (guarantee 9; section 6: withWorker is the
     * admission API). Its start is handed back and nothing tells the caller.
     */
    @Test
    fun withWorkerWaitingAtShutdownNowWakesWithPoolClosed() {
        val pool = pools.pool(1)
        val gate = TestPools.Gate()
        gate.occupy(pool, 1)
        val ran = AtomicBoolean()
        val outcome = AtomicReference<Throwable>()
        val scope = kotlinx.coroutines.CoroutineScope(SupervisorJob() + Dispatchers.IO)
        val caller = scope.launch {
            try {
                pool.withWorker { ran.set(true) }
            } catch (e: Throwable) {
                outcome.set(e)
            }
        }
        awaitStats(pool, "withWorker in line") { it.waiting() == 1 }
        val handedBack = pool.shutdownNow()
        gate.open()
        val woke = kotlinx.coroutines.runBlocking { withTimeoutOrNull(3_000) { caller.join() } != null }
        caller.cancel()
        assertThat(woke).describedAs("caller woke after shutdownNow (%d handed back)", handedBack.size).isTrue()
        assertThat(outcome.get()).isInstanceOf(PoolClosedException::class.java)
        assertThat(ran.get()).isFalse()
    }

    /**
     * A coroutine waiting for its admission in line (blocking pool, every seat busy) when shutdownNow
     * runs: a closed pool must refuse it (cancelled, PoolClosedException cause, finishing on the
     * fallback) or let it run; its unit is handed back instead and the coroutine never completes.
     */
    @Test
    fun coroutineWaitingForAdmissionAtShutdownNowCompletes() {
        val pool = pools.pool(1)
        val gate = TestPools.Gate()
        gate.occupy(pool, 1)
        val scope = kotlinx.coroutines.CoroutineScope(SupervisorJob())
        val job = scope.launch(pool.asCoroutineDispatcher()) { }
        awaitStats(pool, "coroutine in line") { it.waiting() == 1 }
        val handedBack = pool.shutdownNow()
        gate.open()
        job.cancel()
        val completed = kotlinx.coroutines.runBlocking { withTimeoutOrNull(3_000) { job.join() } != null }
        assertThat(completed).describedAs("coroutine completed after shutdownNow (%d handed back)", handedBack.size).isTrue()
    }
}
