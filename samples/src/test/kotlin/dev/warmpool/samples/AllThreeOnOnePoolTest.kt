package dev.warmpool.samples

import dev.warmpool.PoolOverloadedException
import dev.warmpool.WorkerPool
import dev.warmpool.kotlin.asCoroutineDispatcher
import dev.warmpool.kotlin.withWorker
import dev.warmpool.rxjava3.PoolTransformers
import io.reactivex.rxjava3.core.Single
import java.time.Duration
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import reactor.core.publisher.Flux
import reactor.core.publisher.Mono
import reactor.core.scheduler.Scheduler as ReactorScheduler
import dev.warmpool.reactor.PoolSchedulers as ReactorSchedulers

/**
 * Issue 12: Reactor, RxJava and coroutine work on one pool at the same time. A probe inside every
 * task checks the capacity bound; at quiescence the pool's counters are exact; and on a saturated
 * nonblocking pool each ecosystem's subscriber receives the rejection.
 */
@Timeout(60)
class AllThreeOnOnePoolTest {
    private val capacity = 4
    private val pool: WorkerPool = WorkerPool.builder().name("shared").capacity(capacity)
        .nonblocking(true).maxIdle(Duration.ofMinutes(1)).build()
    private val running = AtomicInteger()
    private val maxRunning = AtomicInteger()

    @AfterEach
    fun close() {
        pool.shutdownNow()
    }

    private fun probe(): Int {
        val now = running.incrementAndGet()
        maxRunning.accumulateAndGet(now) { a, b -> maxOf(a, b) }
        Thread.sleep(0, 200_000)
        running.decrementAndGet()
        return 1
    }

    private fun isOverload(t: Throwable?): Boolean =
        generateSequence(t) { it.cause }.any { it is PoolOverloadedException }

    @Test
    fun reactorRxJavaAndCoroutinesShareOnePoolWithinItsBoundAndExactCounters() = runBlocking<Unit> {
        val reactor: ReactorScheduler = ReactorSchedulers.from(pool)
        val items = 300
        val ok = AtomicInteger()
        val rejected = AtomicInteger()
        fun outcome(success: Boolean) { if (success) ok.incrementAndGet() else rejected.incrementAndGet() }

        val reactorDone = CompletableFuture.runAsync {
            Flux.range(0, items).flatMap({
                Mono.fromCallable { probe() }.subscribeOn(reactor)
                    .map { true }.onErrorResume({ isOverload(it) }) { Mono.just(false) }
            }, 8).doOnNext { outcome(it) }.blockLast(Duration.ofSeconds(30))
        }
        val rxDone = CompletableFuture.runAsync {
            io.reactivex.rxjava3.core.Flowable.range(0, items).flatMapSingle({
                Single.fromCallable { probe() }.compose(PoolTransformers.subscribeOn(pool))
                    .map { true }.onErrorResumeNext { e ->
                        if (isOverload(e)) Single.just(false) else Single.error(e)
                    }
            }, false, 8).doOnNext { outcome(it) }.blockingLast()
        }
        val coroutines = List(items) {
            async(Dispatchers.Default) {
                outcome(runCatching { pool.withWorker { probe() } }
                    .onFailure { if (!isOverload(it)) throw it }.isSuccess)
            }
        }
        coroutines.awaitAll()
        reactorDone.get(30, TimeUnit.SECONDS)
        rxDone.get(30, TimeUnit.SECONDS)

        assertThat(ok.get() + rejected.get()).isEqualTo(3 * items)
        assertThat(ok.get()).`as`("tasks that ran").isPositive()
        assertThat(maxRunning.get()).`as`("tasks running at once").isLessThanOrEqualTo(capacity)
        var stats = pool.stats()
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
        while ((stats.busy() != 0 || stats.completed() + stats.failed() != stats.submitted())
            && System.nanoTime() < deadline) {
            Thread.onSpinWait()
            stats = pool.stats()
        }
        assertThat(stats.busy()).isZero()
        assertThat(stats.waiting()).isZero()
        assertThat(stats.failed()).isZero()
        assertThat(stats.completed()).`as`("completed (%s)", stats).isEqualTo(stats.submitted())
        assertThat(stats.rejected()).`as`("rejections the pool counted (%s)", stats)
            .isEqualTo(rejected.get().toLong())
    }

    @Test
    fun aSaturatedPoolsRejectionReachesEachEcosystemsSubscriber() = runBlocking<Unit> {
        val hold = CountDownLatch(1)
        val started = CountDownLatch(capacity)
        repeat(capacity) { pool.execute { started.countDown(); hold.await() } }
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue()
        try {
            val reactorError = runCatching {
                Mono.fromCallable { 1 }.subscribeOn(ReactorSchedulers.from(pool)).block(Duration.ofSeconds(10))
            }.exceptionOrNull()
            assertThat(isOverload(reactorError)).`as`("Reactor: %s", reactorError).isTrue()

            val rxError = runCatching {
                Single.fromCallable { 1 }.compose(PoolTransformers.subscribeOn(pool)).blockingGet()
            }.exceptionOrNull()
            assertThat(isOverload(rxError)).`as`("RxJava: %s", rxError).isTrue()

            val kotlinError = runCatching { pool.withWorker { 1 } }.exceptionOrNull()
            assertThat(kotlinError).isInstanceOf(PoolOverloadedException::class.java)

            val dispatched = runCatching {
                withContext(Dispatchers.Default) {
                    withContext(pool.asCoroutineDispatcher()) { 1 }
                }
            }.exceptionOrNull()
            assertThat(isOverload(dispatched)).`as`("withContext: %s", dispatched).isTrue()
        } finally {
            hold.countDown()
        }
    }
}
