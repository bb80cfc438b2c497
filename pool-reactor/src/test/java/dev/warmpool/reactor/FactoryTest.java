package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/** Issue 12: one line makes Reactor's bounded-elastic schedulers warmpool-backed. */
class FactoryTest {
  @AfterEach
  void reset() {
    Schedulers.resetFactory();
  }

  @Test
  void boundedElasticAndItsOperatorsRunOnWarmpoolAfterSetFactory() {
    Schedulers.setFactory(PoolSchedulers.factory());
    Scheduler be = Schedulers.boundedElastic();
    String thread = Mono.fromCallable(() -> Thread.currentThread().getName())
        .subscribeOn(be).block(Duration.ofSeconds(10));
    assertThat(thread).startsWith("boundedElastic-"); // Reactor's thread factory names the workers
    Boolean onAWarmpoolWorker = Mono.fromCallable(() -> Arrays.stream(
            Thread.currentThread().getStackTrace())
        .anyMatch(f -> f.getClassName().equals("dev.warmpool.Worker")))
        .subscribeOn(be).block(Duration.ofSeconds(10));
    assertThat(onAWarmpoolWorker).as("the task ran on a warmpool worker").isTrue();
    // an operator that defaults to boundedElastic()
    assertThat(Flux.range(1, 3).collectList().flatMap(l -> Mono.just(l.size()))
        .subscribeOn(Schedulers.boundedElastic()).block(Duration.ofSeconds(10))).isEqualTo(3);
  }

  @Test
  void newBoundedElasticMapsThreadCapQueuedTaskCapAndTtl() {
    Schedulers.setFactory(PoolSchedulers.factory());
    Scheduler s = Schedulers.newBoundedElastic(3, 7, "mapped", 42);
    try {
      assertThat(s).isInstanceOf(PoolScheduler.class);
      PoolScheduler ps = (PoolScheduler) s;
      assertThat(ps.pool.capacity()).isEqualTo(3);
      assertThat(ps.pool.name()).isEqualTo("mapped");
      assertThat(ps.pool.maxIdle()).isEqualTo(Duration.ofSeconds(42));
      assertThat(ps.pool.isNonblocking()).isFalse();
      assertThat(Scannable.from(s).scan(Scannable.Attr.CAPACITY)).isEqualTo(3);
    } finally {
      s.dispose();
    }
    assertThat(((PoolScheduler) s).pool.isShutdown()).as("dispose closes the owned pool").isTrue();
  }

  @Test
  void resetFactoryRestoresReactorsOwnBoundedElastic() {
    Schedulers.setFactory(PoolSchedulers.factory());
    Schedulers.resetFactory();
    Scheduler s = Schedulers.newBoundedElastic(2, 2, "reset");
    try {
      assertThat(s).isNotInstanceOf(PoolScheduler.class);
    } finally {
      s.dispose();
    }
  }
}
