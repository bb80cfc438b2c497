package dev.warmpool.micrometer;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class WorkerPoolMetricsTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  /** Advanced by hand past the snapshot window before each read, so every read is fresh. */
  private final AtomicLong clock = new AtomicLong();

  private double gauge(String name) {
    Gauge g = registry.get(name).tags("name", "metrics", "app", "shop").gauge();
    return g.value();
  }

  private double counter(String name) {
    FunctionCounter c = registry.get(name).tags("name", "metrics", "app", "shop").functionCounter();
    return c.count();
  }

  private void nextScrape() {
    clock.addAndGet(StatsSampler.WINDOW_NANOS);
  }

  @Test
  void everyMeterHoldsTheWorkloadsFiguresWhileBusyAndAfterClose() throws Exception {
    CountDownLatch failureSeen = new CountDownLatch(1);
    WorkerPool pool = WorkerPool.builder().name("metrics").capacity(2).maxWaiting(1)
        .maxIdle(Duration.ofMinutes(10)).failureHandler((t, e) -> failureSeen.countDown()).build();
    new WorkerPoolMetrics(pool, Tags.of("app", "shop"), clock::get).bindTo(registry);

    for (int i = 0; i < 5; i++) {
      pool.submit(() -> { }).get(10, SECONDS);
    }
    pool.execute(() -> {
      throw new IllegalStateException("boom");
    });
    assertThat(failureSeen.await(10, SECONDS)).isTrue();

    // Both seats held: each of the two workers runs one of these, so every earlier task is counted.
    CountDownLatch running = new CountDownLatch(2);
    CountDownLatch release = new CountDownLatch(1);
    for (int i = 0; i < 2; i++) {
      pool.execute(() -> {
        running.countDown();
        awaitQuietly(release);
      });
    }
    assertThat(running.await(10, SECONDS)).isTrue();
    CountDownLatch lineTaskRan = new CountDownLatch(1);
    pool.enqueue(lineTaskRan::countDown);                       // waits in line
    assertThatThrownBy(() -> pool.enqueue(() -> { }))           // line full: rejected
        .isInstanceOf(PoolOverloadedException.class);
    assertThat(pool.tryExecute(() -> { })).isFalse();           // no seat now: rejected

    nextScrape();
    assertThat(counter("executor.completed")).isEqualTo(6);     // 5 normal + 1 that threw
    assertThat(gauge("executor.active")).isEqualTo(2);
    assertThat(gauge("executor.queued")).isEqualTo(1);
    assertThat(gauge("executor.pool.size")).isEqualTo(2);
    assertThat(gauge("executor.pool.max")).isEqualTo(2);
    assertThat(counter("warmpool.submitted")).isEqualTo(9);     // 5 + 1 + 2 + the one in line
    assertThat(counter("warmpool.failed")).isEqualTo(1);
    assertThat(counter("warmpool.rejected")).isEqualTo(2);
    assertThat(counter("warmpool.expired")).isZero();
    assertThat(gauge("warmpool.waiting")).isEqualTo(1);
    assertThat(gauge("warmpool.idle")).isZero();
    assertThat(counter("warmpool.workers.started")).isEqualTo(2);
    assertThat(counter("warmpool.workers.expired")).isZero();
    assertThat(counter("warmpool.workers.stopped")).isZero();

    release.countDown();
    assertThat(lineTaskRan.await(10, SECONDS)).isTrue();
    pool.shutdown();
    assertThat(pool.awaitTermination(10, SECONDS)).isTrue();

    nextScrape();
    assertThat(counter("executor.completed")).isEqualTo(9);     // 8 normal + 1 that threw
    assertThat(gauge("executor.active")).isZero();
    assertThat(gauge("executor.queued")).isZero();
    assertThat(gauge("executor.pool.size")).isZero();
    assertThat(gauge("executor.pool.max")).isEqualTo(2);
    assertThat(counter("warmpool.submitted")).isEqualTo(9);
    assertThat(counter("warmpool.failed")).isEqualTo(1);
    assertThat(counter("warmpool.rejected")).isEqualTo(2);
    assertThat(gauge("warmpool.waiting")).isZero();
    assertThat(gauge("warmpool.idle")).isZero();
    assertThat(counter("warmpool.workers.started")).isEqualTo(2);
    assertThat(counter("warmpool.workers.expired")).isZero();
    assertThat(counter("warmpool.workers.stopped")).isEqualTo(2);
  }

  @Test
  void usesMicrometersExecutorNamesTypesAndUnitsAndTagsEveryMeterWithThePoolsName() {
    WorkerPool pool = WorkerPool.builder().name("metrics").capacity(1).build();
    new WorkerPoolMetrics(pool, Tags.of("app", "shop")).bindTo(registry);

    assertThat(registry.getMeters()).hasSize(16).allSatisfy(m -> { // 14 + the two task timers
      assertThat(m.getId().getTag("name")).isEqualTo("metrics");
      assertThat(m.getId().getTag("app")).isEqualTo("shop");
    });
    assertThat(registry.get("executor.completed").meter().getId().getType()).isEqualTo(Meter.Type.COUNTER);
    assertThat(registry.get("executor.completed").meter().getId().getBaseUnit()).isEqualTo("tasks");
    assertThat(registry.get("executor.active").meter().getId().getType()).isEqualTo(Meter.Type.GAUGE);
    assertThat(registry.get("executor.active").meter().getId().getBaseUnit()).isEqualTo("threads");
    assertThat(registry.get("executor.queued").meter().getId().getBaseUnit()).isEqualTo("tasks");
    assertThat(registry.get("executor.pool.size").meter().getId().getBaseUnit()).isEqualTo("threads");
    assertThat(registry.get("executor.pool.max").meter().getId().getBaseUnit()).isEqualTo("threads");
    assertThat(registry.get("warmpool.expired").meter().getId().getType()).isEqualTo(Meter.Type.COUNTER);
    assertThat(registry.get("warmpool.expired").meter().getId().getBaseUnit()).isEqualTo("tasks");
    assertThat(registry.get("executor").meter().getId().getType()).isEqualTo(Meter.Type.TIMER);
    assertThat(registry.get("executor.idle").meter().getId().getType()).isEqualTo(Meter.Type.TIMER);
    pool.shutdownNow();
  }

  @Test
  void expiredCountsEntriesThatWaitedPastTheirLineDeadline() throws Exception {
    WorkerPool pool = WorkerPool.builder().name("metrics").capacity(1)
        .maxWaitInLine(Duration.ofMillis(50)).build();
    new WorkerPoolMetrics(pool, Tags.of("app", "shop"), clock::get).bindTo(registry);
    CountDownLatch running = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    try {
      pool.execute(() -> {
        running.countDown();
        awaitQuietly(release);
      });
      assertThat(running.await(10, SECONDS)).isTrue();
      var byPool = pool.enqueue(() -> { });                         // the pool's maxWaitInLine
      var byTask = pool.enqueue(() -> { }, Duration.ofMillis(20));  // its own deadline
      long deadline = System.nanoTime() + SECONDS.toNanos(10);
      while (!(byPool.isExpired() && byTask.isExpired()) && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(byPool.isExpired()).isTrue();
      assertThat(byTask.isExpired()).isTrue();

      nextScrape();
      assertThat(counter("warmpool.expired")).isEqualTo(2);
      assertThat(counter("warmpool.submitted")).as("an expired task leaves submitted").isEqualTo(1);
      assertThat(counter("warmpool.rejected")).isZero();
      assertThat(gauge("warmpool.waiting")).isZero();
      FunctionCounter expired = registry.get("warmpool.expired").functionCounter();
      assertThat(expired.getId().getTag("name")).isEqualTo("metrics");
      assertThat(expired.getId().getTag("app")).isEqualTo("shop");
    } finally {
      release.countDown();
      pool.shutdownNow();
    }
  }

  @Test
  void oneScrapeReadsOneSnapshot() throws Exception {
    WorkerPool pool = WorkerPool.builder().name("metrics").capacity(2).build();
    new WorkerPoolMetrics(pool, Tags.of("app", "shop"), clock::get).bindTo(registry);
    assertThat(counter("warmpool.submitted")).isZero();          // takes the snapshot

    pool.submit(() -> { }).get(10, SECONDS);
    assertThat(counter("warmpool.submitted")).isZero();          // same scrape, same snapshot
    nextScrape();
    assertThat(counter("warmpool.submitted")).isEqualTo(1);      // next scrape sees the task
    pool.shutdownNow();
  }

  @Test
  void aClosedPoolKeepsReportingWithoutErrors() {
    WorkerPool pool = WorkerPool.builder().name("metrics").capacity(2).build();
    pool.close();
    new WorkerPoolMetrics(pool, Tags.of("app", "shop")).bindTo(registry);
    assertThatThrownBy(() -> pool.execute(() -> { })).isInstanceOf(java.util.concurrent.RejectedExecutionException.class);

    assertThat(gauge("executor.pool.size")).isZero();
    assertThat(gauge("executor.pool.max")).isEqualTo(2);
    nextScrape();
    assertThat(counter("warmpool.rejected")).isEqualTo(1);
  }

  @Test
  void rejectsNullArgumentsNamingThem() {
    WorkerPool pool = WorkerPool.builder().capacity(1).build();
    assertThatNullPointerException().isThrownBy(() -> new WorkerPoolMetrics(null, Tags.empty()))
        .withMessageContaining("pool");
    assertThatNullPointerException().isThrownBy(() -> new WorkerPoolMetrics(pool, null))
        .withMessageContaining("tags");
    assertThatNullPointerException().isThrownBy(() -> new WorkerPoolMetrics(pool, Tags.empty()).bindTo(null))
        .withMessageContaining("registry");
    pool.shutdownNow();
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
