package dev.warmpool.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warmpool.PoolOverloadedException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.core.task.TaskRejectedException;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * Adoption in a real application: {@code @Async} runs on the adopted pool and is rejected as Spring's
 * {@code TaskRejectedException}; {@code @Scheduled} runs on the other adopted pool.
 */
@SpringBootTest(classes = AdoptionAppTest.App.class, properties = {
    "warmpool.pools.async.capacity=1", "warmpool.pools.async.nonblocking=true",
    "warmpool.pools.timers.capacity=2",
    "warmpool.spring.task-executor=async", "warmpool.spring.task-scheduler=timers"})
class AdoptionAppTest {

  // no component scan: the other tests' configurations live in this package
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @EnableAsync
  @EnableScheduling
  static class App {
    @Bean
    Jobs jobs() {
      return new Jobs();
    }
  }

  static class Jobs {
    private final CountDownLatch scheduledRan = new CountDownLatch(1);
    private final AtomicReference<String> scheduledThread = new AtomicReference<>();

    @Async
    public CompletableFuture<String> asyncThread(CountDownLatch release) {
      Runners.block(release);
      return CompletableFuture.completedFuture(Thread.currentThread().getName());
    }

    @Scheduled(fixedDelay = 10)
    public void tick() {
      scheduledThread.compareAndSet(null, Thread.currentThread().getName());
      scheduledRan.countDown();
    }

    public String firstScheduledThread() throws InterruptedException {
      assertThat(scheduledRan.await(10, TimeUnit.SECONDS)).as("@Scheduled ran").isTrue();
      return scheduledThread.get();
    }
  }

  @Autowired Jobs jobs;

  @Test
  void adoption_asyncRunsOnTheAdoptedPoolAndIsRejectedAsTaskRejectedException() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<String> first = jobs.asyncThread(release);
    try {
      assertThatThrownBy(() -> jobs.asyncThread(new CountDownLatch(0)))
          .isInstanceOf(TaskRejectedException.class)
          .hasCauseInstanceOf(PoolOverloadedException.class);
    } finally {
      release.countDown();
    }
    assertThat(first.get(10, TimeUnit.SECONDS)).startsWith("async-");
  }

  @Test
  void adoption_scheduledRunsOnTheAdoptedPool() throws Exception {
    assertThat(jobs.firstScheduledThread()).startsWith("timers-");
  }
}
