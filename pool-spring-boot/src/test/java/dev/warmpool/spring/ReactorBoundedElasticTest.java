package dev.warmpool.spring;

import static dev.warmpool.spring.Runners.warmpool;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/** {@code warmpool.reactor.bounded-elastic}: Reactor's bounded-elastic schedulers on warmpool for the context's life. */
class ReactorBoundedElasticTest {

  @AfterEach
  void restoreReactor() {
    Schedulers.resetFactory();
  }

  /** Reactor hands out its cached schedulers wrapped; the wrapper supplies the scheduler it made. */
  static String unwrapped(Scheduler scheduler) {
    return (scheduler instanceof Supplier<?> cached ? cached.get() : scheduler).toString();
  }

  @Test
  void boundedElasticRunsOnWarmpoolWhileTheContextLivesAndIsReactorsAgainAfter() {
    warmpool().withPropertyValues("warmpool.reactor.bounded-elastic=true").run(context -> {
      assertThat(context).hasSingleBean(ReactorBoundedElastic.class);
      assertThat(unwrapped(Schedulers.boundedElastic())).startsWith("workerPool(\"boundedElastic\"");
      String thread = Mono.fromCallable(() -> Thread.currentThread().getName())
          .subscribeOn(Schedulers.boundedElastic()).block(Duration.ofSeconds(5));
      assertThat(thread).startsWith("boundedElastic-");
    });
    assertThat(unwrapped(Schedulers.boundedElastic())).doesNotContain("workerPool");
  }

  @Test
  void aBeanThatTakesBoundedElasticInItsConstructorAlreadyGetsWarmpool() {
    warmpool().withPropertyValues("warmpool.reactor.bounded-elastic=true")
        .withUserConfiguration(EarlyReactorUser.class)
        .run(context -> assertThat(unwrapped(context.getBean(EarlyReactorUser.Holder.class).scheduler))
            .startsWith("workerPool(\"boundedElastic\""));
  }

  @Test
  void newBoundedElasticMapsItsParametersOntoAPool() {
    warmpool().withPropertyValues("warmpool.reactor.bounded-elastic=true").run(context -> {
      Scheduler custom = Schedulers.newBoundedElastic(3, 10, "custom");
      try {
        assertThat(custom.toString()).startsWith("workerPool(\"custom\",capacity=3");
      } finally {
        custom.dispose();
      }
    });
  }

  @Test
  void offOrAbsentLeavesReactorAlone() {
    warmpool().withPropertyValues("warmpool.reactor.bounded-elastic=false").run(context -> {
      assertThat(context).doesNotHaveBean(ReactorBoundedElastic.class);
      assertThat(unwrapped(Schedulers.boundedElastic())).doesNotContain("workerPool");
    });
    warmpool().run(context -> assertThat(context).doesNotHaveBean(ReactorBoundedElastic.class));
  }

  @Configuration(proxyBeanMethods = false)
  static class EarlyReactorUser {
    static final class Holder {
      final Scheduler scheduler;

      Holder(Scheduler scheduler) {
        this.scheduler = scheduler;
      }
    }

    @Bean
    Holder holder() {
      return new Holder(Schedulers.boundedElastic());
    }
  }
}
