package dev.warmpool.samples.readme;

import static dev.warmpool.samples.readme.Stubs.ids;
import static dev.warmpool.samples.readme.Stubs.jdbcLookup;

import dev.warmpool.WorkerPool;
import dev.warmpool.reactor.PoolSchedulers;
import java.time.Duration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/** pool-reactor/README.md's quick start ({@code ReadmeSnippetsTest} keeps them equal). */
final class ReactorReadme {
  private final Flux<String> events = Flux.just("a", "b");

  private String writeToDisk(String event) {
    return event;
  }

  void quickStart() {
    // snippet:quick-start
    WorkerPool pool = WorkerPool.builder()
        .name("io")
        .capacity(64)
        .maxIdle(Duration.ofSeconds(10))
        .build();
    Scheduler io = PoolSchedulers.from(pool);   // workerPool("io",capacity=64,maxIdle=10s)

    // many blocking calls at once, each on a pool worker
    Flux.fromIterable(ids)
        .flatMap(id -> Mono.fromCallable(() -> jdbcLookup(id)).subscribeOn(io), 64)
        .subscribe(row -> System.out.println(row));

    // or move the rest of a chain onto the pool
    events.publishOn(io).map(this::writeToDisk).subscribe();
    // end:quick-start
  }
}
