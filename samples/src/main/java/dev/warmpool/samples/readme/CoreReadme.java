package dev.warmpool.samples.readme;

import static dev.warmpool.samples.readme.Stubs.blockingCall;
import static dev.warmpool.samples.readme.Stubs.poll;
import static dev.warmpool.samples.readme.Stubs.query;
import static dev.warmpool.samples.readme.Stubs.step1;
import static dev.warmpool.samples.readme.Stubs.step2;

import dev.warmpool.PoolStats;
import dev.warmpool.SerialExecutor;
import dev.warmpool.WorkerPool;
import dev.warmpool.kotlin.PoolDispatchers;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import kotlinx.coroutines.CoroutineDispatcher;

/**
 * pool-core/README.md's snippets, region by region ({@code ReadmeSnippetsTest} keeps them equal).
 * The line-deadline and task-decorator recipes run as tests in {@code ReadmeRecipesTest}.
 */
final class CoreReadme {
  private CoreReadme() {}

  static void builder() {
    // snippet:builder
    WorkerPool pool = WorkerPool.builder()
        .name("io")                        // threads io-1, io-2, ...; default "warmpool"
        .capacity(64)                      // seats and threads; default 10 x availableProcessors
        .maxIdle(Duration.ofSeconds(10))   // idle workers retire after this; default 60 s
        .nonblocking(false)                // full pool: wait in line (default); true: reject at once
        .maxWaiting(10_000)                // bound on the waiting line; default 100,000
        .build();
    pool.execute(() -> blockingCall());    // blocks only while all 64 seats are taken
    pool.enqueue(() -> blockingCall());    // never blocks the caller
    SerialExecutor lane = pool.newSerialExecutor();   // ordered, holds no thread while idle
    lane.execute(() -> step1());
    lane.execute(() -> step2());
    pool.scheduleAtFixedRate(() -> poll(), 0, 1, TimeUnit.SECONDS);
    PoolStats stats = pool.stats();
    // end:builder
    pool.shutdownNow();
  }

  static void controlledDelay() {
    // snippet:controlled-delay
    WorkerPool pool = WorkerPool.builder().name("api").capacity(20)
        .controlledDelay(Duration.ofMillis(5), Duration.ofMillis(100)) // target, interval
        .adaptiveLifo(true)                // while the line stands, serve the newest first
        .build();
    // end:controlled-delay
    pool.shutdownNow();
  }

  static void subpools() {
    // snippet:subpools
    WorkerPool io = WorkerPool.builder().name("io").capacity(64).nonblocking(true).build();
    WorkerPool db = io.newSubpool("db", 16);                 // the parent's mode and maxWaiting
    WorkerPool partnerApi = io.newSubpool("partnerApi", 8);  // or newSubpool(name, capacity, nonblocking, maxWaiting)

    db.execute(() -> query());  // at most 16 db tasks at once, at most 64 in all, on io's threads
    partnerApi.stats();         // its own submitted, completed, rejected, waiting, busy
    reactor.core.scheduler.Scheduler reactor = dev.warmpool.reactor.PoolSchedulers.from(db);
    io.reactivex.rxjava3.core.Scheduler rxjava = dev.warmpool.rxjava3.PoolSchedulers.from(db);
    CoroutineDispatcher kotlin = PoolDispatchers.from(db);   // Kotlin: db.asCoroutineDispatcher()
    // end:subpools
    io.shutdownNow();
  }

  static void virtualThreads() {
    // snippet:virtual-threads
    WorkerPool pool = WorkerPool.builder().name("db").capacity(10_000).virtualThreads(true).build();
    // end:virtual-threads
    pool.shutdownNow();
  }
}
