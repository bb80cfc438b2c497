package dev.warmpool.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;

/**
 * DESIGN section 6, "Boot's own executors stay", in a real application: {@code @Async} runs on
 * Boot's {@code task-N} threads and {@code @Scheduled} on its {@code scheduling-N} threads, and
 * {@code spring.task.execution.*} is honoured, with pools configured exactly as without.
 */
class BootExecutorsStayAppTest {

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
    public CompletableFuture<String> asyncThread() {
      return CompletableFuture.completedFuture(Thread.currentThread().getName());
    }

    @Scheduled(fixedDelay = 10)
    public void tick() {
      scheduledThread.compareAndSet(null, Thread.currentThread().getName());
      scheduledRan.countDown();
    }

    /** The thread of the first {@code @Scheduled} run (the bean is a proxy: no field access). */
    public String firstScheduledThread() throws InterruptedException {
      assertThat(scheduledRan.await(10, TimeUnit.SECONDS)).as("@Scheduled ran").isTrue();
      return scheduledThread.get();
    }
  }

  abstract static class Checks {
    @Autowired ApplicationContext context;
    @Autowired Jobs jobs;

    @Test
    void bootsExecutorsStay_asyncRunsOnBootsTaskThreads() throws Exception {
      assertThat(jobs.asyncThread().get(10, TimeUnit.SECONDS)).startsWith("task-");
    }

    @Test
    void bootsExecutorsStay_scheduledRunsOnBootsSchedulingThreads() throws Exception {
      assertThat(jobs.firstScheduledThread()).startsWith("scheduling-");
    }

    @Test
    void bootsExecutorsStay_springTaskExecutionIsHonoured() {
      assertThat(context.getBean("applicationTaskExecutor", ThreadPoolTaskExecutor.class)
          .getMaxPoolSize()).isEqualTo(3);
    }
  }

  @Nested
  @SpringBootTest(classes = App.class, properties = {"spring.task.execution.pool.core-size=2",
      "spring.task.execution.pool.max-size=3",
      "warmpool.pools.db.capacity=4", "warmpool.pools.http.capacity=2",
      "warmpool.pools.http.nonblocking=true", "warmpool.pools.http.primary=true"})
  class WithPools extends Checks {
    @Test
    void thePoolsAreThere() {
      assertThat(context.getBeansOfType(dev.warmpool.WorkerPool.class)).containsOnlyKeys("db", "http");
    }
  }

  @Nested
  @SpringBootTest(classes = App.class, properties = {"spring.task.execution.pool.core-size=2",
      "spring.task.execution.pool.max-size=3"})
  class WithoutPools extends Checks {}
}
