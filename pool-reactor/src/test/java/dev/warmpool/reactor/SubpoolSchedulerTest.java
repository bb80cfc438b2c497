package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.test.StepVerifier;

/** Issue 14 for Reactor: {@code PoolSchedulers.from(subpool)} works as on a pool, within both bounds. */
@SuppressWarnings("try") // try (Occupied busy = ...) scopes a full subpool
class SubpoolSchedulerTest {
  private WorkerPool pool;

  @AfterEach
  void close() {
    if (pool != null) {
      pool.shutdownNow();
      pool.close();
    }
  }

  @Test
  void publishOnAndSubscribeOnASubpoolStayWithinItsCapacityOnTheParentsThreads() {
    pool = WorkerPool.builder().name("rs").capacity(4).build();
    WorkerPool db = pool.newSubpool("db", 2);
    Scheduler s = PoolSchedulers.from(db);
    AtomicInteger now = new AtomicInteger();
    AtomicInteger max = new AtomicInteger();
    Flux<Integer> work = Flux.range(0, 200).flatMap(i -> Mono.fromCallable(() -> {
      max.accumulateAndGet(now.incrementAndGet(), Math::max);
      assertThat(Thread.currentThread().getName()).startsWith("rs-");
      Thread.sleep(0, 100_000);
      now.decrementAndGet();
      return i;
    }).subscribeOn(s), 16).publishOn(s);
    StepVerifier.create(work.count()).expectNext(200L).verifyComplete();
    assertThat(max.get()).isBetween(1, 2);
    assertThat(Scannable.from(s).scan(Scannable.Attr.CAPACITY)).isEqualTo(2);
    assertThat(db.stats().workersStarted()).isZero();
  }

  @Test
  void aSaturatedNonblockingSubpoolEndsTheStreamWithItsRejectionWhileAnotherAccepts() throws Exception {
    pool = WorkerPool.builder().name("rs-nb").capacity(4).nonblocking(true).build();
    WorkerPool db = pool.newSubpool("db", 1);
    WorkerPool api = pool.newSubpool("api", 2);
    try (Occupied busy = Occupied.all(db)) {
      StepVerifier.create(Mono.fromCallable(() -> 1).subscribeOn(PoolSchedulers.from(db)))
          .expectErrorSatisfies(e -> assertThat(Stream.iterate(e, x -> x != null, Throwable::getCause))
              .as("the subpool's PoolOverloadedException is the error or its cause")
              .anyMatch(x -> x instanceof PoolOverloadedException
                  && x.getMessage().contains("subpool \"db\"")))
          .verify(Duration.ofSeconds(10));
      StepVerifier.create(Mono.fromCallable(() -> 2).subscribeOn(PoolSchedulers.from(api)))
          .expectNext(2).verifyComplete();
    }
    assertThat(db.stats().rejected()).isEqualTo(1);
  }
}
