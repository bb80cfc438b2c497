package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * {@code PoolSchedulers.factory(configure, onNewPool)}: every pool the factory makes is built with
 * Reactor's parameters and then the application's own builder settings (a task decorator, which only
 * a builder takes), and handed to {@code onNewPool} before it runs a task.
 */
class FactoryBuilderTest {
  private static final ThreadLocal<String> MARK = new ThreadLocal<>();
  private final List<String> calls = new CopyOnWriteArrayList<>();

  @AfterEach
  void reset() {
    Schedulers.resetFactory();
  }

  private static Runnable marked(Runnable task) {
    return () -> {
      MARK.set("decorated");
      try {
        task.run();
      } finally {
        MARK.remove();
      }
    };
  }

  @Test
  void theBuilderSettingsReachEveryPoolWithReactorsParametersBeforeOnNewPool() {
    Schedulers.Factory factory = PoolSchedulers.factory(builder -> {
      calls.add("configure");
      builder.taskDecorator(FactoryBuilderTest::marked);
    }, pool -> calls.add("onNewPool " + pool.name()));
    Schedulers.setFactory(factory);
    Scheduler a = Schedulers.newBoundedElastic(3, 7, "a", 42);
    Scheduler huge = Schedulers.newBoundedElastic(Integer.MAX_VALUE, 7, "huge", 42);
    try {
      assertThat(calls).containsExactly("configure", "onNewPool a", "configure", "onNewPool huge");
      assertThat(a.toString()).isEqualTo("workerPool(\"a\",capacity=3,maxIdle=42s)");
      assertThat(huge.toString()).startsWith("workerPool(\"huge\",capacity=131072,");
      assertThat(Mono.fromCallable(MARK::get).subscribeOn(a).block(Duration.ofSeconds(10)))
          .isEqualTo("decorated");
      assertThat(Mono.fromCallable(() -> Thread.currentThread().getName()).subscribeOn(a)
          .block(Duration.ofSeconds(10))).startsWith("a-");
    } finally {
      a.dispose();
      huge.dispose();
    }
  }

  @Test
  void aSettingOfTheBuilderCallbackWinsOverReactorsParameter() {
    Schedulers.setFactory(PoolSchedulers.factory(builder -> builder.maxIdle(Duration.ofSeconds(5)),
        pool -> {}));
    Scheduler a = Schedulers.newBoundedElastic(3, 7, "a", 42);
    try {
      assertThat(a.toString()).isEqualTo("workerPool(\"a\",capacity=3,maxIdle=5s)");
    } finally {
      a.dispose();
    }
  }

  @Test
  void aThrowingBuilderCallbackMakesNoPoolAndPropagatesFromReactorsCall() {
    IllegalStateException boom = new IllegalStateException("no decorator");
    List<WorkerPool> made = new CopyOnWriteArrayList<>();
    Schedulers.setFactory(PoolSchedulers.factory(builder -> {
      throw boom;
    }, made::add));
    assertThatThrownBy(() -> Schedulers.newBoundedElastic(2, 2, "x")).isSameAs(boom);
    assertThat(made).isEmpty();
  }

  @Test
  void nullArgumentsAreRejectedNamingTheParameter() {
    assertThatThrownBy(() -> PoolSchedulers.factory(null, pool -> {}))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("configure");
    assertThatThrownBy(() -> PoolSchedulers.factory(builder -> {}, null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("onNewPool");
  }
}
