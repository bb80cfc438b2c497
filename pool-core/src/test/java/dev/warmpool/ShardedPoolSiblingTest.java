package dev.warmpool;

import static dev.warmpool.PoolFixture.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.PoolFixture.Gate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Guarantee 14 for serial lanes and waiters (issue 30, faults 4 and 5): a lane of a sharded pool
 * takes its seat in whichever shard has one free when it activates, and a seat freed in a shard
 * whose own line is empty serves a waiter of a sibling's line, so that nothing waits (or expires)
 * while another shard has a free seat. Two single-seat shards; one is held busy by a gated task.
 */
@Timeout(60)
class ShardedPoolSiblingTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private static final long SOON_MS = 5_000;

  private ShardedPool sharded(String base, boolean nonblocking, Duration maxWaitInLine) {
    WorkerPool.Builder b = WorkerPool.builder().name(PoolFixture.uniqueName(base)).capacity(1)
        .nonblocking(nonblocking);
    if (maxWaitInLine != null) {
      b.maxWaitInLine(maxWaitInLine);
    }
    return (ShardedPool) fixture.track(ShardedPool.of(2, ShardedPool.Placement.ROUND_ROBIN, b));
  }

  /** The shard whose worker ran on {@code t} (threads are named {@code <name>-<shard>-<n>}). */
  private static int shardOf(ShardedPool pool, Thread t) {
    String n = t.getName().substring(pool.name().length() + 1);
    return Integer.parseInt(n.substring(0, n.indexOf('-')));
  }

  /** At quiescence, each shard's counters are exact on their own: submitted = completed + failed. */
  private static void assertExactPerShard(ShardedPool pool) {
    for (int i = 0; i < pool.shards(); i++) {
      int shard = i;
      eventually().untilAsserted(() -> {
        PoolStats s = pool.stats(shard);
        assertThat(s.submitted()).as("shard %d: %s", shard, s)
            .isEqualTo(s.completed() + s.failed());
        assertThat(s.busy()).as("shard %d: %s", shard, s).isZero();
        assertThat(s.waiting()).as("shard %d: %s", shard, s).isZero();
      });
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Fault 4: a lane is not tied to one shard

  @Test
  void guarantee14_aNonblockingShardedLaneTakesItsSeatInWhicheverShardHasOne() throws Exception {
    ShardedPool pool = sharded("lane-nb", true, null);
    // Round robin: the two lanes are made in turn, so before the fix each was tied to its own
    // shard, and whichever shard is busy, one of them was tied to it.
    List<SerialExecutor> lanes = List.of(pool.newSerialExecutor(), pool.newSerialExecutor());
    for (int round = 0; round < 2; round++) {
      Gate busy = fixture.gate();
      int busyShard = shardOf(pool, occupy(pool, busy));
      for (SerialExecutor lane : lanes) {
        CountDownLatch ran = new CountDownLatch(1);
        AtomicReference<Thread> on = new AtomicReference<>();
        lane.execute(() -> {
          on.set(Thread.currentThread());
          ran.countDown();
        }); // before the fix: PoolOverloadedException for the lane tied to the busy shard
        assertThat(ran.await(SOON_MS, TimeUnit.MILLISECONDS)).isTrue();
        assertThat(shardOf(pool, on.get())).as("the lane ran in the free shard")
            .isEqualTo(1 - busyShard);
        eventually().until(() -> pool.stats(1 - busyShard).busy() == 0);
      }
      busy.open();
      eventually().until(() -> pool.stats().busy() == 0);
    }
    assertThat(pool.stats().rejected()).isZero();
    assertExactPerShard(pool);
  }

  @Test
  void guarantee14_aBlockingShardedLaneNeverWaitsWhileAnotherShardHasAFreeSeat() throws Exception {
    ShardedPool pool = sharded("lane-bl", false, null);
    List<SerialExecutor> lanes = List.of(pool.newSerialExecutor(), pool.newSerialExecutor());
    for (int round = 0; round < 2; round++) {
      Gate busy = fixture.gate();
      int busyShard = shardOf(pool, occupy(pool, busy));
      for (SerialExecutor lane : lanes) {
        CountDownLatch ran = new CountDownLatch(1);
        lane.execute(ran::countDown);
        assertThat(ran.await(SOON_MS, TimeUnit.MILLISECONDS))
            .as("the lane ran while shard %d was busy (%s)", busyShard,
                ShardPlacementStressTest.shards(pool))
            .isTrue();
        eventually().until(() -> pool.stats(1 - busyShard).busy() == 0);
      }
      busy.open();
      eventually().until(() -> pool.stats().busy() == 0);
    }
    assertExactPerShard(pool);
  }

  /** Runs a gated task, waits until it runs, and returns its worker thread. */
  private static Thread occupy(ShardedPool pool, Gate gate) {
    pool.execute(gate.task());
    return gate.awaitArrival();
  }

  // ---------------------------------------------------------------------------------------------
  // Fault 5: a seat freed in a shard whose line is empty serves a sibling's waiter

  /** Both shards busy; returns the gates, indexed by shard. */
  private static Gate[] fillBothShards(PoolFixture fixture, ShardedPool pool) {
    Gate[] byShard = new Gate[2];
    for (int i = 0; i < 2; i++) {
      Gate g = fixture.gate();
      byShard[shardOf(pool, occupy(pool, g))] = g;
    }
    assertThat(byShard).doesNotContainNull();
    return byShard;
  }

  /** The shard whose line holds the one waiter. */
  private static int waitingShard(ShardedPool pool) {
    eventually().until(() -> pool.stats().waiting() == 1);
    return pool.stats(0).waiting() == 1 ? 0 : 1;
  }

  @Test
  void guarantee14_aBlockedShardedExecuteIsServedByASiblingsFreedSeatAndNeverExpires()
      throws Exception {
    ShardedPool pool = sharded("wait-bl", false, Duration.ofSeconds(3));
    Gate[] byShard = fillBothShards(fixture, pool);
    CountDownLatch ran = new CountDownLatch(1);
    PoolFixture.Caller<Void> caller = fixture.call("execute", () -> pool.execute(ran::countDown));
    int line = waitingShard(pool);
    byShard[1 - line].open(); // the shard whose own line is empty frees its seat
    // Before the fix: the caller waited in its shard's line until that shard freed up, or expired.
    assertThat(ran.await(SOON_MS, TimeUnit.MILLISECONDS))
        .as("the waiter ran in the freed sibling (%s)", ShardPlacementStressTest.shards(pool))
        .isTrue();
    caller.result();
    assertThat(byShard[line].hasArrived() && !byShard[line].passed()).as("still held").isTrue();
    byShard[line].open();
    assertThat(pool.stats().expired()).isZero();
    assertExactPerShard(pool);
  }

  @Test
  void guarantee14_aShardedTaskWaitingInLineIsServedByASiblingsFreedSeat() throws Exception {
    ShardedPool pool = sharded("wait-eq", false, null);
    Gate[] byShard = fillBothShards(fixture, pool);
    CountDownLatch ran = new CountDownLatch(1);
    TaskHandle h = pool.enqueue(ran::countDown, Duration.ofSeconds(3));
    int line = waitingShard(pool);
    byShard[1 - line].open();
    assertThat(ran.await(SOON_MS, TimeUnit.MILLISECONDS))
        .as("the waiting task ran in the freed sibling (%s)", ShardPlacementStressTest.shards(pool))
        .isTrue();
    eventually().until(h::isDone);
    assertThat(h.isExpired()).isFalse();
    assertThat(h.cancel()).as("a task that ran cannot be withdrawn").isFalse();
    byShard[line].open();
    assertThat(pool.stats().expired()).isZero();
    assertExactPerShard(pool);
  }

  /**
   * A lane counts its tasks in its own shard; when it waited for its first seat in another shard's
   * line (every shard was full) and expired there, its tasks leave its own shard's counts, so that
   * each shard's counters stay exact and none goes negative (guarantee 13 on a sharded pool).
   */
  @Test
  void guarantee13_aShardedLaneThatExpiresInAnotherShardsLineIsCountedInItsOwnShard()
      throws Exception {
    ShardedPool pool = sharded("lane-exp", false, Duration.ofMillis(50));
    Gate[] byShard = fillBothShards(fixture, pool); // round robin turns 0 and 1
    SerialExecutor lane = pool.newSerialExecutor(); // turn 2: counted in shard 0
    CountDownLatch heard = new CountDownLatch(1);
    lane.execute(new CancellationAware() { // turn 3: waits in shard 1's line
      @Override
      public void run() {
        throw new AssertionError("an expired task ran");
      }

      @Override
      public void onCancel() {
        heard.countDown();
      }
    });
    assertThat(heard.await(SOON_MS, TimeUnit.MILLISECONDS)).as("the lane's task expired").isTrue();
    eventually().untilAsserted(() -> assertThat(pool.stats().expired()).isEqualTo(1));
    assertThat(pool.stats(0).expired()).as("counted in the lane's own shard").isEqualTo(1);
    byShard[0].open();
    byShard[1].open();
    assertExactPerShard(pool);
  }

  /**
   * A due timer is admitted work: it too takes a free seat in any shard before it waits in one
   * shard's line, also when that shard never started a worker (no worker at hand to move it).
   */
  @Test
  void guarantee14_aShardedPoolsDueTimerTakesAFreeSeatInAnyShard() throws Exception {
    ShardedPool pool = sharded("timer", false, null);
    Gate busy = fixture.gate();
    int busyShard = shardOf(pool, occupy(pool, busy)); // round robin turn 0: shard 0
    assertThat(busyShard).isZero();
    pool.newSerialExecutor(); // turn 1: starts nothing, so shard 1 stays cold
    CountDownLatch ran = new CountDownLatch(1);
    pool.schedule(ran::countDown, 0, TimeUnit.MILLISECONDS); // due at turn 2: shard 0 first
    assertThat(ran.await(SOON_MS, TimeUnit.MILLISECONDS))
        .as("the due timer ran in the free shard (%s)", ShardPlacementStressTest.shards(pool))
        .isTrue();
    busy.open();
    assertExactPerShard(pool);
  }
}
