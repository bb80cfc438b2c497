package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitIdle;
import static dev.warmpool.PoolFixture.awaitWaiting;
import static dev.warmpool.PoolFixture.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link PoolStats}: the gauges describe the moment of the snapshot; at quiescence
 * {@code submitted == completed + failed + returnedByShutdownNow} and
 * {@code workersStarted - workersExpired - workersStopped == workers}.
 */
@Timeout(60) // seconds per test: a hang fails the test instead of stalling the build
class StatsTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private static void assertWorkerBalance(PoolStats s) {
    assertThat(s.workersStarted() - s.workersExpired() - s.workersStopped())
        .as("workersStarted - workersExpired - workersStopped in %s", s)
        .isEqualTo(s.workers());
  }

  private static void assertTaskBalance(PoolStats s, long returnedByShutdownNow) {
    assertThat(s.submitted())
        .as("submitted == completed + failed + returned (%d) in %s", returnedByShutdownNow, s)
        .isEqualTo(s.completed() + s.failed() + returnedByShutdownNow);
  }

  @Test
  void freshPoolHasOnlyItsCapacity() {
    PoolStats s = fixture.pool("fresh", b -> b.capacity(7)).stats();
    assertThat(s.capacity()).isEqualTo(7);
    assertThat(List.of(s.workers(), s.busy(), s.idle(), s.waiting())).containsOnly(0);
    assertThat(List.of(s.submitted(), s.completed(), s.failed(), s.rejected(), s.workersStarted(),
        s.workersExpired(), s.workersStopped())).containsOnly(0L);
  }

  @Test
  void gaugesDescribeBusyIdleAndWaitingWorkers() {
    WorkerPool pool = fixture.pool("gauges", b -> b.capacity(3).maxIdle(Duration.ofMinutes(5)));
    List<PoolFixture.Gate> gates = fixture.gates(3);
    gates.forEach(g -> pool.execute(g.task()));
    gates.forEach(PoolFixture.Gate::awaitArrival);
    pool.enqueue(() -> { });
    pool.enqueue(() -> { });
    fixture.call("blocked", () -> pool.execute(() -> { }));
    awaitWaiting(pool, 3);

    PoolStats full = pool.stats();
    assertThat(full.workers()).isEqualTo(3);
    assertThat(full.busy()).isEqualTo(3);
    assertThat(full.idle()).isZero();
    assertThat(full.waiting()).isEqualTo(3);
    assertThat(full.submitted()).as("a blocked caller's task is not accepted yet").isEqualTo(5);

    gates.forEach(PoolFixture.Gate::open);
    awaitIdle(pool, 3);
    PoolStats quiet = pool.stats();
    assertThat(quiet.workers()).isEqualTo(3);
    assertThat(quiet.busy()).isZero();
    assertThat(quiet.waiting()).isZero();
    assertThat(quiet.submitted()).isEqualTo(6);
    assertThat(quiet.completed()).isEqualTo(6);
  }

  @Test
  void rejectedCountsEveryRefusedCallAndNeverCountsAsSubmitted() throws Exception {
    WorkerPool pool = fixture.pool("rejects", b -> b.capacity(1).maxWaiting(1));
    List<PoolFixture.Gate> gates = fixture.gates(1);
    pool.execute(gates.get(0).task());
    gates.get(0).awaitArrival();
    pool.enqueue(() -> { }); // fills the line

    assertThat(pool.tryExecute(() -> { })).isFalse();
    assertThatThrownBy(() -> pool.execute(() -> { })).isInstanceOf(PoolOverloadedException.class);
    assertThatThrownBy(() -> pool.enqueue(() -> { })).isInstanceOf(PoolOverloadedException.class);
    assertThatThrownBy(() -> pool.tryExecute(() -> { }, Duration.ofMillis(10)))
        .isInstanceOf(PoolOverloadedException.class);

    PoolStats s = pool.stats();
    assertThat(s.rejected()).isEqualTo(4);
    assertThat(s.submitted()).isEqualTo(2);
  }

  @Test
  void countersAddUpAtQuiescenceAfterAMixedLife() throws Exception {
    PoolFixture.ManualTicker ticker = new PoolFixture.ManualTicker();
    BoundedPool pool = (BoundedPool) fixture.pool("life", b -> b.capacity(4).maxWaiting(100)
        .maxIdle(Duration.ofHours(1)).ticker(ticker).failureHandler((t, e) -> { }));
    AtomicInteger ran = new AtomicInteger();

    // 40 tasks, every 4th throws, on four workers.
    for (int i = 0; i < 40; i++) {
      boolean fails = i % 4 == 0;
      pool.execute(() -> {
        ran.incrementAndGet();
        if (fails) {
          throw new IllegalStateException("planned");
        }
      });
    }
    eventually().untilAsserted(() -> assertThat(ran.get()).isEqualTo(40));
    eventually().untilAsserted(() -> assertThat(pool.stats().busy()).isZero());
    PoolStats afterTasks = pool.stats();
    assertTaskBalance(afterTasks, 0);
    assertWorkerBalance(afterTasks);
    assertThat(afterTasks.failed()).isEqualTo(10);

    // Four busy workers; rejections while full.
    List<PoolFixture.Gate> gates = fixture.gates(4);
    gates.forEach(g -> pool.execute(g.task()));
    gates.forEach(PoolFixture.Gate::awaitArrival);
    assertThat(pool.tryExecute(() -> { })).isFalse();
    assertThat(pool.tryExecute(() -> { }, Duration.ofMillis(20))).isFalse();

    // Shrink while busy, then release: two workers leave after their task.
    pool.resize(2);
    gates.forEach(PoolFixture.Gate::open);
    eventually().untilAsserted(() -> assertThat(pool.stats().workers()).isEqualTo(2));
    awaitIdle(pool, 2);
    PoolStats afterShrink = pool.stats();
    assertWorkerBalance(afterShrink);
    assertTaskBalance(afterShrink, 0);
    assertThat(afterShrink.workersStopped()).isEqualTo(2);
    assertThat(afterShrink.rejected()).isEqualTo(2);

    // Expire both idle workers.
    ticker.set(Duration.ofHours(2));
    pool.retireExpired();
    eventually().untilAsserted(() -> assertThat(pool.stats().workers()).isZero());
    PoolStats afterExpiry = pool.stats();
    assertWorkerBalance(afterExpiry);
    assertThat(afterExpiry.workersExpired()).isEqualTo(2);

    // Close with tasks in line: shutdownNow returns them.
    PoolFixture.Gate last = fixture.gate();
    pool.resize(1);
    pool.execute(last.task());
    last.awaitArrival();
    pool.enqueue(() -> { });
    pool.enqueue(() -> { });
    List<Runnable> returned = pool.shutdownNow();
    assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue();

    PoolStats end = pool.stats();
    assertThat(returned).hasSize(2);
    assertWorkerBalance(end);
    assertThat(end.workers()).isZero();
    assertTaskBalance(end, returned.size());
  }

  @Test
  void tasksReturnedByShutdownNowStillCountAsSubmitted() throws Exception {
    WorkerPool pool = fixture.pool("returned", b -> b.capacity(1));
    PoolFixture.Gate gate = fixture.occupy(pool);
    for (int i = 0; i < 3; i++) {
      pool.enqueue(() -> { });
    }
    long submittedBefore = pool.stats().submitted();

    List<Runnable> returned = pool.shutdownNow();
    pool.awaitTermination(5, TimeUnit.SECONDS);

    assertThat(returned).hasSize(3);
    PoolStats s = pool.stats();
    assertThat(s.submitted()).as("submitted only grows").isGreaterThanOrEqualTo(submittedBefore);
    assertTaskBalance(s, returned.size());
  }
}
