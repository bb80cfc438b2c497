package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Guarantee 13 (counters are exact), review 4 fault 15: an expiry is counted before anything
 * announces it. Whoever sees an entry expired (its handle, its future, its {@code onExpired}, a
 * lane task's handle, a subpool task's handle) reads it in {@code stats().expired()} at once, with no
 * waiting: the count is part of the expiry, not a later step. Each test spins on the signal and
 * reads the counter the instant it appears, round after round; before the fix the plain-task case
 * failed within its first few hundred rounds on this machine.
 */
@Tag("stress")
@Timeout(120)
class ExpiryCountedBeforeSignalTest {
  private static final int ROUNDS = 5_000;
  private static final Duration AT_ONCE = Duration.ofNanos(1);
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private WorkerPool fullPool() {
    WorkerPool pool = fixture.pool("counted-expiry",
        b -> b.capacity(1).maxIdle(Duration.ofHours(1)).maxWaiting(ROUNDS));
    fixture.occupy(pool);
    return pool;
  }

  @Test
  void guarantee13_aTaskHandleThatReadsExpiredFindsItCounted() {
    WorkerPool pool = fullPool();
    for (int i = 1; i <= ROUNDS; i++) {
      TaskHandle h = pool.enqueue(() -> { }, AT_ONCE);
      while (!h.isExpired()) {
        Thread.onSpinWait();
      }
      assertThat(pool.stats().expired()).as("round %d", i).isEqualTo(i);
    }
    assertThat(pool.stats().submitted()).as("expired tasks leave submitted").isEqualTo(1);
  }

  @Test
  void guarantee13_aFutureThatFailsExpiredFindsItCounted() throws Exception {
    WorkerPool pool = fixture.pool("counted-expiry-future", b -> b.capacity(1)
        .maxIdle(Duration.ofHours(1)).maxWaiting(ROUNDS).maxWaitInLine(Duration.ofNanos(1)));
    fixture.occupy(pool);
    for (int i = 1; i <= ROUNDS / 4; i++) {
      Future<?> f = pool.submit(() -> { });
      while (!f.isDone()) {
        Thread.onSpinWait();
      }
      assertThat(pool.stats().expired()).as("round %d", i).isEqualTo(i);
    }
  }

  @Test
  void guarantee13_aLaneTaskHandleThatReadsExpiredFindsItCounted() {
    WorkerPool pool = fixture.pool("counted-expiry-lane", b -> b.capacity(1)
        .maxIdle(Duration.ofHours(1)).maxWaiting(ROUNDS).maxWaitInLine(Duration.ofNanos(1)));
    fixture.occupy(pool);
    for (int i = 1; i <= ROUNDS / 4; i++) {
      SerialExecutor lane = pool.newSerialExecutor();
      TaskHandle h = lane.enqueue(() -> { });
      while (!h.isExpired()) {
        Thread.onSpinWait();
      }
      assertThat(pool.stats().expired()).as("round %d", i).isEqualTo(i);
      lane.close();
    }
  }

  @Test
  void guarantee13_aSubpoolTaskHandleThatReadsExpiredFindsItCounted() {
    WorkerPool parent = fullPool();
    WorkerPool sub = parent.newSubpool("sub", 1);
    for (int i = 1; i <= ROUNDS / 4; i++) {
      TaskHandle h = sub.enqueue(() -> { }, AT_ONCE);
      while (!h.isExpired()) {
        Thread.onSpinWait();
      }
      assertThat(sub.stats().expired()).as("subpool, round %d", i).isEqualTo(i);
      assertThat(parent.stats().expired()).as("parent, round %d", i).isEqualTo(i);
    }
  }

  @Test
  void guarantee13_anOnExpiredCallbackFindsItCounted() throws Exception {
    WorkerPool pool = fullPool();
    for (int i = 1; i <= ROUNDS / 4; i++) {
      CompletableFuture<Long> seen = new CompletableFuture<>();
      pool.enqueue(new CancellationAware() {
        @Override
        public void run() { }

        @Override
        public void onCancel() {
          seen.completeExceptionally(new AssertionError("cancelled, not expired"));
        }

        @Override
        public void onExpired(PoolOverloadedException cause) {
          seen.complete(pool.stats().expired());
        }
      }, AT_ONCE);
      assertThat(seen.get(20, TimeUnit.SECONDS)).as("round %d", i).isEqualTo(i);
    }
  }
}
