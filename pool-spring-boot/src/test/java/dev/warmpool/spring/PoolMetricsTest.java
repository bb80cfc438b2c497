package dev.warmpool.spring;

import static dev.warmpool.spring.Runners.warmpool;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.warmpool.WorkerPool;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/** With a {@code MeterRegistry} bean, every pool is bound with {@code WorkerPoolMetrics} (tag {@code name}). */
class PoolMetricsTest {

  @AfterEach
  void restoreReactor() {
    Schedulers.resetFactory();
  }

  @Test
  void everyPoolBeanIsBoundTaggedWithItsName() {
    warmpool().withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withPropertyValues("warmpool.pools.db.capacity=3", "warmpool.pools.http.capacity=5")
        .run(context -> {
          MeterRegistry registry = context.getBean(MeterRegistry.class);
          assertThat(registry.get("executor.pool.max").tag("name", "db").gauge().value()).isEqualTo(3);
          assertThat(registry.get("executor.pool.max").tag("name", "http").gauge().value()).isEqualTo(5);
          context.getBean("db", WorkerPool.class).submit(() -> {}).get();
          // the meters share a snapshot for up to 100 ms
          await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(
              registry.get("warmpool.submitted").tag("name", "db").functionCounter().count())
              .isEqualTo(1));
        });
  }

  @Test
  void aPoolBeanOfTheApplicationsOwnIsBoundToo() {
    warmpool().withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withBean("own", WorkerPool.class, () -> WorkerPool.builder().name("own").capacity(2).build())
        .run(context -> assertThat(context.getBean(MeterRegistry.class).get("executor.pool.max")
            .tag("name", "own").gauge().value()).isEqualTo(2));
  }

  @Test
  void reactorFactoryPoolsAreBoundMadeBeforeOrAfterTheRegistryExists() {
    warmpool().withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withUserConfiguration(EarlyReactorUser.class)
        .withPropertyValues("warmpool.reactor.bounded-elastic=true").run(context -> {
          MeterRegistry registry = context.getBean(MeterRegistry.class);
          // boundedElastic() was made by a bean while the context started
          assertThat(registry.find("executor.pool.max").tag("name", "boundedElastic").gauge()).isNotNull();
          Scheduler late = Schedulers.newBoundedElastic(3, 10, "late");
          try {
            assertThat(registry.get("executor.pool.max").tag("name", "late").gauge().value()).isEqualTo(3);
          } finally {
            late.dispose();
          }
        });
  }

  @Test
  void taskTimersRecordEveryTaskByDefault() {
    warmpool().withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withPropertyValues("warmpool.pools.db.capacity=3").run(context -> {
          MeterRegistry registry = context.getBean(MeterRegistry.class);
          context.getBean("db", WorkerPool.class).submit(() -> {}).get();
          // the run is timed when the task returns, which may be just after get() returns
          await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            assertThat(registry.get("executor").tag("name", "db").timer().count()).isEqualTo(1);
            assertThat(registry.get("executor.idle").tag("name", "db").timer().count()).isEqualTo(1);
          });
        });
  }

  @Test
  void taskTimersOffRegisterNoTimerAndTimeNoTask() {
    warmpool().withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withUserConfiguration(EarlyReactorUser.class)
        .withPropertyValues("warmpool.pools.db.capacity=3", "warmpool.reactor.bounded-elastic=true",
            "warmpool.metrics.task-timers=false").run(context -> {
          MeterRegistry registry = context.getBean(MeterRegistry.class);
          WorkerPool db = context.getBean("db", WorkerPool.class);
          db.submit(() -> {}).get();
          Schedulers.boundedElastic().schedule(() -> {});
          // the other meters are there; the pool has no task timer at all, so nothing is timed
          assertThat(registry.get("executor.pool.max").tag("name", "db").gauge().value()).isEqualTo(3);
          assertThat(db.taskTimer()).isNull();
          assertThat(registry.find("executor").meters()).isEmpty();
          assertThat(registry.find("executor.idle").meters()).isEmpty();
        });
  }

  @Test
  void aTaskTimersValueThatIsNoBooleanStopsTheStartUpNamingTheKey() {
    warmpool().withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withPropertyValues("warmpool.pools.db.capacity=3", "warmpool.metrics.task-timers=maybe")
        .run(context -> {
          assertThat(context).hasFailed();
          assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("maybe");
          assertThat(context.getStartupFailure()).hasStackTraceContaining("warmpool.metrics.task-timers");
        });
  }

  @Test
  void noRegistryNoMetricsAndNoFailure() {
    warmpool().withPropertyValues("warmpool.pools.db.capacity=3").run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(context).doesNotHaveBean(MeterRegistry.class);
    });
  }

  @Test
  void withoutMicrometerThePoolsStillStart() {
    warmpool().withClassLoader(new FilteredClassLoader("io.micrometer", "dev.warmpool.micrometer"))
        .withPropertyValues("warmpool.pools.db.capacity=3").run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).doesNotHaveBean(PoolMetricsBinder.class);
          assertThat(context.getBean("db", WorkerPool.class).capacity()).isEqualTo(3);
        });
  }

  @Configuration(proxyBeanMethods = false)
  static class EarlyReactorUser {
    @Bean
    Scheduler early() {
      Scheduler s = Schedulers.boundedElastic();
      s.schedule(() -> {});
      return s;
    }
  }
}
