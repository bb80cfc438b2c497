package dev.warmpool;

import static dev.warmpool.PoolFixture.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.LaneAndShardFaultsTest.Racer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Guarantee 14 under races (issue 30, fault 6): a nonblocking sharded pool rejects only when every
 * shard is full. Each round, two single-seat shards are free and two gated tasks race for them, an
 * {@code enqueue} on the test thread and a {@code tryExecute} on a {@link Racer}: both must be
 * accepted. The round count is {@code -Dwarmpool.stress.rounds} (default 3,000), so a long loop
 * can be run on demand; every round is checked, and the test fails on any rejection.
 */
@Tag("stress")
@Timeout(900)
class ShardPlacementStressTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private static final int ROUNDS = Integer.getInteger("warmpool.stress.rounds", 3_000);
  private static final Duration SOON = Duration.ofSeconds(5);

  @Test
  void guarantee14_nonblockingShardedEnqueueRacingTryExecuteIsNeverRejectedWhileAShardIsFree()
      throws Exception {
    for (ShardedPool.Placement placement : ShardedPool.Placement.values()) {
      ShardedPool pool = (ShardedPool) fixture.track(ShardedPool.of(2, placement,
          WorkerPool.builder().name(PoolFixture.uniqueName("shard6")).capacity(1)
              .nonblocking(true)));
      List<String> faults = raceEnqueueWithTryExecute(pool, ROUNDS);
      assertThat(faults).as("rounds (of %d, %s) with a rejection while a shard had a free seat",
          ROUNDS, placement).isEmpty();
      assertThat(pool.stats().rejected()).isZero();
    }
  }

  /** Runs the rounds; returns a description of each faulty one. */
  private static List<String> raceEnqueueWithTryExecute(ShardedPool pool, int rounds)
      throws Exception {
    List<String> faults = new ArrayList<>();
    Runnable[] theirs = new Runnable[1];
    boolean[] theirsAccepted = new boolean[1];
    long completed = 0;
    try (Racer racer = new Racer("racer-tryExecute", round -> {
      LaneAndShardFaultsTest.jitter(16);
      theirsAccepted[0] = pool.tryExecute(theirs[0]);
    })) {
      for (int r = 1; r <= rounds; r++) {
        CountDownLatch open = new CountDownLatch(1);
        CountDownLatch ends = new CountDownLatch(2);
        Runnable gated = () -> {
          try {
            open.await(SOON.toMillis(), TimeUnit.MILLISECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } finally {
            ends.countDown();
          }
        };
        theirs[0] = gated;
        racer.go(r);
        LaneAndShardFaultsTest.jitter(16);
        boolean mine;
        try {
          pool.enqueue(gated);
          mine = true;
        } catch (RejectedExecutionException rejected) {
          mine = false;
        }
        assertThat(racer.awaitDone(r, SOON)).as("round %d: tryExecute returned", r).isTrue();
        if (!mine || !theirsAccepted[0]) {
          faults.add("round " + r + ": enqueue " + (mine ? "accepted" : "rejected")
              + ", tryExecute " + (theirsAccepted[0] ? "accepted" : "rejected") + " ("
              + shards(pool) + ")");
        }
        open.countDown();
        int ran = (mine ? 1 : 0) + (theirsAccepted[0] ? 1 : 0);
        for (int i = ran; i < 2; i++) {
          ends.countDown();
        }
        assertThat(ends.await(SOON.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        completed += ran;
        long expected = completed;
        // Quiescence: every task counted and every seat back (busy counts seats held).
        eventually().atMost(SOON).until(() -> pool.stats().completed() == expected
            && pool.stats(0).busy() == 0 && pool.stats(1).busy() == 0);
      }
    }
    return faults;
  }

  static String shards(ShardedPool pool) {
    List<String> parts = new ArrayList<>();
    for (int i = 0; i < pool.shards(); i++) {
      PoolStats s = pool.stats(i);
      parts.add("shard " + i + ": busy " + s.busy() + "/" + s.capacity() + ", waiting "
          + s.waiting() + ", rejected " + s.rejected());
    }
    return String.join("; ", parts);
  }
}
