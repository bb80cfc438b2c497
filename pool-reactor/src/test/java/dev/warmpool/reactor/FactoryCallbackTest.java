package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warmpool.PoolStats;
import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/** Issue 23: {@code PoolSchedulers.factory(onNewPool)} hands every pool it makes to the callback. */
class FactoryCallbackTest {
  private final List<WorkerPool> seen = new CopyOnWriteArrayList<>();
  private final List<PoolStats> statsWhenSeen = new CopyOnWriteArrayList<>();

  @AfterEach
  void reset() {
    Schedulers.resetFactory();
  }

  private void record(WorkerPool pool) {
    seen.add(pool);
    statsWhenSeen.add(pool.stats());
  }

  @Test
  void everyPoolIsHandedToTheCallbackBeforeItRunsATask() {
    Schedulers.Factory factory = PoolSchedulers.factory(this::record);
    Schedulers.setFactory(factory);
    Scheduler a = Schedulers.newBoundedElastic(3, 7, "a", 42);
    // Schedulers.newThreadPerTaskBoundedElastic exists on Java 21+ only: call the factory itself
    Scheduler b = factory.newThreadPerTaskBoundedElastic(2, 5, r -> new Thread(r, "b"));
    try {
      assertThat(seen).containsExactly(((PoolScheduler) a).pool, ((PoolScheduler) b).pool);
      assertThat(seen.get(0).name()).isEqualTo("a");
      for (PoolStats s : statsWhenSeen) {
        assertThat(s.submitted()).as("no task yet").isZero();
        assertThat(s.workers()).as("no thread yet").isZero();
        assertThat(s.workersStarted()).isZero();
      }
      assertThat(Mono.fromCallable(() -> 7).subscribeOn(a).block(Duration.ofSeconds(10))).isEqualTo(7);
      assertThat(seen.get(0).stats().submitted()).isEqualTo(1);
    } finally {
      a.dispose();
      b.dispose();
    }
    assertThat(seen).allSatisfy(p -> assertThat(p.isShutdown()).isTrue());
  }

  @Test
  void theSharedBoundedElasticIsHandedOverOnceOnFirstUse() {
    Schedulers.setFactory(PoolSchedulers.factory(this::record));
    assertThat(seen).as("nothing is made before first use").isEmpty();
    String thread = Mono.fromCallable(() -> Thread.currentThread().getName())
        .subscribeOn(Schedulers.boundedElastic()).block(Duration.ofSeconds(10));
    Mono.fromCallable(() -> 1).subscribeOn(Schedulers.boundedElastic()).block(Duration.ofSeconds(10));
    assertThat(thread).startsWith("boundedElastic-");
    assertThat(seen).hasSize(1);
    assertThat(seen.get(0).name()).isEqualTo("boundedElastic");
    assertThat(seen.get(0).stats().submitted()).isEqualTo(2);
  }

  @Test
  void nullCallbackIsRejectedNamingTheParameter() {
    assertThatThrownBy(() -> PoolSchedulers.factory(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("onNewPool");
  }

  @Test
  void aThrowingCallbackClosesThePoolAndPropagatesFromReactorsCall() {
    IllegalStateException boom = new IllegalStateException("no registry");
    Schedulers.setFactory(PoolSchedulers.factory(pool -> {
      record(pool);
      throw boom;
    }));
    assertThatThrownBy(() -> Schedulers.newBoundedElastic(2, 2, "fails")).isSameAs(boom);
    assertThat(seen).hasSize(1);
    assertThat(seen.get(0).isShutdown()).as("the pool is not leaked").isTrue();
    assertThat(seen.get(0).isTerminated()).as("it never started a thread").isTrue();
    assertThat(seen.get(0).stats().workersStarted()).isZero();
    assertThatThrownBy(() -> Schedulers.boundedElastic()).isSameAs(boom);
    assertThat(seen).hasSize(2);
    assertThat(seen.get(1).isShutdown()).isTrue();
  }

  @Test
  void toStringSaysWhichFactory() {
    assertThat(PoolSchedulers.factory(p -> { })).hasToString("PoolSchedulers.factory(onNewPool)");
    assertThat(PoolSchedulers.factory()).hasToString("PoolSchedulers.factory()");
  }
}
