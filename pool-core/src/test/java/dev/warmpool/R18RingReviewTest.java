package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Review r18 of the waiting line's ring (second pass), public API: a withdrawn entry now gives up
 * its task under the line's lock (review r17, F2), so every path that tells a task of its end
 * after its entry left the line must use a copy read before. Attacked with entries that expire
 * among stale slots (cancelled neighbours), through every door that puts a task with a line
 * deadline in a line (a pool's enqueue and submit, a subpool's, whose forwarded task expires in the
 * parent's line, a serial lane's entry), FIFO and adaptive LIFO: each task ends exactly one way, each
 * expired {@link CancellationAware} hears {@code onExpired} once, each expired future fails, the pool
 * terminates and its counters are exact.
 */
@Timeout(120)
class R18RingReviewTest {
  private static final Duration HOUR = Duration.ofHours(1);
  private static final Duration DEADLINE = Duration.ofMillis(600);
  private static final int N = 90;

  @AutoClose
  final PoolFixture fixture = new PoolFixture();

  @ParameterizedTest(name = "{0}, adaptiveLifo={1}")
  @CsvSource({"pool,false", "pool,true", "subpool,false", "subpool,true", "nested,false",
      "nested,true", "lane,false", "lane,true"})
  void guarantee5_everyExpiryIsHeardAmongStaleSlots(String door, boolean lifo) throws Exception {
    WorkerPool pool = fixture.pool("r18x", b -> b.capacity(1).maxIdle(HOUR).maxWaiting(10_000)
        .maxWaitInLine(DEADLINE).adaptiveLifo(lifo));
    PoolFixture.Gate gate = fixture.occupy(pool); // the only seat: everything else waits in line
    WorkerPool sub = door.equals("subpool") || door.equals("nested") ? pool.newSubpool("sub", N)
        : null;
    if (door.equals("nested")) {
      sub = sub.newSubpool("inner", N); // its seated task waits in "sub"'s seat, then the pool's line
    }
    WorkerPool target = sub != null ? sub : pool;
    CountingTask[] probes = new CountingTask[N];
    Future<?>[] futures = new Future<?>[N];
    TaskHandle[] handles = new TaskHandle[N];
    for (int i = 0; i < N; i++) {
      probes[i] = new CountingTask();
      if (door.equals("lane")) {
        handles[i] = pool.newSerialExecutor().enqueue(probes[i]); // a lane entry per task
      } else if (i % 2 == 0) {
        handles[i] = target.enqueue(probes[i]);
      } else {
        futures[i] = target.submit(probes[i]);
      }
    }
    // Withdraw every third one, so that stale slots sit next to each entry that expires.
    boolean[] cancelled = new boolean[N];
    int withdrawn = 0;
    for (int i = 1; i < N; i += 3) {
      cancelled[i] = futures[i] != null ? futures[i].cancel(false) : handles[i].cancel(false);
      if (cancelled[i]) {
        withdrawn++;
      }
    }
    int expected = N - withdrawn;
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(30), () -> {
      int heard = 0;
      for (int i = 0; i < N; i++) {
        if (cancelled[i]) {
          continue;
        }
        if (futures[i] != null ? futures[i].isDone() : probes[i].expired.get() == 1) {
          heard++;
        }
      }
      return heard == expected;
    })).as("every expired task heard of it (" + door + ")").isTrue();

    gate.open();
    pool.shutdown();
    assertThat(pool.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    if (sub != null) {
      assertThat(sub.isTerminated()).isTrue();
    }
    for (int i = 0; i < N; i++) {
      assertThat(probes[i].ran.get()).as("task " + i + " ran").isZero();
      if (futures[i] != null) {
        assertThat(futures[i].isDone()).isTrue();
        if (!cancelled[i]) {
          Future<?> f = futures[i];
          Throwable cause = null;
          try {
            f.get();
          } catch (ExecutionException e) {
            cause = e.getCause();
          }
          assertThat(cause).as("future " + i).isInstanceOf(PoolOverloadedException.class);
        }
      } else {
        assertThat(probes[i].expired.get()).as("task " + i + " heard onExpired")
            .isEqualTo(cancelled[i] ? 0 : 1);
        assertThat(handles[i].isExpired()).isEqualTo(!cancelled[i]);
      }
    }
    PoolStats s = pool.stats();
    assertThat(s.expired()).as("expired in " + door).isEqualTo(expected);
    assertThat(s.submitted()).as("submitted: the gate only").isEqualTo(1);
    assertThat(s.completed()).isEqualTo(1);
    assertThat(s.failed() + s.rejected()).isZero();
    assertThat(s.waiting()).isZero();
    if (sub != null) {
      PoolStats t = sub.stats();
      assertThat(t.expired()).isEqualTo(expected);
      assertThat(t.submitted() + t.completed() + t.failed() + t.rejected()).isZero();
    }
  }

  /**
   * shutdownNow after withdrawals: the line's drain hands back exactly the tasks still waiting
   * (each with its task: only withdrawn entries gave theirs up), in every door; the pool
   * terminates with exact counters.
   */
  @ParameterizedTest(name = "{0}, adaptiveLifo={1}")
  @CsvSource({"pool,false", "pool,true", "subpool,false", "subpool,true"})
  void guarantee9_shutdownNowAfterWithdrawalsHandsBackEveryWaitingTask(String door, boolean lifo)
      throws Exception {
    WorkerPool pool = fixture.pool("r18n", b -> b.capacity(1).maxIdle(HOUR).maxWaiting(10_000)
        .adaptiveLifo(lifo));
    PoolFixture.Gate gate = fixture.occupy(pool);
    WorkerPool sub = door.equals("subpool") ? pool.newSubpool("sub", N) : null;
    WorkerPool target = sub != null ? sub : pool;
    List<CountingTask> waiting = new ArrayList<>();
    int withdrawn = 0;
    for (int i = 0; i < N; i++) {
      CountingTask p = new CountingTask();
      TaskHandle h = target.enqueue(p);
      if (i % 3 == 1 && h.cancel(false)) {
        withdrawn++;
      } else {
        waiting.add(p);
      }
    }
    assertThat(withdrawn).isEqualTo(N / 3);
    List<Runnable> back = pool.shutdownNow();
    gate.open();
    assertThat(pool.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    assertThat(back).as("handed back").hasSize(waiting.size());
    assertThat(back).containsExactlyInAnyOrderElementsOf(new ArrayList<Runnable>(waiting));
    for (CountingTask p : waiting) {
      assertThat(p.ran.get() + p.expired.get()).isZero();
    }
    PoolStats s = pool.stats();
    assertThat(s.expired() + s.failed() + s.rejected()).isZero();
    assertThat(s.waiting()).isZero();
    // guarantee 13: submitted == completed + failed + handed back (the gate completed)
    assertThat(s.submitted()).isEqualTo(s.completed() + s.failed() + back.size());
    assertThat(s.completed()).isEqualTo(1);
  }
}
