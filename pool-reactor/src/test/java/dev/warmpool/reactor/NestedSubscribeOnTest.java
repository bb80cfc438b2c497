package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.test.StepVerifier;

/**
 * Contract 7: Reactor issue 1992. With {@code Schedulers.newBoundedElastic(1, ...)} a nested
 * {@code subscribeOn} never completes: each worker is pinned to a backing thread, and the outer
 * worker keeps the only one. A serial lane holds a thread only while it has tasks, so the inner lane
 * waits in line until the outer task returns.
 */
class NestedSubscribeOnTest {
  private final WorkerPool pool = WorkerPool.builder().name("one").capacity(1).build();
  private final Scheduler scheduler = PoolSchedulers.from(pool);

  @AfterEach
  void close() {
    scheduler.dispose();
    pool.shutdownNow();
    pool.close();
  }

  @Test
  void nestedSubscribeOnOnAOneWorkerBlockingPoolDoesNotDeadlock() {
    Mono<Integer> twice = Mono.fromSupplier(() -> 1).subscribeOn(scheduler).subscribeOn(scheduler);
    StepVerifier.create(twice).expectNext(1).expectComplete().verify(Duration.ofSeconds(10));
  }

  @Test
  void deeplyNestedSubscribeOnAndPublishOnOnAOneWorkerBlockingPoolComplete() {
    Flux<Integer> nested = Flux.range(1, 50)
        .subscribeOn(scheduler)
        .flatMap(i -> Mono.fromSupplier(() -> i)
            .subscribeOn(scheduler)
            .publishOn(scheduler)
            .subscribeOn(scheduler))
        .subscribeOn(scheduler);
    List<Integer> expected = IntStream.rangeClosed(1, 50).boxed().collect(Collectors.toList());
    StepVerifier.create(nested.collectSortedList())
        .assertNext(list -> assertThat(list).isEqualTo(expected))
        .expectComplete()
        .verify(Duration.ofSeconds(10));
    assertThat(pool.stats().workersStarted()).isEqualTo(1);
  }
}
