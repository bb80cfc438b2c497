package dev.warmpool.kotlin

import dev.warmpool.PoolClosedException
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import java.util.concurrent.atomic.AtomicReference
import kotlinx.coroutines.CompletableJob
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.InternalForInheritanceCoroutinesApi
import kotlinx.coroutines.Job
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout

/**
 * Review r7: a unit's first dispatch (a plain pool task, `PoolDispatcher.admit`) racing a reboot.
 * `admit` registers the termination watch ([PoolDispatcher] `watchTermination`, once per generation)
 * before it enqueues. If the pool is terminated then, the hook on that (completed) generation runs at
 * once and clears `watching`; if the pool is rebooted before the enqueue, the unit waits in the new
 * generation's line with no hook on that generation. A `shutdownNow` then hands the unit back, the
 * pool terminates, and nobody refuses the block: the coroutine is neither resumed nor cancelled
 * (README rule: a rejected or handed-back dispatch surfaces as the job's failure). The dispatch is
 * held between the two steps by a job whose `parent` read (the admission check) runs the reboot.
 *
 * Fixed by k6: a sweep refuses only what its task handle says was handed back (or, without a
 * handle, while the pool reads terminated), every dispatch checks for a watching hook after it
 * queued its block, and a hook that finds a block still waiting watches the next generation.
 */
@Timeout(30)
class R7FirstDispatchTest {
    private val pools = TestPools()

    @AfterEach
    fun tearDown() = pools.close()

    @Test
    fun aFirstDispatchEnqueuedAfterARacingRebootIsRefusedWhenShutdownNowHandsItBack() {
        val pool = pools.pool(1)
        val d = pool.asCoroutineDispatcher()
        pool.shutdown()
        assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue()
        val ran = AtomicInteger()
        val ranOnce = CountDownLatch(1)
        val block = Runnable {
            ran.incrementAndGet()
            ranOnce.countDown()
        }
        val gate = TestPools.Gate()
        val job = HeldJob {
            pool.reboot() // a caller reboots the pool while the dispatch is on its way
            gate.occupy(pool, 1) // the first dispatch waits in the new generation's line
        }
        d.dispatch(job, block)
        await().atMost(java.time.Duration.ofSeconds(5)).until { pool.stats().waiting() == 1 }
        pool.shutdownNow() // hands the unit back; the gate's task is interrupted and ends
        gate.open()
        assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue()
        assertThat(ranOnce.await(5, TimeUnit.SECONDS))
            .describedAs("the handed-back block was refused (its job cancelled, the block run on the fallback)").isTrue()
        assertThat(job.cancels).hasSize(1)
        assertThat(job.cancels.single()?.cause).isInstanceOf(PoolClosedException::class.java)
        assertThat(ran.get()).isEqualTo(1)
    }

    /**
     * F5 (b), fixed by k6: the previous generation's hook runs after a reboot (a `whenTerminated` dependent
     * registered later runs first, and reboots the pool: legal, the pool is terminated) and sweeps a
     * unit whose first dispatch waits, accepted, in the new generation's line: its job is cancelled
     * with "shut down (shutdownNow) while this coroutine waited", its block run on the fallback,
     * although nothing refused or handed it back; when its turn comes the pool runs nothing.
     */
    @Test
    fun anOldGenerationsSweepNeverRefusesAFirstDispatchWaitingAfterAReboot() {
        val pool = pools.pool(1)
        val d = pool.asCoroutineDispatcher()
        val first = CountDownLatch(1)
        d.dispatch(HeldJob { }, Runnable { first.countDown() }) // registers the hook on this generation
        assertThat(first.await(5, TimeUnit.SECONDS)).isTrue()
        val onPool = CountDownLatch(1)
        val ranOn = CopyOnWriteArrayList<String>()
        val job = HeldJob { }
        val gate = TestPools.Gate()
        val rebooted = CountDownLatch(1)
        pool.whenTerminated().thenRun {
            pool.reboot()
            gate.occupy(pool, 1)
            d.dispatch(job, Runnable {
                ranOn += Thread.currentThread().name
                onPool.countDown()
            })
            rebooted.countDown()
        }
        pool.shutdown()
        assertThat(rebooted.await(5, TimeUnit.SECONDS)).isTrue()
        await().atMost(java.time.Duration.ofSeconds(5)).until { pool.stats().waiting() == 1 || job.cancels.isNotEmpty() }
        gate.open()
        assertThat(onPool.await(5, TimeUnit.SECONDS)).isTrue()
        assertThat(job.cancels).describedAs("cancellations of a job whose dispatch was accepted; ran on %s", ranOn).isEmpty()
    }

