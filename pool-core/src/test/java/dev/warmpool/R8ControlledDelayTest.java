package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * r8 (adversarial review): controlled delay's "empty" on a sharded pool. Each shard has its own
 * line, but a shard's line learns that the pool caught up ({@code WaitingLine.seatFoundNoEntry})
 * only from its own shard's seats ({@code Admission.giveBackSeat}, {@code seatsGrew},
 * {@code drainLine}). A line whose entries were served by a sibling's seats ({@code serveFrom}) and
 * whose own seats stayed busy is never told that the pool went idle: the next line that forms there,
 * however long after, stands at once and sheds its entries at the target.
 */
@Timeout(60)
class R8ControlledDelayTest {
  private static final Duration TARGET = Duration.ofMillis(50);
  private static final Duration INTERVAL = Duration.ofMillis(800);

  @AutoClose final PoolFixture fixture = new PoolFixture();

  @Test
  void controlledDelay_aShardsLineEmptiedBySiblingSeatsDoesNotStandWhenThePoolCaughtUp() {
    WorkerPool.Builder b = WorkerPool.builder().name(PoolFixture.uniqueName("r8cd")).capacity(1)
        .maxIdle(Duration.ofHours(1)).controlledDelay(TARGET, INTERVAL);
    ShardedPool pool = (ShardedPool) fixture.track(
        ShardedPool.of(2, ShardedPool.Placement.ROUND_ROBIN, b));
    Map<Integer, CountDownLatch> releaseByShard = new ConcurrentHashMap<>();
    CountDownLatch bothBusy = new CountDownLatch(2);
    CountDownLatch releaseB = new CountDownLatch(1);
    CountDownLatch releaseA = new CountDownLatch(1);
    for (int i = 0; i < 2; i++) {
      CountDownLatch release = i == 0 ? releaseA : releaseB;
      pool.execute(() -> {
        releaseByShard.put(shardOf(pool), release);
        bothBusy.countDown();
        PoolFixture.awaitQuietly(release, Duration.ofSeconds(30));
      });
    }
    PoolFixture.await(bothBusy);
    int shardB = -1;
    for (Map.Entry<Integer, CountDownLatch> e : releaseByShard.entrySet()) {
      if (e.getValue() == releaseB) {
        shardB = e.getKey();
      }
    }
    int b2 = shardB;
    try {
      // X waits in B's line (B's own seat stays held throughout); A's seat serves it
      AtomicInteger ranX = new AtomicInteger();
      TaskHandle x = enqueueInto(pool, b2, ranX::incrementAndGet);
      releaseA.countDown();
      assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10), x::isDone)).isTrue();
      assertThat(ranX.get()).isEqualTo(1);
      // the pool caught up: A's seat is idle, no entry waits anywhere, for longer than the interval
      long since = System.nanoTime();
      assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10),
          () -> System.nanoTime() - since > INTERVAL.toNanos() + INTERVAL.toNanos() / 2)).isTrue();
      CountDownLatch releaseA2 = new CountDownLatch(1);
      CountDownLatch a2Busy = new CountDownLatch(1);
      pool.execute(() -> {
        a2Busy.countDown();
        PoolFixture.awaitQuietly(releaseA2, Duration.ofSeconds(30));
      });
      PoolFixture.await(a2Busy);
      try {
        AtomicInteger ranY = new AtomicInteger();
        TaskHandle y = enqueueInto(pool, b2, ranY::incrementAndGet);
        long joined = System.nanoTime();
        // a line that has just formed after the pool caught up may wait up to the interval:
        // 4 targets later, Y must still wait
        assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10),
            () -> System.nanoTime() - joined > 4 * TARGET.toNanos())).isTrue();
        assertThat(y.isExpired()).as("Y expired at the target on a line that just formed: %s", y)
            .isFalse();
        releaseA2.countDown();
        assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10), y::isDone)).isTrue();
        assertThat(ranY.get()).isEqualTo(1);
      } finally {
        releaseA2.countDown();
      }
    } finally {
      releaseByShard.values().forEach(CountDownLatch::countDown);
    }
  }

  /** Control: a plain pool whose line was served and went idle does not stand at the next join. */
  @Test
  void controlledDelay_control_aPlainPoolsNextLineAfterCatchingUpDoesNotStand() {
    WorkerPool pool = fixture.track(WorkerPool.builder().name(PoolFixture.uniqueName("r8cdp"))
        .capacity(1).maxIdle(Duration.ofHours(1)).controlledDelay(TARGET, INTERVAL).build());
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch busy = new CountDownLatch(1);
    pool.execute(() -> {
      busy.countDown();
      PoolFixture.awaitQuietly(release, Duration.ofSeconds(30));
    });
    PoolFixture.await(busy);
    AtomicInteger ranX = new AtomicInteger();
    TaskHandle x = pool.enqueue(ranX::incrementAndGet);
    release.countDown();
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10), x::isDone)).isTrue();
    long since = System.nanoTime();
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10),
        () -> System.nanoTime() - since > INTERVAL.toNanos() + INTERVAL.toNanos() / 2)).isTrue();
    CountDownLatch release2 = new CountDownLatch(1);
    CountDownLatch busy2 = new CountDownLatch(1);
    pool.execute(() -> {
      busy2.countDown();
      PoolFixture.awaitQuietly(release2, Duration.ofSeconds(30));
    });
    PoolFixture.await(busy2);
    try {
      AtomicInteger ranY = new AtomicInteger();
      TaskHandle y = pool.enqueue(ranY::incrementAndGet);
      long joined = System.nanoTime();
      assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10),
          () -> System.nanoTime() - joined > 4 * TARGET.toNanos())).isTrue();
      assertThat(y.isExpired()).isFalse();
      release2.countDown();
      assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10), y::isDone)).isTrue();
      assertThat(ranY.get()).isEqualTo(1);
    } finally {
      release2.countDown();
    }
  }

  private static int shardOf(WorkerPool pool) {
    String n = Thread.currentThread().getName().substring(pool.name().length() + 1);
    return Integer.parseInt(n.substring(0, n.indexOf('-')));
  }

  /** Enqueues into shard {@code shard}'s line (every shard full): withdraws and retries elsewhere. */
  private static TaskHandle enqueueInto(ShardedPool pool, int shard, Runnable task) {
    for (int i = 0; i < 4; i++) {
      TaskHandle h = pool.enqueue(task);
      if (pool.stats(shard).waiting() == 1) {
        return h;
      }
      assertThat(h.cancel()).isTrue(); // it waits in the other shard's line: round robin moves on
    }
    throw new AssertionError("could not place into shard " + shard);
  }
}
