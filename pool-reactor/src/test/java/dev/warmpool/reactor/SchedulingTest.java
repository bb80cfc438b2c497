package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.test.StepVerifier;

/** Contract 1: a Worker is a serial lane; direct, delayed and periodic scheduling. */
class SchedulingTest {
  private final WorkerPool pool = WorkerPool.builder().name("sched").capacity(4)
      .maxIdle(Duration.ofSeconds(10)).build();
  private final Scheduler scheduler = PoolSchedulers.from(pool);

  @AfterEach
  void close() {
    scheduler.dispose();
    pool.close();
  }

  @Test
  void workerTasksNeverOverlapAndRunInSubmissionOrder() throws Exception {
    Scheduler.Worker worker = scheduler.createWorker();
    List<Integer> seen = new CopyOnWriteArrayList<>();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger maxInside = new AtomicInteger();
    Set<String> threads = ConcurrentHashMap.newKeySet();
    CountDownLatch done = new CountDownLatch(2000);
    for (int i = 0; i < 2000; i++) {
      int n = i;
      worker.schedule(() -> {
        maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
        threads.add(Thread.currentThread().getName());
        seen.add(n);
        inside.decrementAndGet();
        done.countDown();
      });
    }
    assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(seen).containsExactlyElementsOf(range(2000));
    assertThat(maxInside).hasValue(1);
    assertThat(threads).allMatch(name -> name.startsWith("sched-"));
    worker.dispose();
  }

  @Test
  void directTasksRunOnPoolThreadsInParallel() throws Exception {
    CyclicBarrier allFourAtOnce = new CyclicBarrier(4);
    Set<String> threads = ConcurrentHashMap.newKeySet();
    CountDownLatch done = new CountDownLatch(4);
    for (int i = 0; i < 4; i++) {
      scheduler.schedule(() -> {
        threads.add(Thread.currentThread().getName());
        try {
          allFourAtOnce.await(10, TimeUnit.SECONDS);
          done.countDown();
        } catch (Exception e) {
          throw new AssertionError(e);
        }
      });
    }
    assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(threads).hasSize(4).allMatch(name -> name.startsWith("sched-"));
  }

  @Test
  void delayedWorkerTasksKeepTheWorkersOrderAndNeverOverlapImmediateOnes() throws Exception {
    Scheduler.Worker worker = scheduler.createWorker();
    List<String> seen = new CopyOnWriteArrayList<>();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger maxInside = new AtomicInteger();
    CountDownLatch done = new CountDownLatch(6);
    Function<String, Runnable> task = name -> () -> {
      maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
      seen.add(name);
      inside.decrementAndGet();
      done.countDown();
    };
    worker.schedule(task.apply("a"));
    worker.schedule(task.apply("b"), 30, TimeUnit.MILLISECONDS);
    worker.schedule(task.apply("c"), 30, TimeUnit.MILLISECONDS);
    worker.schedule(task.apply("d"), 60, TimeUnit.MILLISECONDS);
    worker.schedule(task.apply("e"), 0, TimeUnit.MILLISECONDS); // <= 0: now, in line with "a"
    worker.schedule(task.apply("f"));
    assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(seen.stream().filter(s -> "aef".contains(s))).containsExactly("a", "e", "f");
    assertThat(seen.stream().filter(s -> "bcd".contains(s))).containsExactly("b", "c", "d");
    assertThat(seen.indexOf("b")).isGreaterThan(seen.indexOf("a"));
    assertThat(maxInside).hasValue(1);
    worker.dispose();
  }

  @Test
  void aDelayRunsNoEarlierThanAskedAndANonPositiveDelayMeansNow() throws Exception {
    CountDownLatch ran = new CountDownLatch(1);
    long start = System.nanoTime();
    scheduler.schedule(ran::countDown, 80, TimeUnit.MILLISECONDS);
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(80));

