package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.warmpool.WorkerPool;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.observability.micrometer.Micrometer;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** Contract 5: schedule hooks, task failures, Scannable, toString, Micrometer. */
@SuppressWarnings("try") // try (Occupied busy = ...) scopes a full pool
class IntegrationTest {
  private final List<Throwable> uncaught = new CopyOnWriteArrayList<>();
  private final AtomicInteger threadNumber = new AtomicInteger();
  private final ThreadFactory threads = r -> {
    Thread t = new Thread(r, "hooked-" + threadNumber.incrementAndGet());
    t.setDaemon(true);
    t.setUncaughtExceptionHandler((thread, e) -> uncaught.add(e));
    return t;
  };
  private final WorkerPool pool = WorkerPool.builder().name("io").capacity(2)
      .maxIdle(Duration.ofSeconds(10)).threadFactory(threads).build();
  private final Scheduler scheduler = PoolSchedulers.from(pool);

  @AfterEach
  void close() {
    Schedulers.resetOnScheduleHook("test");
    scheduler.dispose();
    pool.shutdownNow();
    pool.close();
  }

  @Test
  void everyTaskGoesThroughSchedulersOnSchedule() throws Exception {
    AtomicInteger decorated = new AtomicInteger();
    AtomicInteger ranDecorated = new AtomicInteger();
    Schedulers.onScheduleHook("test", r -> {
      decorated.incrementAndGet();
      return () -> {
        ranDecorated.incrementAndGet();
        r.run();
      };
    });
    Scheduler.Worker worker = scheduler.createWorker();
    CountDownLatch ran = new CountDownLatch(6);
    scheduler.schedule(ran::countDown);
    scheduler.schedule(ran::countDown, 1, TimeUnit.MILLISECONDS);
    Disposable p1 = scheduler.schedulePeriodically(ran::countDown, 1, 1000, TimeUnit.MILLISECONDS);
    worker.schedule(ran::countDown);
    worker.schedule(ran::countDown, 1, TimeUnit.MILLISECONDS);
    Disposable p2 = worker.schedulePeriodically(ran::countDown, 1, 1000, TimeUnit.MILLISECONDS);
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(decorated).hasValue(6);
    assertThat(ranDecorated).hasValue(6);
    p1.dispose();
    p2.dispose();
    worker.dispose();
  }

