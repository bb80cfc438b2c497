package dev.warmpool.samples.readme;

import static dev.warmpool.samples.readme.Stubs.blockingCall;
import static dev.warmpool.samples.readme.Stubs.fetch;
import static dev.warmpool.samples.readme.Stubs.httpCall;
import static dev.warmpool.samples.readme.Stubs.ids;
import static dev.warmpool.samples.readme.Stubs.jdbcLookup;
import static dev.warmpool.samples.readme.Stubs.shed;
import static dev.warmpool.samples.readme.Stubs.use;

import dev.warmpool.TaskHandle;
import dev.warmpool.WorkerPool;
import dev.warmpool.reactor.PoolSchedulers;
import dev.warmpool.rxjava3.PoolTransformers;
import io.reactivex.rxjava3.core.Single;
import java.time.Duration;
import java.util.concurrent.Future;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The README's quick starts, region by region (between {@code // snippet:NAME} and
 * {@code // end:NAME}); {@code ReadmeSnippetsTest} fails when the README and these drift apart.
 */
final class ReadmeQuickStart {
  private ReadmeQuickStart() {}

  static void java() throws Exception {
    // snippet:java
    try (WorkerPool pool = WorkerPool.builder()
        .name("io")                        // threads io-1, io-2, ...
        .capacity(64)                      // at most 64 tasks at once (64 seats), at most 64 threads
        .maxIdle(Duration.ofSeconds(10))   // idle workers retire after 10 s
        .build()) {                        // blocking mode: when full, work waits in line
      pool.execute(() -> blockingCall());                  // the caller waits while the pool is full
      TaskHandle handle = pool.enqueue(() -> blockingCall()); // never blocks; handle.cancel() withdraws it
      Future<String> answer = pool.submit(() -> fetch());     // never blocks either
      if (!pool.tryExecute(() -> blockingCall())) {
        // full right now
      }
      System.out.println(pool.stats());
    }
    // end:java
  }

  static void reactor(WorkerPool pool) {
    // snippet:reactor
    Scheduler io = PoolSchedulers.from(pool);          // dev.warmpool.reactor
    Flux.fromIterable(ids)
        .flatMap(id -> Mono.fromCallable(() -> jdbcLookup(id)).subscribeOn(io), 64)
        .subscribe(row -> use(row), error -> shed(error)); // full: onError, caused by the pool's exception

    Schedulers.setFactory(PoolSchedulers.factory());   // or: Reactor's boundedElastic() on warmpool
    // end:reactor
  }

  static void rxjava(WorkerPool pool) {
    // snippet:rxjava
    Single.fromCallable(() -> httpCall())
        .compose(PoolTransformers.subscribeOn(pool))   // dev.warmpool.rxjava3
        .subscribe(v -> use(v), e -> shed(e));         // full: onError(PoolOverloadedException)

    dev.warmpool.rxjava3.PoolSchedulers.installAsIo(pool); // or: RxJava's Schedulers.io() on the pool
    // end:rxjava
  }
}
