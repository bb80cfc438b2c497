package dev.warmpool.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.warmpool.SerialExecutor;
import dev.warmpool.WorkerPool;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * The {@code executor} and {@code executor.idle} timers of Micrometer's {@code TimedExecutorService}
 * (DESIGN section 6, "Metrics"): every task of every door, once per registry, and off on request.
 */
class TaskTimersTest {

  @Test
  void everyTaskIsTimedRunTimeAndWaitFromAcceptanceToStart() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (WorkerPool pool = WorkerPool.builder().name("db").capacity(1).build()) {
      new WorkerPoolMetrics(pool, Tags.of("app", "shop")).bindTo(registry);
      new WorkerPoolMetrics(pool, Tags.of("app", "shop")).bindTo(registry); // harmless twice
      CountDownLatch holding = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      pool.execute(() -> {
        holding.countDown();
        block(release);
      });
      holding.await();
      CountDownLatch done = new CountDownLatch(3);
      pool.enqueue(done::countDown);
      long accepted = System.nanoTime(); // the task was accepted before this
      SerialExecutor lane = pool.newSerialExecutor();
      lane.execute(done::countDown);
      pool.schedule(done::countDown, 1, TimeUnit.MILLISECONDS);
      LockSupport.parkNanos(20_000_000); // time in line, to be measured (not a synchronisation)
      long waitedAtLeast = System.nanoTime() - accepted;
      release.countDown();
      assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();

      Timer ran = registry.get("executor").tags("name", "db", "app", "shop").timer();
      Timer idle = registry.get("executor.idle").tags("name", "db", "app", "shop").timer();
      await().atMost(Duration.ofSeconds(10)).until(() -> idle.count() == 4);
      assertThat(ran.count()).isEqualTo(4);
      // the holder ran at least as long as the queued task waited behind it
      assertThat(ran.max(TimeUnit.NANOSECONDS)).isGreaterThanOrEqualTo(waitedAtLeast);
      assertThat(idle.max(TimeUnit.NANOSECONDS)).isGreaterThanOrEqualTo(waitedAtLeast);
    }
  }

  @Test
  void timersCanBeLeftOut() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (WorkerPool pool = WorkerPool.builder().name("plain").capacity(1).build()) {
      new WorkerPoolMetrics(pool, Tags.empty(), false).bindTo(registry);
      pool.submit(() -> {}).get();
      assertThat(registry.find("executor").timer()).isNull();
      assertThat(registry.find("executor.idle").timer()).isNull();
      assertThat(pool.taskTimer()).isNull();
      assertThat(registry.get("executor.pool.max").tag("name", "plain").gauge().value()).isEqualTo(1);
    }
  }

  private static void block(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