    CountDownLatch now = new CountDownLatch(4);
    Scheduler.Worker worker = scheduler.createWorker();
    scheduler.schedule(now::countDown, 0, TimeUnit.DAYS);
    scheduler.schedule(now::countDown, -1, TimeUnit.DAYS);
    worker.schedule(now::countDown, 0, TimeUnit.DAYS);
    worker.schedule(now::countDown, -1, TimeUnit.DAYS);
    assertThat(now.await(10, TimeUnit.SECONDS)).isTrue();
    worker.dispose();
  }

  @Test
  void monoDelayAndFluxIntervalRunOnThePool() {
    StepVerifier.create(Mono.delay(Duration.ofMillis(20), scheduler)
            .map(x -> Thread.currentThread().getName()))
        .assertNext(name -> assertThat(name).startsWith("sched-"))
        .verifyComplete();
    StepVerifier.create(Flux.interval(Duration.ofMillis(10), scheduler).take(5))
        .expectNext(0L, 1L, 2L, 3L, 4L)
        .expectComplete()
        .verify(Duration.ofSeconds(10));
  }

  @Test
  void directPeriodicTaskRunsAtAFixedRate() throws Exception {
    assertFixedRate((task, period) -> scheduler.schedulePeriodically(task, period, period,
        TimeUnit.MILLISECONDS));
  }

  @Test
  void workerPeriodicTaskRunsAtAFixedRate() throws Exception {
    Scheduler.Worker worker = scheduler.createWorker();
    assertFixedRate((task, period) -> worker.schedulePeriodically(task, period, period,
        TimeUnit.MILLISECONDS));
    worker.dispose();
  }

  @Test
  void aNonPositivePeriodRunsAgainAsSoonAsTheRunReturned() throws Exception {
    Scheduler.Worker worker = scheduler.createWorker();
    for (Function<Runnable, Disposable> periodic : List.<Function<Runnable, Disposable>>of(
        r -> scheduler.schedulePeriodically(r, 0, 0, TimeUnit.MILLISECONDS),
        r -> worker.schedulePeriodically(r, 0, -1, TimeUnit.MILLISECONDS))) {
      CountDownLatch fiveRuns = new CountDownLatch(5);
      Disposable d = periodic.apply(fiveRuns::countDown);
      assertThat(fiveRuns.await(10, TimeUnit.SECONDS)).isTrue();
      d.dispose();
      assertThat(d.isDisposed()).isTrue();
    }
    worker.dispose();
  }

  interface Periodic {
    Disposable start(Runnable task, long periodMillis);
  }

  /**
   * The first run (due after 1 period) takes 5 periods. At a fixed rate runs 2 to 4 are overdue by
   * then and start right after each other, at about 6 periods; at a fixed delay run 4 would start no
   * earlier than 9 periods. No run starts before its due time, and runs never overlap.
   */
  private static void assertFixedRate(Periodic periodic) throws Exception {
    long period = 150;
    List<Long> starts = new CopyOnWriteArrayList<>();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger maxInside = new AtomicInteger();
    CountDownLatch fourRuns = new CountDownLatch(4);
    long t0 = System.nanoTime();
    Disposable d = periodic.start(() -> {
      maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
      starts.add(System.nanoTime() - t0);
      if (starts.size() == 1) {
        sleep(5 * period);
      }
      inside.decrementAndGet();
      fourRuns.countDown();
    }, period);
    assertThat(fourRuns.await(10, TimeUnit.SECONDS)).isTrue();
    d.dispose();
    List<Long> ms = starts.subList(0, 4).stream().map(TimeUnit.NANOSECONDS::toMillis)
        .collect(Collectors.toList());
    for (int k = 0; k < 4; k++) {
      assertThat(ms.get(k)).as("run %d never starts early: %s", k, ms)
          .isGreaterThanOrEqualTo((k + 1) * period);
    }
    assertThat(ms.get(3)).as("run 4 catches up at a fixed rate: %s", ms).isLessThan(15 * period / 2);
    assertThat(maxInside).hasValue(1);
    assertThat(d.isDisposed()).isTrue();
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis); // the task's own work, not a wait for the test
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static List<Integer> range(int n) {
    return IntStream.range(0, n).boxed().collect(Collectors.toList());
  }

}
