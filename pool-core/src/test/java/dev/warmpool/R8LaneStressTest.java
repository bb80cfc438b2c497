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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * r8 (adversarial review): serial lanes of sharded and plain pools with what r7's race stress left
 * out: lanes that yield their worker (more than {@code SerialLane.BUDGET} tasks in a burst) while
 * shards shut down and terminate one by one, workers that die under a lane (a failure handler that
 * throws), lane handles cancelled while queued, {@code shutdownNow} racing all of it. At quiescence:
 * every task accepted before the end began ended exactly one way (ran, withdrawn by its handle,
 * handed back; a closed lane's task also none), refusals thrown equal {@code rejected}, counters
 * exact.
 */
@Timeout(300)
@Tag("stress")
class R8LaneStressTest {
  private static final Duration HOUR = Duration.ofHours(1);
  @AutoClose final PoolFixture fixture = new PoolFixture();

  static final class Probe implements Runnable {
    final int lane;
    final boolean afterEnd;
    final boolean fails;
    final AtomicInteger ran = new AtomicInteger();
    final AtomicInteger withdrawn = new AtomicInteger();

    Probe(int lane, boolean afterEnd, boolean fails) {
      this.lane = lane;
      this.afterEnd = afterEnd;
      this.fails = fails;
    }

    @Override
    public void run() {
      ran.incrementAndGet();
      if (fails) {
        throw new IllegalStateException("probe fails");
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"sharded", "pool", "subpool"})
  void guarantee4and13_lanesThatYieldOrLoseTheirWorkerWhileShardsTerminateEndEveryTaskOnce(
      String where) throws Exception {
    long end = System.nanoTime() + PoolFixture.stress(Duration.ofMillis(1500)).toNanos();
    int rounds = 0;
    while (System.nanoTime() < end || rounds < 10) {
      rounds++;
      round(where, rounds);
    }
  }

  private void round(String where, int round) throws Exception {
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    AtomicInteger handlerCalls = new AtomicInteger();
    WorkerPool.Builder b = WorkerPool.builder().name(PoolFixture.uniqueName("r8lane"))
        .capacity(1 + rnd.nextInt(2)).maxIdle(HOUR).maxWaiting(2 + rnd.nextInt(6))
        .failureHandler((t, e) -> {
          if (handlerCalls.incrementAndGet() % 3 == 0) {
            throw new IllegalStateException("failure handler throws: the worker dies");
          }
        });
    WorkerPool parent = fixture.track(where.equals("sharded")
        ? ShardedPool.of(2 + rnd.nextInt(2), ShardedPool.Placement.ROUND_ROBIN, b) : b.build());
    WorkerPool pool = where.equals("subpool") ? parent.newSubpool("s", 1 + rnd.nextInt(2)) : parent;
    SerialExecutor[] lanes = new SerialExecutor[3];
    for (int i = 0; i < lanes.length; i++) {
      lanes[i] = pool.newSerialExecutor();
      if (i != 0) {
        lanes[i].executeAdmitted(() -> { });
      }
    }
    boolean[] closedLane = new boolean[lanes.length];
    List<Probe> accepted = Collections.synchronizedList(new ArrayList<>());
    RandomCanceller canceller = new RandomCanceller();
    AtomicInteger thrown = new AtomicInteger();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicBoolean ending = new AtomicBoolean();
    List<PoolFixture.Background> subs = new ArrayList<>();
    for (int t = 0; t < 3; t++) {
      subs.add(PoolFixture.background("submitter", () -> {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int op = 0; op < 400; op++) {
          int k = r.nextInt(100);
          int l = r.nextInt(lanes.length);
          boolean late = ending.get();
          Probe p = new Probe(l, late, r.nextInt(20) == 0);
          try {
            if (k < 50) {
              accepted.add(p);
              try {
                lanes[l].execute(p);
              } catch (RejectedExecutionException e) {
                accepted.remove(p);
                throw e;
              }
            } else if (k < 70) {
              accepted.add(p);
              TaskHandle h;
              try {
                h = lanes[l].enqueue(p);
              } catch (RejectedExecutionException e) {
                accepted.remove(p);
                throw e;
              }
              canceller.add(h, p.withdrawn);
            } else if (k < 85) {
              accepted.add(p);
              try {
                lanes[l].executeAdmitted(p);
              } catch (RejectedExecutionException e) {
                accepted.remove(p);
                throw e;
              }
            } else if (k < 87) {
              // a burst past the lane's budget: its worker yields (rejoins the line) mid-drain
              for (int i = 0; i < SerialLane.BUDGET + 20; i++) {
                Probe q = new Probe(l, late, false);
                accepted.add(q);
                try {
                  lanes[l].executeAdmitted(q);
                } catch (RejectedExecutionException e) {
                  accepted.remove(q);
                  throw e;
                }
              }
            } else if (k < 88) {
              synchronized (closedLane) {
                closedLane[l] = true;
              }
              lanes[l].close();
            } else {
              if (!pool.tryExecute(() -> { })) {
                thrown.incrementAndGet();
              }
            }
          } catch (RejectedExecutionException refused) {
            thrown.incrementAndGet();
          }
        }
      }));
    }
    subs.add(canceller.start(stop));
    int endKind = rnd.nextInt(3);
    List<Runnable> back = new ArrayList<>();
    if (endKind > 0) {
      PoolFixture.spinFor(rnd.nextInt(4_000_000));
      ending.set(true);
      if (endKind == 1) {
        pool.shutdown();
      } else {
        back.addAll(pool.shutdownNow());
      }
    }
    for (int i = 0; i < subs.size() - 1; i++) {
      subs.get(i).join();
    }
    stop.set(true);
    for (PoolFixture.Background s : subs) {
      s.join();
      assertThat(s.failures()).as("round %d", round).isZero();
    }
    ending.set(true);
    pool.shutdown();
    parent.shutdown();
    assertThat(parent.awaitTermination(20, TimeUnit.SECONDS)).as("round %d", round).isTrue();
    Map<Runnable, Integer> handedBack = new IdentityHashMap<>();
    for (Runnable r : back) {
      handedBack.merge(r, 1, Integer::sum);
    }
    int none = 0;
    synchronized (accepted) {
      for (Probe p : accepted) {
        int ways = p.ran.get() + p.withdrawn.get() + handedBack.getOrDefault(p, 0);
        boolean closed = p.lane >= 0 && closedLane[p.lane];
        if (ways == 0 && !closed) {
          none++;
        }
        assertThat(ways).as("round %d %s: one way ran %s withdrawn %s back %s lane %s late %s;"
            + " end %d lanes %s; %s", round, where, p.ran, p.withdrawn,
            handedBack.getOrDefault(p, 0), p.lane, p.afterEnd, endKind,
            R7RaceStressTest.laneStates(lanes), pool.stats())
            .isBetween(closed || p.afterEnd ? 0 : 1, 1);
      }
    }
    PoolStats s = pool.stats();
    assertThat(s.waiting()).as("round %d %s", round, s).isZero();
    assertThat(s.rejected()).as("round %d: counted vs thrown %s", round, s).isEqualTo(thrown.get());
    assertThat(s.submitted()).as("round %d %s (unended late tasks %d)", round, s, none)
        .isEqualTo(s.completed() + s.failed() + back.size());
  }
}
