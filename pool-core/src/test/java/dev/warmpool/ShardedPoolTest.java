package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ShardedPoolTest {

  @Test
  void roundRobinSpreadsTasksOverEveryShard() throws Exception {
    try (ShardedPool pool = ShardedPool.of(4, ShardedPool.Placement.ROUND_ROBIN,
        WorkerPool.builder().name("rr").capacity(2))) {
      Set<String> shardsUsed = ConcurrentHashMap.newKeySet();
      CountDownLatch done = new CountDownLatch(8);
      for (int i = 0; i < 8; i++) {
        pool.execute(() -> {
          String n = Thread.currentThread().getName(); // rr-<shard>-<n>
          shardsUsed.add(n.substring(0, n.lastIndexOf('-')));
          done.countDown();
        });
      }
      assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
      assertThat(shardsUsed).containsExactlyInAnyOrder("rr-0", "rr-1", "rr-2", "rr-3");
      assertThat(pool).isInstanceOf(WorkerPool.class);
      assertThat(pool.capacity()).isEqualTo(8);
    }
  }

  @Test
  void leastBusyPicksTheShardWithFewestBusyWorkers() throws Exception {
    try (ShardedPool pool = ShardedPool.of(2, ShardedPool.Placement.LEAST_BUSY,
        WorkerPool.builder().name("lb").capacity(4))) {
      CountDownLatch release = new CountDownLatch(1);
      pool.execute(() -> SerialLaneTest.block(release)); // shard 0 now has one busy worker
      await().until(() -> pool.stats(0).busy() == 1);
      String[] ranOn = new String[1];
      CountDownLatch done = new CountDownLatch(1);
      pool.execute(() -> {
        ranOn[0] = Thread.currentThread().getName();
        done.countDown();
      });
      assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
      assertThat(ranOn[0]).startsWith("lb-1-");
      release.countDown();
    }
  }

  @Test
  void aNonblockingShardedPoolRejectsOnlyWhenEveryShardIsFull() throws Exception {
    try (ShardedPool pool = ShardedPool.of(3, ShardedPool.Placement.ROUND_ROBIN,
        WorkerPool.builder().name("nb").capacity(1).nonblocking(true))) {
      CountDownLatch release = new CountDownLatch(1);
      try {
        pool.execute(() -> SerialLaneTest.block(release));
        // round robin now points at shard 1; shard 0 is full but the others are tried first
        pool.execute(() -> SerialLaneTest.block(release));
        pool.execute(() -> SerialLaneTest.block(release));
        assertThatThrownBy(() -> pool.execute(() -> {}))
            .isInstanceOf(PoolOverloadedException.class);
        assertThat(pool.tryExecute(() -> {})).isFalse();
        // A shard's worker for a probed task starts in the background (version 3): busy once it runs.
        await().untilAsserted(() -> assertThat(pool.stats().busy()).isEqualTo(3));
        assertThat(pool.stats().rejected()).isEqualTo(2);
      } finally {
        release.countDown(); // also when an assertion failed: close() waits for these tasks
      }
    }
  }

  @Test
  void resizeSpreadsTheCapacityAndShutdownClosesEveryShard() throws Exception {
    ShardedPool pool = ShardedPool.of(2, ShardedPool.Placement.ROUND_ROBIN,
        WorkerPool.builder().name("rs").capacity(2));
    pool.resize(5);
    assertThat(pool.stats(0).capacity()).isEqualTo(3);
    assertThat(pool.stats(1).capacity()).isEqualTo(2);
    assertThatThrownBy(() -> pool.resize(1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1");
    pool.execute(() -> {});
    pool.shutdown();
    assertThatThrownBy(() -> pool.execute(() -> {})).isInstanceOf(PoolClosedException.class);
    assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    assertThat(pool.isTerminated()).isTrue();
    pool.reboot();
    CountDownLatch ran = new CountDownLatch(1);
    pool.execute(ran::countDown);
    assertThat(ran.await(5, TimeUnit.SECONDS)).isTrue();
    pool.close();
    assertThat(pool.toString()).isEqualTo("shardedPool(\"rs\",shards=2,capacity=5,maxIdle=1m)");
  }
}
