package dev.warmpool.spring;

import static dev.warmpool.spring.Runners.assertRefused;
import static dev.warmpool.spring.Runners.warmpool;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.schedulers.Schedulers;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** {@code warmpool.rxjava.io}: RxJava's {@code Schedulers.io()} on a pool bean for the context's life. */
class RxJavaIoTest {

  @AfterEach
  void restoreRxJava() {
    dev.warmpool.rxjava3.PoolSchedulers.resetIo();
  }

  private static String ioThread() {
    return Single.fromCallable(() -> Thread.currentThread().getName())
        .subscribeOn(Schedulers.io()).blockingGet();
  }

  @Test
  void ioRunsOnTheNamedPoolWhileTheContextLivesAndIsRxJavasAgainAfter() {
    warmpool().withPropertyValues("warmpool.pools.blocking.capacity=4", "warmpool.rxjava.io=blocking")
        .run(context -> {
          assertThat(ioThread()).startsWith("blocking-");
          // blockingGet returns inside the task, before the pool counts it as completed
          dev.warmpool.WorkerPool pool = context.getBean("blocking", dev.warmpool.WorkerPool.class);
          await().atMost(Duration.ofSeconds(10))
              .untilAsserted(() -> assertThat(pool.stats().completed()).isPositive());
        });
    assertThat(ioThread()).startsWith("RxCachedThreadScheduler");
  }

  @Test
  void aBeanThatUsesIoWhileTheContextStartsAlreadyGetsThePool() {
    warmpool().withPropertyValues("warmpool.pools.blocking.capacity=4", "warmpool.rxjava.io=blocking")
        .withUserConfiguration(EarlyRxJavaUser.class)
        .run(context -> assertThat(context.getBean("earlyIoThread", String.class)).startsWith("blocking-"));
  }

  @Test
  void anUnknownPoolIsRefusedNamingTheKey() {
    warmpool().withPropertyValues("warmpool.pools.blocking.capacity=4", "warmpool.rxjava.io=nosuch")
        .run(context -> assertRefused(context, "warmpool.rxjava.io"));
  }

  @Test
  void unsetLeavesRxJavaAlone() {
    warmpool().withPropertyValues("warmpool.pools.blocking.capacity=4").run(context -> {
      assertThat(context).doesNotHaveBean(RxJavaIo.class);
      assertThat(ioThread()).startsWith("RxCachedThreadScheduler");
    });
  }

  @Configuration(proxyBeanMethods = false)
  static class EarlyRxJavaUser {
    @Bean
    String earlyIoThread() {
      return ioThread();
    }
  }
}
