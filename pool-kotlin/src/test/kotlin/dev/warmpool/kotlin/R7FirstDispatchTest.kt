package dev.warmpool.kotlin

import dev.warmpool.PoolClosedException
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableJob
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.InternalForInheritanceCoroutinesApi
import kotlinx.coroutines.Job
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Disabled
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
 */
@Timeout(30)
class R7FirstDispatchTest {
    private val pools = TestPools()

    @AfterEach
    fun tearDown() = pools.close()

    @Test
    @Disabled("R7 fault F5: PoolDispatcher.watchTermination registers on a terminated generation; a first dispatch enqueued after a racing reboot is never swept")
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
     * FAULT: the previous generation's hook runs after a reboot (a `whenTerminated` dependent
     * registered later runs first, and reboots the pool: legal, the pool is terminated) and sweeps a
     * unit whose first dispatch waits, accepted, in the new generation's line: its job is cancelled
     * with "shut down (shutdownNow) while this coroutine waited", its block run on the fallback,
     * although nothing refused or handed it back; when its turn comes the pool runs nothing.
     */
    @Test
    @Disabled("R7 fault F5: PoolDispatcher.sweepHandedBack of an old generation refuses a unit waiting in the rebooted pool's line")
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