  @Test
  void taskFailuresGoToTheThreadsUncaughtExceptionHandlerAndThePoolKeepsWorking()
      throws Exception {
    Scheduler.Worker worker = scheduler.createWorker();
    CountDownLatch periodicRuns = new CountDownLatch(3);
    scheduler.schedule(() -> fail("direct"));
    worker.schedule(() -> fail("worker"));
    scheduler.schedule(() -> fail("delayed"), 1, TimeUnit.MILLISECONDS);
    worker.schedule(() -> fail("worker delayed"), 1, TimeUnit.MILLISECONDS);
    Disposable periodic = worker.schedulePeriodically(() -> {
      periodicRuns.countDown();
      fail("periodic");
    }, 0, 1, TimeUnit.MILLISECONDS);
    assertThat(periodicRuns.await(10, TimeUnit.SECONDS)).as("keeps running after failures")
        .isTrue();
    periodic.dispose();
    await().atMost(Duration.ofSeconds(10)).until(() -> uncaught.size() >= 7);
    assertThat(uncaught).extracting(Throwable::getMessage)
        .contains("direct", "worker", "delayed", "worker delayed", "periodic");

    StepVerifier.create(Flux.range(1, 100).publishOn(scheduler)
            .map(i -> Thread.currentThread().getName()))
        .thenConsumeWhile(name -> name.startsWith("hooked-"))
        .verifyComplete();
    CountDownLatch laneStillWorks = new CountDownLatch(1);
    worker.schedule(laneStillWorks::countDown);
    assertThat(laneStillWorks.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(pool.stats().workers()).isLessThanOrEqualTo(2);
    worker.dispose();
  }

  @Test
  void toStringNamesThePool() {
    assertThat(scheduler).hasToString("workerPool(\"io\",capacity=2,maxIdle=10s)");
    WorkerPool big = WorkerPool.builder().name("io").capacity(64).maxIdle(Duration.ofSeconds(10))
        .build();
    assertThat(PoolSchedulers.from(big)).hasToString("workerPool(\"io\",capacity=64,maxIdle=10s)");
    big.close();
  }

  @Test
  void scannableAnswersNameCapacityBufferedAndTerminated() throws Exception {
    Scannable scannable = Scannable.from(scheduler);
    assertThat(scannable.isScanAvailable()).isTrue();
    assertThat(scannable.scan(Scannable.Attr.NAME)).isEqualTo(scheduler.toString());
    assertThat(scannable.name()).isEqualTo(scheduler.toString());
    assertThat(scannable.scan(Scannable.Attr.CAPACITY)).isEqualTo(2);
    assertThat(scannable.scan(Scannable.Attr.BUFFERED)).isEqualTo(0);
    assertThat(scannable.scan(Scannable.Attr.TERMINATED)).isFalse();

    Scheduler.Worker worker = scheduler.createWorker();
    Scannable w = Scannable.from(worker);
    try (Occupied busy = Occupied.all(pool)) {
      scheduler.schedule(() -> {});
      scheduler.schedule(() -> {});
      worker.schedule(() -> {});
      worker.schedule(() -> {});
      assertThat(scannable.scan(Scannable.Attr.BUFFERED)).isEqualTo(3); // 2 tasks and 1 lane wait
      assertThat(w.scan(Scannable.Attr.BUFFERED)).isEqualTo(2);
    }
    await().atMost(Duration.ofSeconds(10))
        .until(() -> Integer.valueOf(0).equals(w.scan(Scannable.Attr.BUFFERED)));
    assertThat(w.scan(Scannable.Attr.PARENT)).isSameAs(scheduler);
    assertThat(w.scan(Scannable.Attr.NAME)).isEqualTo(scheduler + ".worker");
    assertThat(w.scan(Scannable.Attr.TERMINATED)).isFalse();
    worker.dispose();
    assertThat(w.scan(Scannable.Attr.TERMINATED)).isTrue();

    pool.resize(3);
    assertThat(scannable.scan(Scannable.Attr.CAPACITY)).isEqualTo(3);
    scheduler.dispose();
    assertThat(scannable.scan(Scannable.Attr.TERMINATED)).isTrue();
  }

  @Test
  void micrometerTimedSchedulerCanWrapIt() {
    MeterRegistry registry = new SimpleMeterRegistry();
    Scheduler timed = Micrometer.timedScheduler(scheduler, registry, "warm");

    StepVerifier.create(Mono.fromCallable(() -> Thread.currentThread().getName())
            .subscribeOn(timed))
        .assertNext(name -> assertThat(name).startsWith("hooked-"))
        .verifyComplete();
    StepVerifier.create(Flux.range(1, 10).publishOn(timed)).expectNextCount(10).verifyComplete();
    StepVerifier.create(Mono.delay(Duration.ofMillis(5), timed)).expectNext(0L).verifyComplete();
    StepVerifier.create(Flux.interval(Duration.ofMillis(5), timed).take(3))
        .expectNextCount(3).verifyComplete();

    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      assertThat(submitted(registry, "direct")).isGreaterThanOrEqualTo(1);
      assertThat(submitted(registry, "delayed")).isGreaterThanOrEqualTo(1);
      assertThat(submitted(registry, "periodic_initial")).isGreaterThanOrEqualTo(1);
      assertThat(registry.get("warm.scheduler.tasks.completed").timers().stream()
          .mapToLong(Timer::count).sum()).isGreaterThanOrEqualTo(4);
    });
  }

  private static double submitted(MeterRegistry registry, String type) {
    return registry.get("warm.scheduler.tasks.submitted").tag("submission.type", type).counter()
        .count();
  }

  private static void fail(String message) {
    throw new IllegalStateException(message);
  }
}
