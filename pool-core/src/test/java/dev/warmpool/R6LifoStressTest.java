package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Review r6, HELD: adaptive LIFO's line under races, on a pool, a sharded pool and a subpool.
 * Admitted lanes (which join as admitted, pointed at by the oldest-admitted pointer) and lanes on
 * their first dispatch, blocked and timed callers, tasks with handles (some cancelled), resize, and a
 * final shutdown or shutdownNow. At quiescence each entry ended exactly one way, admitted work never
 * expired, refusals thrown equal rejections counted, nothing waits, counters exact.
 */
@Timeout(300)
@Tag("stress")
class R6LifoStressTest {
  private static final Duration HOUR = Duration.ofHours(1);
  @AutoClose final PoolFixture fixture = new PoolFixture();

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"pool", "sharded", "subpool"})
  void everyEntryEndsOneWayAndCountersAreExact(String where) throws Exception {
    long end = System.nanoTime() + PoolFixture.stress(Duration.ofSeconds(2)).toNanos();
    int rounds = 0;
    while (System.nanoTime() < end || rounds < 10) {
      rounds++;
      round(where, rounds);
    }
  }

  private void round(String where, int round) throws Exception {
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    long target = 50_000 + rnd.nextInt(300_000);
    WorkerPool.Builder b = WorkerPool.builder().name(PoolFixture.uniqueName("r6lifo-stress"))
        .capacity(1 + rnd.nextInt(2)).maxIdle(HOUR).maxWaiting(4 + rnd.nextInt(8))
        .adaptiveLifo(true);
    if (rnd.nextBoolean()) {
      b.controlledDelay(Duration.ofNanos(target), Duration.ofNanos(target * 3));
    } else {
      b.maxWaitInLine(Duration.ofNanos(target * 4));
    }
    WorkerPool parent = fixture.track(where.equals("sharded")
        ? ShardedPool.of(2, ShardedPool.Placement.ROUND_ROBIN, b) : b.build());
    WorkerPool pool = where.equals("subpool") ? parent.newSubpool("s", 1 + rnd.nextInt(2)) : parent;
    SerialExecutor[] lanes = new SerialExecutor[4];
    for (int i = 0; i < lanes.length; i++) {
      lanes[i] = pool.newSerialExecutor();
      if (i % 2 == 0) {
        lanes[i].executeAdmitted(() -> { }); // admitted from the start: joins as admitted
      }
    }
    List<StressProbe> accepted = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger thrown = new AtomicInteger();
    AtomicInteger callerRan = new AtomicInteger();
    AtomicInteger callerExpired = new AtomicInteger();
    List<PoolFixture.Background> subs = new ArrayList<>();
    for (int t = 0; t < 3; t++) {
      subs.add(PoolFixture.background("submitter", () -> {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int op = 0; op < 50; op++) {
          int k = r.nextInt(100);
          try {
            if (k < 30) {
              int l = r.nextInt(lanes.length);
              StressProbe p = new StressProbe(l % 2 == 0, -1);
              lanes[l].execute(p);
              accepted.add(p);
            } else if (k < 40) {
              StressProbe p = new StressProbe(true, -1);
              lanes[r.nextInt(lanes.length)].executeAdmitted(p);
              accepted.add(p);
            } else if (k < 75) {
              StressProbe p = new StressProbe(false, -1);
              TaskHandle h = pool.enqueue(p);
              accepted.add(p);
              if (r.nextInt(5) == 0 && h.cancel()) {
                accepted.remove(p);
              }
            } else if (k < 85) {
              try {
                pool.execute(callerRan::incrementAndGet);
              } catch (PoolOverloadedException e) {
                if (e.getMessage().contains(" ms in line, ")) {
                  callerExpired.incrementAndGet(); // expired in line: counted in expired only
                } else {
                  throw e;
                }
              }
            } else if (k < 95) {
              if (!pool.tryExecute(callerRan::incrementAndGet, Duration.ofNanos(r.nextInt(200_000)))) {
                thrown.incrementAndGet(); // a false counts as a rejection
              }
            } else if (!where.equals("sharded")) {
              pool.resize(1 + r.nextInt(3));
            }
          } catch (RejectedExecutionException refused) {
            thrown.incrementAndGet();
          }
        }
      }));
    }
    for (PoolFixture.Background s : subs) {
      s.join();
      assertThat(s.failures()).isZero();
    }
    List<Runnable> back = rnd.nextBoolean() ? pool.shutdownNow() : new ArrayList<>();
    pool.shutdown();
    parent.shutdown();
    assertThat(parent.awaitTermination(20, TimeUnit.SECONDS))
        .as(() -> "round " + round + ": " + parent.stats() + " " + pool.stats() + "; lanes "
            + R7RaceStressTest.laneStates(lanes) + "\nthreads:" + PoolFixture.threadStacks(
                n -> n.contains("r6lifo-stress") || n.startsWith("warmpool"), 12))
        .isTrue();
    Map<Runnable, Integer> handedBack = new IdentityHashMap<>();
    for (Runnable r : back) {
      handedBack.merge(r, 1, Integer::sum);
    }
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(20), () -> {
      long heard = 0;
      synchronized (accepted) {
        for (StressProbe p : accepted) {
          heard += p.expired.get();
        }
      }
      return heard + callerExpired.get() == pool.stats().expired();
    })).as("round %d: every expiry heard once %s", round, pool.stats()).isTrue();
    synchronized (accepted) {
      for (StressProbe p : accepted) {
        int ways = p.ran.get() + p.expired.get() + handedBack.getOrDefault(p, 0);
        assertThat(ways).as("round %d %s: one way ran %s expired %s", round, where, p.ran,
            p.expired).isEqualTo(1);
        if (p.admitted) {
          assertThat(p.expired).as("round %d: admitted work never expires", round).hasValue(0);
        }
      }
    }
    PoolStats s = pool.stats();
    assertThat(s.waiting()).as("round %d %s", round, s).isZero();
    assertThat(s.rejected()).as("round %d: counted vs thrown %s", round, s).isEqualTo(thrown.get());
    assertThat(s.submitted()).as("round %d %s", round, s)
        .isEqualTo(s.completed() + s.failed() + back.size());
  }
}