    /**
     * k6 (F5): the old generation's hook, run after the reboot, finds the first dispatch waiting in
     * the new generation's line and watches that generation, which the dispatch itself did not (a
     * hook was pending when it checked): the new generation's `shutdownNow` hands the block back, and
     * it is refused once, so the coroutine completes.
     */
    @Test
    fun aFirstDispatchSparedByAnOldGenerationsSweepIsRefusedWhenTheNextGenerationHandsItBack() {
        val pool = pools.pool(1)
        val d = pool.asCoroutineDispatcher()
        val oldHookRan = CountDownLatch(1)
        pool.whenTerminated().thenRun { oldHookRan.countDown() } // registered first, so it runs after the dispatcher's
        val first = CountDownLatch(1)
        d.dispatch(HeldJob { }, Runnable { first.countDown() }) // registers the dispatcher's hook
        assertThat(first.await(5, TimeUnit.SECONDS)).isTrue()
        val ran = AtomicInteger()
        val ranOnce = CountDownLatch(1)
        val job = HeldJob { }
        val gate = pools.occupy(pool, 0)
        val rebooted = CountDownLatch(1)
        pool.whenTerminated().thenRun {
            pool.reboot()
            gate.occupy(pool, 1)
            d.dispatch(job, Runnable {
                ran.incrementAndGet()
                ranOnce.countDown()
            })
            rebooted.countDown()
        }
        pool.shutdown()
        assertThat(rebooted.await(5, TimeUnit.SECONDS)).isTrue()
        assertThat(oldHookRan.await(5, TimeUnit.SECONDS)).isTrue()
        assertThat(job.cancels).describedAs("cancelled by the old generation's sweep").isEmpty()
        assertThat(pool.stats().waiting()).isEqualTo(1)
        pool.shutdownNow() // hands the block back
        gate.open()
        assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue()
        assertThat(ranOnce.await(5, TimeUnit.SECONDS))
            .describedAs("the handed-back block was refused (its job cancelled, the block run on the fallback)").isTrue()
        assertThat(job.cancels).hasSize(1)
        assertThat(job.cancels.single()?.cause).isInstanceOf(PoolClosedException::class.java)
        assertThat(ran.get()).isEqualTo(1)
    }

    /**
     * k6 (F5): the same race for a coroutine's resume, which waits in its admitted lane (no task
     * handle): the old generation's hook, run after the reboot, leaves it alone, and it resumes on
     * the pool (README rule: a resume of an admitted coroutine is never rejected).
     */
    @Test
    fun anOldGenerationsSweepNeverRefusesAResumeWaitingInItsLaneAfterAReboot() {
        val pool = pools.pool(1)
        val d = pool.asCoroutineDispatcher()
        val oldHookRan = CountDownLatch(1)
        pool.whenTerminated().thenRun { oldHookRan.countDown() }
        runBlocking { withContext(d) { } } // registers the dispatcher's hook
        val gate = pools.occupy(pool, 0)
        val channel = Channel<Unit>(1)
        val suspended = CountDownLatch(1)
        val resumed = CountDownLatch(1)
        val resumedOn = AtomicReference<String>()
        val rebooted = CountDownLatch(1)
        lateinit var job: Job
        pool.whenTerminated().thenRun {
            pool.reboot()
            job = CoroutineScope(d).launch {
                suspended.countDown()
                channel.receive()
                resumedOn.set(Thread.currentThread().name)
                resumed.countDown()
            }
            assertThat(suspended.await(5, TimeUnit.SECONDS)).isTrue()
            gate.occupy(pool, 1) // its one seat is free again only once the coroutine has suspended
            channel.trySend(Unit) // the resume waits in the coroutine's lane
            awaitStats(pool, "the resume waits in line") { it.waiting() == 1 }
            rebooted.countDown()
        }
        pool.shutdown()
        assertThat(rebooted.await(5, TimeUnit.SECONDS)).isTrue()
        assertThat(oldHookRan.await(5, TimeUnit.SECONDS)).isTrue()
        gate.open()
        assertThat(resumed.await(5, TimeUnit.SECONDS)).describedAs("the resume ran; cancelled: %s", job.isCancelled).isTrue()
        assertThat(job.isCancelled).isFalse()
        assertThat(resumedOn.get()).describedAs("resumed on a worker").startsWith(pool.name() + "-")
    }

