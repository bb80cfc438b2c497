package dev.warmpool.samples

import dev.warmpool.PoolOverloadedException
import dev.warmpool.WorkerPool
import dev.warmpool.kotlin.withWorker
import dev.warmpool.rxjava3.PoolTransformers
import io.reactivex.rxjava3.core.Flowable
import io.reactivex.rxjava3.core.Single
import java.time.Duration
import java.util.concurrent.CompletableFuture
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.runBlocking
import reactor.core.publisher.Flux
import reactor.core.publisher.Mono
import dev.warmpool.reactor.PoolSchedulers as ReactorSchedulers

/**
 * Reactor, RxJava and coroutines on one nonblocking pool at the same time (issue 12): 100 lookups
 * each, two at a time per ecosystem (six wanted at once), at most 4 running at once in all; a lookup
 * that finds the pool full fails in its own ecosystem's way and is counted as a rejection, and the
 * pool's counters agree.
 */
object AllThreeSample {
    @JvmStatic
    fun run() {
        val pool = WorkerPool.builder().name("shared").capacity(4).nonblocking(true)
            .maxIdle(Duration.ofSeconds(10)).build()
        val running = AtomicInteger()
        val peak = AtomicInteger()
        val rejected = AtomicInteger()
        fun lookup(): Int {
            peak.accumulateAndGet(running.incrementAndGet()) { a, b -> maxOf(a, b) }
            Thread.sleep(1) // a blocking call
            running.decrementAndGet()
            return 1
        }
        fun isOverload(t: Throwable) = generateSequence(t) { it.cause }.any { it is PoolOverloadedException }

        val reactor = CompletableFuture.supplyAsync {
            Flux.range(0, 100).flatMap({
                Mono.fromCallable { lookup() }.subscribeOn(ReactorSchedulers.from(pool))
                    .onErrorResume({ isOverload(it) }) { rejected.incrementAndGet(); Mono.just(0) }
            }, 2).reduce(0) { a, b -> a + b }.block()!!
        }
        val rx = CompletableFuture.supplyAsync {
            Flowable.range(0, 100).flatMapSingle({
                Single.fromCallable { lookup() }.compose(PoolTransformers.subscribeOn(pool))
                    .onErrorResumeNext { e -> if (isOverload(e)) { rejected.incrementAndGet(); Single.just(0) } else Single.error(e) }
            }, false, 2).reduce(0) { a, b -> a + b }.blockingGet()
        }
        val coroutines = runBlocking {
            (0 until 100).chunked(2).sumOf { pair ->
                pair.map {
                    async(Dispatchers.Default) {
                        try {
                            pool.withWorker { lookup() }
                        } catch (e: PoolOverloadedException) {
                            rejected.incrementAndGet()
                            0
                        }
                    }
                }.awaitAll().sum()
            }
        }
        println("all three on one pool of 4: ran Reactor ${reactor.get()}, RxJava ${rx.get()}, coroutines $coroutines; " +
            "rejected ${rejected.get()} (the pool counted ${pool.stats().rejected()}); at most ${peak.get()} at once")
        pool.close()
        println("all three: ${pool.stats()}")
    }
}
