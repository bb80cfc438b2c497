package dev.warmpool.samples;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.TaskHandle;
import dev.warmpool.WorkerPool;
import dev.warmpool.micrometer.WorkerPoolMetrics;
import dev.warmpool.reactor.PoolSchedulers;
import io.micrometer.context.ContextRegistry;
import io.micrometer.context.ContextSnapshotFactory;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Runs the READMEs' recipes (line deadlines, the task decorator with MDC and with Micrometer
 * context-propagation, metrics for the pools {@code PoolSchedulers.factory(..)} makes). The code
 * between {@code // snippet:NAME} and {@code // end:NAME} here and in {@link Mdc} is what
 * pool-core/README.md and pool-micrometer/README.md show; {@code ReadmeSnippetsTest} fails if they
 * drift apart.
 */
class ReadmeRecipesTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private final List<WorkerPool> pools = new ArrayList<>();

  @AfterEach
  void cleanUp() {
    pools.forEach(WorkerPool::shutdownNow);
    Schedulers.resetFactory();
    MDC.clear();
  }

  private WorkerPool track(WorkerPool pool) {
    pools.add(pool);
    return pool;
  }

  /** Takes {@code seats} seats of the pool until the returned latch is released. */
  private static CountDownLatch occupy(WorkerPool pool, int seats) throws InterruptedException {
    CountDownLatch running = new CountDownLatch(seats);
    CountDownLatch release = new CountDownLatch(1);
    for (int i = 0; i < seats; i++) {
      pool.execute(() -> {
        running.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
    }
    assertThat(running.await(10, SECONDS)).isTrue();
    return release;
  }

  // ---- line deadlines --------------------------------------------------------------------------

  @Test
  void lineDeadlines() throws Exception {
    // snippet:deadlines
    WorkerPool pool = WorkerPool.builder().name("api").capacity(8)
        .maxWaitInLine(Duration.ofMillis(200))     // no entry waits longer than this for a seat
        .build();
    // end:deadlines
    track(pool);
    CountDownLatch release = occupy(pool, 8);
    Runnable renderReport = () -> { };

    // snippet:deadlines-enqueue
    TaskHandle report = pool.enqueue(renderReport, Duration.ofSeconds(1)); // this task's own deadline
    // end:deadlines-enqueue
    TaskHandle quick = pool.enqueue(() -> { });
    Future<String> submitted = pool.submit(() -> "never");
    long t0 = System.nanoTime();
    assertThatThrownBy(() -> pool.execute(() -> { }))          // a blocked caller gives up
        .isInstanceOf(PoolOverloadedException.class);
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofMillis(190));
    assertThatThrownBy(() -> submitted.get(10, SECONDS))
        .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(PoolOverloadedException.class);
    awaitTrue(quick::isExpired);
    assertThat(report.isExpired()).as("its own, longer deadline").isFalse();
    awaitTrue(report::isExpired);
    assertThat(report.isDone()).isTrue();
    assertThat(pool.stats().expired()).isEqualTo(4);
    assertThat(pool.stats().submitted()).as("expired tasks leave submitted").isEqualTo(8);

    // admitted work never expires: the running tasks kept their seats throughout
    assertThat(pool.stats().busy()).isEqualTo(8);
    CountDownLatch afterwards = new CountDownLatch(1);
    release.countDown();
    pool.enqueue(afterwards::countDown);
    assertThat(afterwards.await(10, SECONDS)).isTrue();
  }

  private static void awaitTrue(java.util.function.BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime() - deadline).as("timed out").isNegative();
      Thread.sleep(5);
    }
  }

  // ---- task decorator: MDC ---------------------------------------------------------------------

  @Test
  void mdcRecipeCarriesTheSubmittersMdcToEveryDoor() throws Exception {
    // snippet:mdc-pool
    WorkerPool pool = WorkerPool.builder().name("io").capacity(64)
        .taskDecorator(Mdc::withMdc)
        .build();
    // end:mdc-pool
    track(pool);
    assertThat(MDC.getMDCAdapter().getClass().getName()).as("a real MDC (logback)")
        .startsWith("ch.qos.logback");

    MDC.put("requestId", "r-1");
    assertThat(pool.submit(() -> MDC.get("requestId")).get(10, SECONDS)).isEqualTo("r-1");
    AtomicReference<String> seen = new AtomicReference<>();
    CountDownLatch ran = new CountDownLatch(1);
    pool.enqueue(() -> {
      seen.set(MDC.get("requestId"));
      ran.countDown();
    });
    assertThat(ran.await(10, SECONDS)).isTrue();
    assertThat(seen).hasValue("r-1");

    // a timer captures at schedule time, on the scheduling thread
    MDC.put("requestId", "r-2");
    var later = pool.schedule(() -> MDC.get("requestId"), 20, java.util.concurrent.TimeUnit.MILLISECONDS);
    MDC.put("requestId", "r-3");
    assertThat(later.get(10, SECONDS)).isEqualTo("r-2");

    // adapters' tasks pass through the decorator: Reactor's subscribeOn schedules on this thread
    Scheduler io = PoolSchedulers.from(pool);
    assertThat(Mono.fromCallable(() -> MDC.get("requestId")).subscribeOn(io).block(WAIT))
        .isEqualTo("r-3");

    // what a task puts in its MDC does not reach the next task; no MDC in, no MDC seen
    pool.submit(() -> MDC.put("leak", "x")).get(10, SECONDS);
    MDC.clear();
    assertThat(pool.submit(() -> MDC.getCopyOfContextMap()).get(10, SECONDS)).isNullOrEmpty();
    assertThat(MDC.getCopyOfContextMap()).as("the caller's MDC is untouched").isNullOrEmpty();
  }

  @Test
  void mdcRecipePutsTheRunningThreadsOwnMdcBack() {
    MDC.put("requestId", "submitter");
    Runnable decorated = Mdc.withMdc(() -> assertThat(MDC.get("requestId")).isEqualTo("submitter"));
    MDC.setContextMap(Map.of("worker", "own"));
    decorated.run();
    assertThat(MDC.getCopyOfContextMap()).isEqualTo(Map.of("worker", "own"));
    MDC.clear();
    decorated.run();
    assertThat(MDC.getCopyOfContextMap()).isNullOrEmpty();
  }

  // ---- task decorator: Micrometer context-propagation ------------------------------------------

  private static final ThreadLocal<String> TENANT = new ThreadLocal<>();
  private static final String TENANT_KEY = "readme.tenant";

  @Test
  void contextPropagationRecipeCarriesEveryRegisteredThreadLocal() throws Exception {
    ContextRegistry.getInstance()
        .registerThreadLocalAccessor(TENANT_KEY, TENANT::get, TENANT::set, TENANT::remove);
    try {
      // snippet:context-propagation
      ContextSnapshotFactory snapshots = ContextSnapshotFactory.builder().clearMissing(true).build();
      WorkerPool pool = WorkerPool.builder().name("io").capacity(64)
          .taskDecorator(task -> snapshots.captureAll().wrap(task))
          .build();
      // end:context-propagation
      track(pool);

      TENANT.set("acme");
      assertThat(pool.submit(TENANT::get).get(10, SECONDS)).isEqualTo("acme");
      var later = pool.schedule(TENANT::get, 20, java.util.concurrent.TimeUnit.MILLISECONDS);
      TENANT.set("globex");
      assertThat(later.get(10, SECONDS)).as("captured at schedule time").isEqualTo("acme");
      assertThat(Mono.fromCallable(TENANT::get).subscribeOn(PoolSchedulers.from(pool)).block(WAIT))
          .isEqualTo("globex");
      pool.submit(() -> TENANT.set("leak")).get(10, SECONDS);
      TENANT.remove();
      assertThat(pool.submit(TENANT::get).get(10, SECONDS)).as("clearMissing: nothing in, nothing seen")
          .isNull();

      // the wrapped task puts the running thread's own value back
      TENANT.set("submitter");
      Runnable check = () -> assertThat(TENANT.get()).isEqualTo("submitter");
      Runnable wrapped = snapshots.captureAll().wrap(check);
      TENANT.set("own");
      wrapped.run();
      assertThat(TENANT.get()).isEqualTo("own");
    } finally {
      TENANT.remove();
      ContextRegistry.getInstance().removeThreadLocalAccessor(TENANT_KEY);
    }
  }

  // ---- metrics -----------------------------------------------------------------------------------

  @Test
  void metricsBinderChartsAPool() {
    MeterRegistry registry = new SimpleMeterRegistry();
    WorkerPool pool = track(WorkerPool.builder().name("io").capacity(4).build());
    // snippet:bind-metrics
    new WorkerPoolMetrics(pool, Tags.of("app", "shop")).bindTo(registry);   // dev.warmpool.micrometer
    // end:bind-metrics
    assertThat(registry.get("executor.pool.max").tags("name", "io", "app", "shop").gauge().value())
        .isEqualTo(4);
  }

  // ---- metrics for the pools PoolSchedulers.factory(..) makes ----------------------------------

  @Test
  void factoryCallbackBindsMetricsToEveryPoolItMakes() {
    MeterRegistry registry = new SimpleMeterRegistry();
    // snippet:factory-metrics
    Schedulers.setFactory(PoolSchedulers.factory(
        pool -> new WorkerPoolMetrics(pool, Tags.of("app", "shop")).bindTo(registry)));
    // end:factory-metrics
    assertThat(Mono.fromCallable(() -> 1).subscribeOn(Schedulers.boundedElastic()).block(WAIT))
        .isEqualTo(1);
    Scheduler reports = Schedulers.newBoundedElastic(4, 100, "reports");
    try {
      assertThat(registry.get("warmpool.submitted").tags("name", "boundedElastic", "app", "shop")
          .functionCounter().count()).isEqualTo(1);
      assertThat(registry.get("executor.pool.max").tags("name", "reports", "app", "shop")
          .gauge().value()).isEqualTo(4);
      assertThat(registry.find("warmpool.expired").tags("name", "reports").functionCounter())
          .isNotNull();
    } finally {
      reports.dispose();
    }
  }
}
