package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review r7: a sharded pool's lane whose admitted dispatch meets a terminated shard. Shards shut
 * down and terminate one by one: here one shard is idle (it terminates at once) and the other runs
 * a gated task (shut down, not terminated). Callers that passed the lane's open check before the
 * shutdown (held in the task decorator, which runs after that check) are released together: the
 * first dispatches the lane ({@code SerialLane.scheduleAdmitted}); with every seat taken it waits in
 * {@code all[first]}'s line, and is refused if that shard is the terminated one. The refusal clears
 * {@code scheduled} and throws only the dispatcher's own task; the callers that rode along (their
 * {@code enter} found the lane dispatched, and the sharded pool not terminated, since a shard still
 * runs) returned normally, and their tasks stay in a queue nobody dispatches.
 */
@Timeout(120)
class R7ShardedLaneTest {
  private static final Duration HOUR = Duration.ofHours(1);
  private static final int CALLERS = 6;
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private static boolean shardTerminated(ShardedPool pool) throws ReflectiveOperationException {
    java.lang.reflect.Field f = ShardedPool.class.getDeclaredField("shards");
    f.setAccessible(true);
    for (BoundedPool p : (BoundedPool[]) f.get(pool)) {
      if (p.isTerminated()) {
        return true;
      }
    }
    return false;
  }

  /** One round: whether every task whose call returned normally ran, and the counts. */
  private String round(int round) throws Exception {
    CountDownLatch held = new CountDownLatch(CALLERS);
    CountDownLatch release = new CountDownLatch(1);
    ThreadLocal<Boolean> hold = ThreadLocal.withInitial(() -> false);
    ShardedPool pool = (ShardedPool) fixture.track(ShardedPool.of(2,
        ShardedPool.Placement.ROUND_ROBIN, WorkerPool.builder()
            .name(PoolFixture.uniqueName("r7shlane")).capacity(1).maxIdle(HOUR)
            .taskDecorator(t -> {
              if (hold.get()) {
                held.countDown();
                PoolFixture.awaitQuietly(release, Duration.ofSeconds(30));
              }
              return t;
            })));
    SerialExecutor lane = pool.newSerialExecutor();
    CountDownLatch admittedRan = new CountDownLatch(1);
    lane.executeAdmitted(admittedRan::countDown);
    PoolFixture.await(admittedRan);
    PoolFixture.Gate gate = fixture.occupy(pool); // one shard busy, the other idle
    AtomicInteger thrown = new AtomicInteger();
    AtomicInteger ran = new AtomicInteger();
    AtomicInteger returned = new AtomicInteger();
    List<PoolFixture.Background> callers = new ArrayList<>();
    for (int i = 0; i < CALLERS; i++) {
      callers.add(PoolFixture.background("caller", () -> {
        hold.set(true);
        try {
          lane.executeAdmitted(ran::incrementAndGet);
          returned.incrementAndGet();
        } catch (RejectedExecutionException refused) {
          thrown.incrementAndGet();
        }
      }));
    }
    PoolFixture.await(held); // each passed the open check
    pool.shutdown();
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(20), () -> {
      try {
        return shardTerminated(pool);
      } catch (ReflectiveOperationException e) {
        throw new AssertionError(e);
      }
    })).as("the idle shard terminated").isTrue();
    release.countDown();
    for (PoolFixture.Background c : callers) {
      c.join();
      assertThat(c.failures()).isZero();
    }
    gate.open();
    assertThat(pool.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    PoolStats s = pool.stats();
    if (ran.get() != returned.get() || s.rejected() != thrown.get()
        || s.submitted() != s.completed() + s.failed()) {
      return "round " + round + ": returned " + returned + " ran " + ran + " thrown " + thrown
          + " " + s;
    }
    return null;
  }

  /**
   * Was a fault (review r7): tasks accepted by a sharded pool's lane (their call returned normally) never run: the
   * lane's dispatch was refused by a terminated shard and nobody dispatches it again.
   */
  @Test
  void guarantee4_aShardedLanesAcceptedTasksRunWhenOneShardTerminatesFirst() throws Exception {
    List<String> bad = new ArrayList<>();
    for (int r = 0; r < 20; r++) {
      String b = round(r);
      if (b != null) {
        bad.add(b);
      }
    }
    assertThat(bad).as("rounds where an accepted lane task never ran").isEmpty();
  }

  /**
   * One round of the deterministic form: a lane task fails, and the pool's failure handler (held
   * until released) throws, so the worker dies ({@code SerialLane.runOne}: the lane clears
   * {@code scheduled} and dispatches itself again if tasks wait). Meanwhile two tasks enter the
   * lane (riding along: the carrier holds {@code scheduled}) and the sharded pool shuts down: the
   * idle shard terminates, the failing one waits for its worker. {@code extraPicks} turns the
   * round-robin so that the redispatch picks each shard in one of two rounds.
   */
  private String failingHandlerRound(int extraPicks) throws Exception {
    CountDownLatch inHandler = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    RuntimeException boom = new RuntimeException("r7: fail the worker");
    ShardedPool pool = (ShardedPool) fixture.track(ShardedPool.of(2,
        ShardedPool.Placement.ROUND_ROBIN, WorkerPool.builder()
            .name(PoolFixture.uniqueName("r7shfail")).capacity(1).maxIdle(HOUR)
            .failureHandler((t, e) -> {
              if (e == boom) {
                inHandler.countDown();
                PoolFixture.awaitQuietly(release, Duration.ofSeconds(30));
                throw new IllegalStateException("r7: the failure handler throws");
              }
            })));
    SerialExecutor lane = pool.newSerialExecutor();
    lane.executeAdmitted(() -> {
      throw boom;
    });
    PoolFixture.await(inHandler);
    AtomicInteger ran = new AtomicInteger();
    lane.execute(ran::incrementAndGet); // admitted: rides along the carrier
    lane.execute(ran::incrementAndGet);
    for (int i = 0; i < extraPicks; i++) {
      pool.newSerialExecutor(); // turns the round-robin
    }
    pool.shutdown();
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(20), () -> {
      try {
        return shardTerminated(pool);
      } catch (ReflectiveOperationException e) {
        throw new AssertionError(e);
      }
    })).as("the idle shard terminated").isTrue();
    release.countDown();
    assertThat(pool.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    PoolStats s = pool.stats();
    if (ran.get() != 2 || s.rejected() != 0 || s.submitted() != s.completed() + s.failed()) {
      return "extra picks " + extraPicks + ": ran " + ran + " of 2, " + s;
    }
    return null;
  }

  /**
   * Was a fault (review r7): two accepted lane tasks never run, and a rejection nobody threw is counted, when the
   * lane's redispatch after a dying worker meets the terminated shard.
   */
  @Test
  void guarantee4and13_aShardedLanesRedispatchAfterADyingWorkerStrandsNothing() throws Exception {
    List<String> bad = new ArrayList<>();
    for (int extra = 0; extra < 2; extra++) {
      String b = failingHandlerRound(extra);
      if (b != null) {
        bad.add(b);
      }
    }
    assertThat(bad).isEmpty();
  }
}
