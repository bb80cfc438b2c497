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
 * r5 (adversarial review of version 4): controlled delay at a sibling shard's hand-off. A seat
 * freed in a shard sheds the overdue entries of its own line before serving it
 * ({@code Admission.shedOverdue}: "no seat ever serves an entry that the rule has already
 * refused"), but a seat that serves a sibling's line ({@code serveFrom}, {@code moveHeadTo},
 * {@code WaitingLine.pollFor}) does not look: it runs an entry whose controlled-delay bound has
 * passed, when its timer is late.
 */
@Timeout(60)
class R5ShardedControlledDelayTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  @Test
  void guarantee14_aSiblingShardsSeatNeverServesAnEntryPastItsControlledDelayBound() {
    WorkerPool.Builder b = WorkerPool.builder().name(PoolFixture.uniqueName("r5shard")).capacity(1)
        .maxIdle(Duration.ofHours(1)).controlledDelay(Duration.ofMillis(1), Duration.ofMillis(20));
    ShardedPool pool = (ShardedPool) fixture.track(
        ShardedPool.of(2, ShardedPool.Placement.ROUND_ROBIN, b));
    Map<Integer, CountDownLatch> releaseByShard = new ConcurrentHashMap<>();
    CountDownLatch bothBusy = new CountDownLatch(2);
    for (int i = 0; i < 2; i++) {
      CountDownLatch release = new CountDownLatch(1);
      pool.execute(() -> {
        String n = Thread.currentThread().getName().substring(pool.name().length() + 1);
        releaseByShard.put(Integer.parseInt(n.substring(0, n.indexOf('-'))), release);
        bothBusy.countDown();
        PoolFixture.awaitQuietly(release, Duration.ofSeconds(30));
      });
    }
    PoolFixture.await(bothBusy);
    CountDownLatch releaseTimer = PoolFixture.holdSharedTimer();
    try {
      AtomicInteger ran = new AtomicInteger();
      TaskHandle a = pool.enqueue(ran::incrementAndGet);
      int waitingShard = pool.stats(0).waiting() == 1 ? 0 : 1;
      assertThat(pool.stats(waitingShard).waiting()).isEqualTo(1);
      long since = System.nanoTime();
      // a's bound (its line has stood 20 ms) passes; its timer cannot fire: the timer is held
      assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10),
          () -> System.nanoTime() - since > Duration.ofMillis(30).toNanos())).isTrue();
      releaseByShard.get(1 - waitingShard).countDown(); // the sibling's seat frees
      assertThat(PoolFixture.waitUntil(Duration.ofSeconds(5), a::isDone)).isTrue();
      assertThat(a.isExpired()).as("ran %d time(s), handle %s", ran.get(), a).isTrue();
      assertThat(ran.get()).isZero();
    } finally {
      releaseTimer.countDown();
      releaseByShard.values().forEach(CountDownLatch::countDown);
    }
  }
}
