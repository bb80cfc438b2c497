package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
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

  /**
   * Issue 30, fault 12: Reactor accepts any positive cap and {@code Integer.MAX_VALUE} is its usual
   * "no cap"; the factory threw core's capacity IllegalArgumentException for it. It caps the
   * capacity at core's maximum (the largest capacity the builder accepts) and keeps the queued-task
   * cap as it is (core's {@code maxWaiting} has no upper bound).
   */
  @Test
  void section6_newBoundedElasticWithoutACapGetsCoresMaximumCapacity() {
    Schedulers.setFactory(PoolSchedulers.factory());
    int coresMaximum = PoolSchedulerFactory.MAX_CAPACITY;
    WorkerPool largest = WorkerPool.builder().capacity(coresMaximum).build();
    assertThat(largest.capacity()).as("the factory's cap is one core accepts")
        .isEqualTo(coresMaximum);
    largest.shutdownNow();
    assertThatThrownBy(() -> WorkerPool.builder().capacity(coresMaximum + 1))
        .as("and it is core's maximum").isInstanceOf(IllegalArgumentException.class);
    for (Scheduler s : List.of(
        Schedulers.newBoundedElastic(Integer.MAX_VALUE, Integer.MAX_VALUE, "uncapped"),
        Schedulers.newBoundedElastic(coresMaximum + 1, 5, "just-over"))) {
      try {
        WorkerPool pool = ((PoolScheduler) s).pool;
        assertThat(pool.capacity()).isEqualTo(coresMaximum);
        assertThat(Mono.fromCallable(() -> "ran").subscribeOn(s).block(Duration.ofSeconds(10)))
            .isEqualTo("ran");
      } finally {
        s.dispose();
      }
    }
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