    /**
     * k6 (F5): the same race for a `withWorker` start waiting in the new generation's line: the old
     * generation's hook leaves it alone, and the block runs on a worker instead of throwing a
     * [PoolClosedException] for a shutdown that did not hand it back.
     */
    @Test
    fun anOldGenerationsSweepNeverRefusesAWithWorkerStartWaitingAfterAReboot() {
        val pool = pools.pool(1)
        val oldHookRan = CountDownLatch(1)
        pool.whenTerminated().thenRun { oldHookRan.countDown() }
        runBlocking { withContext(pool.asCoroutineDispatcher()) { } } // registers the dispatcher's hook
        val gate = pools.occupy(pool, 0)
        val rebooted = CountDownLatch(1)
        lateinit var ranOn: Deferred<String>
        pool.whenTerminated().thenRun {
            pool.reboot()
            gate.occupy(pool, 1)
            ranOn = CoroutineScope(Dispatchers.Unconfined).async { pool.withWorker { Thread.currentThread().name } }
            awaitStats(pool, "the start waits in line") { it.waiting() == 1 }
            rebooted.countDown()
        }
        pool.shutdown()
        assertThat(rebooted.await(5, TimeUnit.SECONDS)).isTrue()
        assertThat(oldHookRan.await(5, TimeUnit.SECONDS)).isTrue()
        gate.open()
        val name = runBlocking { withTimeout(5_000) { ranOn.await() } }
        assertThat(name).describedAs("ran on a worker").startsWith(pool.name() + "-")
    }

    /** HELD (control): the same without the reboot race: the sweep refuses the handed-back block. */
    @Test
    fun heldAFirstDispatchHandedBackByShutdownNowIsRefused() {
        val pool = pools.pool(1)
        val d = pool.asCoroutineDispatcher()
        val ranOnce = CountDownLatch(1)
        val gate = pools.occupy(pool, 1)
        val job = HeldJob { }
        d.dispatch(job, Runnable { ranOnce.countDown() })
        await().atMost(java.time.Duration.ofSeconds(5)).until { pool.stats().waiting() == 1 }
        pool.shutdownNow()
        gate.open()
        assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue()
        assertThat(ranOnce.await(5, TimeUnit.SECONDS)).isTrue()
        assertThat(job.cancels).hasSize(1)
    }

    /** A job whose first `parent` read runs [hold], and which records its cancellations. */
    @OptIn(InternalForInheritanceCoroutinesApi::class, ExperimentalCoroutinesApi::class)
    private class HeldJob(private val inner: CompletableJob = Job(), hold: () -> Unit) : Job by inner {
        private var hold: (() -> Unit)? = hold
        val cancels = CopyOnWriteArrayList<CancellationException?>()

        override val parent: Job?
            get() {
                hold?.also { hold = null }?.invoke()
                return inner.parent
            }

        override fun cancel(cause: CancellationException?) {
            cancels += cause
            inner.cancel(cause)
        }

        @Suppress("UNCHECKED_CAST")
        override fun <E : CoroutineContext.Element> get(key: CoroutineContext.Key<E>): E? = if (key == Job) this as E else null

        override fun <R> fold(initial: R, operation: (R, CoroutineContext.Element) -> R): R = operation(initial, this)

        override fun minusKey(key: CoroutineContext.Key<*>): CoroutineContext = if (key == Job) EmptyCoroutineContext else this
    }
}
