package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.awaitility.Awaitility.await;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Issue 21 (Reactor part): regression tests for faults of the adapter, each named after the
 * guarantee of DESIGN.md section 4 it protects.
 */
@SuppressWarnings("try") // try (Occupied busy = ...) scopes a full pool
class AdapterGuaranteesTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private WorkerPool pool;

  @AfterEach
  void close() {
    Schedulers.resetOnScheduleHook("issue21");
    Schedulers.resetOnHandleError("issue21");
    if (pool != null) {
      pool.shutdownNow();
      pool.close();
    }
  }

  /** Fault 1: a worker whose first task was a delayed one is admitted; it is never rejected later. */
  @Test
  void aWorkerAdmittedByADelayedTaskIsNotRejectedForLoad_guarantee6() throws Exception {
    pool = WorkerPool.builder().name("admitted-by-timer").capacity(1).nonblocking(true).build();
    Scheduler.Worker w = PoolSchedulers.from(pool).createWorker();
    CountDownLatch delayed = new CountDownLatch(1);
    w.schedule(delayed::countDown, 1, TimeUnit.MILLISECONDS);
    assertThat(delayed.await(10, TimeUnit.SECONDS)).isTrue();
    await().atMost(WAIT).until(() -> pool.stats().idle() == 1); // the lane gave its seat back
    CountDownLatch later = new CountDownLatch(1);
    try (Occupied busy = Occupied.all(pool)) {
      assertThatCode(() -> w.schedule(later::countDown)).doesNotThrowAnyException();
    }
    assertThat(later.await(10, TimeUnit.SECONDS)).isTrue();
    w.dispose();
  }

  /** Fault 2: a timer that came due before a graceful shutdown is accepted work and runs. */
  @Test
  void aDueTimerWaitingInLineRunsUnderAGracefulShutdown_guarantee7() throws Exception {
    pool = WorkerPool.builder().name("due-at-shutdown").capacity(1).build();
    Scheduler s = PoolSchedulers.from(pool);
    CompletableFuture<Long> direct;
    CountDownLatch onWorker = new CountDownLatch(1);
    try (Occupied busy = Occupied.all(pool)) {
      direct = Mono.delay(Duration.ofMillis(1), s).toFuture();
      s.createWorker().schedule(onWorker::countDown, 1, TimeUnit.MILLISECONDS);
      await().atMost(WAIT).until(() -> pool.stats().waiting() == 2); // both due, in line
      pool.shutdown();
    }
    assertThat(direct.get(10, TimeUnit.SECONDS)).isZero();
    assertThat(onWorker.await(10, TimeUnit.SECONDS)).isTrue();
  }

  /** Fault 2: a graceful disposal begun after a graceful shutdown leaves a due timer to run. */
  @Test
  void aDueTimerWaitingInLineRunsWhenDisposeGracefullyFollowsTheShutdown_guarantee7()
      throws Exception {
    pool = WorkerPool.builder().name("due-at-shutdown").capacity(1).build();
    Scheduler s = PoolSchedulers.from(pool);
    CompletableFuture<Long> direct;
    CountDownLatch onWorker = new CountDownLatch(1);
    CompletableFuture<Void> graceful;
    try (Occupied busy = Occupied.all(pool)) {
      direct = Mono.delay(Duration.ofMillis(1), s).toFuture();
      s.createWorker().schedule(onWorker::countDown, 1, TimeUnit.MILLISECONDS);
      await().atMost(WAIT).until(() -> pool.stats().waiting() == 2); // both due, in line
      pool.shutdown();
      graceful = s.disposeGracefully().toFuture();
    }
    assertThat(direct.get(10, TimeUnit.SECONDS)).isZero();
    assertThat(onWorker.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(graceful).succeedsWithin(WAIT);
  }

  /** Fault 3: a periodic task running when the pool shuts down ends with that run. */
  @ParameterizedTest(name = "period {0} ms, shutdownNow {1}, on a subpool {2}")
  @CsvSource({"1, false, false", "0, false, false", "1, true, false", "0, true, false",
      "1, false, true", "1, true, true"})
  void aPeriodicTaskRunningWhenThePoolShutsDownEnds_guarantee7(long period, boolean now,
      boolean subpool) throws Exception {
    pool = WorkerPool.builder().name("periodic-at-shutdown").capacity(2).build();
    Scheduler s = PoolSchedulers.from(subpool ? pool.newSubpool("sub", 2) : pool);
    Scheduler.Worker w = s.createWorker();
    CountDownLatch running = new CountDownLatch(2);
    CountDownLatch release = new CountDownLatch(1);
    Runnable body = () -> {
      running.countDown();
      Occupied.awaitQuietly(release);
    };
    Disposable direct = s.schedulePeriodically(body, 0, period, TimeUnit.MILLISECONDS);
    Disposable onWorker = w.schedulePeriodically(body, 0, period, TimeUnit.MILLISECONDS);
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    if (now) {
      pool.shutdownNow();
    } else {
      pool.shutdown();
    }
    release.countDown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    await().atMost(WAIT).until(() -> direct.isDisposed() && onWorker.isDisposed());
    assertThat(((Scannable) w).scan(Scannable.Attr.BUFFERED)).isEqualTo(0);
    assertThat(s.disposeGracefully().block(WAIT)).isNull();
  }

  /** Fault 4: a task handed back by the owner's shutdownNow never holds a graceful disposal open. */
  @Test
  void disposeGracefullyEndsWhenTheOwnerHandsBackATaskInLine_guarantee4() throws Exception {
    pool = WorkerPool.builder().name("handed-back").capacity(1).build();
    Scheduler s = PoolSchedulers.from(pool);
    CompletableFuture<Void> graceful;
    List<Runnable> handedBack;
    try (Occupied busy = Occupied.all(pool)) {
      s.schedule(() -> { });
      assertThat(pool.stats().waiting()).isEqualTo(1);
      graceful = s.disposeGracefully().toFuture();
      handedBack = pool.shutdownNow();
    }
    assertThat(handedBack).hasSize(1);
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(graceful).succeedsWithin(WAIT);
  }

  /** Fault 5: a failing task is passed through Schedulers.onSchedule once, as every task. */
  @Test
  void aFailingTaskPassesThroughOnScheduleOnce_guarantee8() throws Exception {
    pool = WorkerPool.builder().name("on-schedule-once").capacity(2).build();
    AtomicInteger decorated = new AtomicInteger();
    List<Throwable> hooked = new CopyOnWriteArrayList<>();
    Schedulers.onScheduleHook("issue21", r -> {
      decorated.incrementAndGet();
      return r;
    });
    Schedulers.onHandleError("issue21", (t, e) -> hooked.add(e));
    Scheduler s = PoolSchedulers.from(pool);
    Scheduler.Worker w = s.createWorker();
    s.schedule(() -> {
      throw new IllegalStateException("direct");
    });
    w.schedule(() -> {
      throw new IllegalStateException("worker");
    });
    s.schedule(() -> {
      throw new IllegalStateException("delayed");
    }, 1, TimeUnit.MILLISECONDS);
    await().dontCatchUncaughtExceptions().atMost(WAIT).until(() -> hooked.size() == 3);
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(decorated).hasValue(3);
    assertThat(hooked).hasSize(3);
  }

  /**
   * Fault 6: periodic failures keep the task running, count as failed and reach only a failure
   * handler set on the builder.
   */
  @Test
  void periodicFailuresReachTheExplicitFailureHandlerAndCountAsFailed_guarantee8()
      throws Exception {
    List<Throwable> handled = new CopyOnWriteArrayList<>();
    List<Throwable> hooked = new CopyOnWriteArrayList<>();
    pool = WorkerPool.builder().name("periodic-failures").capacity(2)
        .failureHandler((t, e) -> handled.add(e)).build();
    Schedulers.onHandleError("issue21", (t, e) -> hooked.add(e));
    Scheduler s = PoolSchedulers.from(pool);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger runs = new AtomicInteger();
    Runnable failing = () -> {
      runs.incrementAndGet();
      throw new IllegalStateException("periodic");
    };
    Disposable direct = s.schedulePeriodically(failing, 0, 1, TimeUnit.MILLISECONDS);
    Disposable onWorker = w.schedulePeriodically(failing, 0, 1, TimeUnit.MILLISECONDS);
    // each keeps running after a failed run, as on Reactor's own schedulers
    await().dontCatchUncaughtExceptions().atMost(WAIT).until(() -> runs.get() >= 6);
    direct.dispose();
    onWorker.dispose();
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(handled).as("failure handler").hasSize(runs.get());
    assertThat(pool.stats().failed()).as("failed (%s)", pool.stats()).isEqualTo(runs.get());
    assertThat(hooked).as("onHandleError: the explicit handler sees them instead").isEmpty();
  }

  /** Fault 6, by default: each failure reaches onHandleError exactly once, whatever its kind. */
  @Test
  void everyFailureIsCountedAndReachesOnHandleErrorOnceByDefault_guarantee8() throws Exception {
    pool = WorkerPool.builder().name("default-failures").capacity(2).build();
    List<Throwable> hooked = new CopyOnWriteArrayList<>();
    Schedulers.onHandleError("issue21", (t, e) -> hooked.add(e));
    Scheduler s = PoolSchedulers.from(pool);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger runs = new AtomicInteger();
    Runnable failing = () -> {
      runs.incrementAndGet();
      throw new IllegalStateException("expected by the test");
    };
    s.schedule(failing);
    w.schedule(failing);
    s.schedule(failing, 1, TimeUnit.MILLISECONDS);
    w.schedule(failing, 1, TimeUnit.MILLISECONDS);
    Disposable direct = s.schedulePeriodically(failing, 0, 1, TimeUnit.MILLISECONDS);
    Disposable onWorker = w.schedulePeriodically(failing, 0, 1, TimeUnit.MILLISECONDS);
    await().dontCatchUncaughtExceptions().atMost(WAIT).until(() -> runs.get() >= 10);
    direct.dispose();
    onWorker.dispose();
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(hooked).as("onHandleError").hasSize(runs.get());
    assertThat(pool.stats().failed()).as("failed (%s)", pool.stats()).isEqualTo(runs.get());
  }

  /** Suspected: a zero delay is a timer too, never refused for load (Mono.delay(Duration.ZERO)). */
  @Test
  void aZeroDelayIsNotRefusedForLoad_guarantee7() throws Exception {
    pool = WorkerPool.builder().name("zero-delay").capacity(1).nonblocking(true).build();
    Scheduler s = PoolSchedulers.from(pool);
    CompletableFuture<Long> delay;
    CountDownLatch onWorker = new CountDownLatch(1);
    try (Occupied busy = Occupied.all(pool)) {
      delay = Mono.delay(Duration.ZERO, s).toFuture();
      assertThatCode(() -> s.createWorker().schedule(onWorker::countDown, 0, TimeUnit.MILLISECONDS))
          .doesNotThrowAnyException();
      assertThat(delay).isNotDone();
    }
    assertThat(delay.get(10, TimeUnit.SECONDS)).isZero();
    assertThat(onWorker.await(10, TimeUnit.SECONDS)).isTrue();
  }
}
