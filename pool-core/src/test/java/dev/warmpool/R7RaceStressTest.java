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
 * Review r7: adaptive LIFO, controlled delay, lanes' first dispatches and rejections counted, with
 * what r6's stress left out racing them: a lane's {@code close()}, a canceller withdrawing waiting
 * entries while they wait, a growing resize, and {@code shutdown}/{@code shutdownNow} arriving while
 * the submitters still submit. At quiescence: each accepted task ended exactly one way (ran, expired,
 * withdrawn by its handle, handed back; a closed lane's task also none), admitted work never expired,
 * refusals thrown (or {@code false}) equal {@code rejected}, nothing waits, counters exact.
 */
@Timeout(300)
@Tag("stress")
class R7RaceStressTest {
  private static final Duration HOUR = Duration.ofHours(1);
  @AutoClose final PoolFixture fixture = new PoolFixture();

  /** Diagnostics: each lane's private state, by reflection. */
  static String laneStates(SerialExecutor[] lanes) {
    StringBuilder sb = new StringBuilder();
    for (SerialExecutor l : lanes) {
      sb.append('\n').append(l.getClass().getSimpleName()).append('{');
      for (String f : new String[] {"queue", "scheduled", "admitted", "closed", "place", "lineOf"}) {
        try {
          java.lang.reflect.Field fld = l.getClass().getDeclaredField(f);
          fld.setAccessible(true);
          Object v = fld.get(l);
          if (v instanceof TaskEnvelope e) {
            v = "env(state=" + e.state + ",pinned=" + (e.stamp() != null && e.stamp().pinned) + ",owner=" + e.owner + ")";
          } else if (v instanceof Admission a) {
            v = a.description;
          }
          sb.append(f).append('=').append(v).append(' ');
        } catch (ReflectiveOperationException e) {
          sb.append(f).append("=? ");
        }
      }
      sb.append('}');
    }
    return sb.toString();
  }

  /** HELD: a pool and a subpool. */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"pool", "subpool"})
  void heldEveryEntryEndsOneWayAndCountersAreExactWhileShutdownAndCloseRace(String where)
      throws Exception {
    stress(where);
  }

  /**
   * FAULT (sharded pool): shards shut down (and terminate) one by one. A lane's admitted dispatch
   * ({@code SerialLane.scheduleAdmitted}) that waits in {@code all[first]}'s line is refused when that
   * shard has terminated, although a sibling still runs: the refusal clears {@code scheduled} and
   * leaves the tasks that rode along (their {@code enter} saw the lane dispatched and the sharded
   * pool not yet terminated) in the queue of a lane nobody dispatches (accepted, never run, never
   * handed back: {@code submitted > completed + handed back}); where the refusal is swallowed
   * ({@code unschedule}, {@code runOne}) it is also counted as a rejection no call threw
   * ({@code rejected} one above the refusals thrown). Seen: a lane's queue of five probes,
   * scheduled=false, admitted=true, after termination.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"sharded"})
  void guarantee4and13_aShardedPoolsLaneStrandsNoTaskAndCountsNoUnthrownRejection(String where)
      throws Exception {
    stress(where);
  }

  private void stress(String where) throws Exception {
    // Short in the default build (CI time); longer with -Dwarmpool.stress.scale.
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
    boolean lifo = rnd.nextInt(4) != 0;
    WorkerPool.Builder b = WorkerPool.builder().name(PoolFixture.uniqueName("r7race"))
        .capacity(1 + rnd.nextInt(2)).maxIdle(HOUR).maxWaiting(4 + rnd.nextInt(8))
        .adaptiveLifo(lifo);
    int shape = rnd.nextInt(3);
    if (shape == 0) {
      b.controlledDelay(Duration.ofNanos(target), Duration.ofNanos(target * 3));
    } else if (shape == 1) {
      b.maxWaitInLine(Duration.ofNanos(target * 4));
    }
    WorkerPool parent = fixture.track(where.equals("sharded")
        ? ShardedPool.of(2, ShardedPool.Placement.ROUND_ROBIN, b) : b.build());
    WorkerPool pool = where.equals("subpool") ? parent.newSubpool("s", 1 + rnd.nextInt(2)) : parent;
    SerialExecutor[] lanes = new SerialExecutor[4];
    for (int i = 0; i < lanes.length; i++) {
      lanes[i] = pool.newSerialExecutor();
      if (i % 2 == 0) {
        lanes[i].executeAdmitted(() -> { });
      }
    }
    boolean[] closedLane = new boolean[lanes.length];
    List<StressProbe> accepted = Collections.synchronizedList(new ArrayList<>());
    RandomCanceller canceller = new RandomCanceller();
    AtomicInteger thrown = new AtomicInteger();
    AtomicInteger callerExpired = new AtomicInteger();
    AtomicBoolean stop = new AtomicBoolean();
    List<PoolFixture.Background> subs = new ArrayList<>();
    for (int t = 0; t < 3; t++) {
      subs.add(PoolFixture.background("submitter", () -> {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int op = 0; op < 60; op++) {
          int k = r.nextInt(100);
          try {
            if (k < 25) {
              int l = r.nextInt(lanes.length);
              StressProbe p = new StressProbe(l % 2 == 0, l);
              accepted.add(p);
              try {
                lanes[l].execute(p);
              } catch (RejectedExecutionException e) {
                accepted.remove(p);
                throw e;
              }
            } else if (k < 35) {
              int l = r.nextInt(lanes.length);
              StressProbe p = new StressProbe(true, l);
              accepted.add(p);
              try {
                lanes[l].executeAdmitted(p);
              } catch (RejectedExecutionException e) {
                accepted.remove(p);
                throw e;
              }
            } else if (k < 37) {
              int l = r.nextInt(lanes.length);
              synchronized (closedLane) {
                closedLane[l] = true;
              }
              lanes[l].close();
            } else if (k < 70) {
              StressProbe p = new StressProbe(false, -1);
              TaskHandle h = pool.enqueue(p);
              accepted.add(p);
              canceller.add(h, p.withdrawn);
            } else if (k < 80) {
              try {
                pool.execute(() -> { });
              } catch (PoolOverloadedException e) {
                if (e.getMessage().contains(" ms in line, ")) {
                  callerExpired.incrementAndGet();
                } else {
                  throw e;
                }
              }
            } else if (k < 92) {
              if (!pool.tryExecute(() -> { }, Duration.ofNanos(r.nextInt(200_000)))) {
                thrown.incrementAndGet();
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
    subs.add(canceller.start(stop));
    // the end races the submitters: a shutdown or shutdownNow while they still submit
    int endKind = rnd.nextInt(3);
    List<Runnable> back = new ArrayList<>();
    if (endKind > 0) {
      PoolFixture.spinFor(rnd.nextInt(3_000_000));
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
    pool.shutdown();
    parent.shutdown();
    assertThat(parent.awaitTermination(20, TimeUnit.SECONDS)).as("round %d", round).isTrue();
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
        int ways = p.ran.get() + p.expired.get() + p.withdrawn.get()
            + handedBack.getOrDefault(p, 0);
        boolean closed = p.lane >= 0 && closedLane[p.lane];
        assertThat(ways).as("round %d %s: one way ran %s expired %s withdrawn %s back %s lane %s"
            + " admitted %s; end %d shape %d lifo %s lanes %s; %s",
            round, where, p.ran, p.expired, p.withdrawn, handedBack.getOrDefault(p, 0), p.lane,
            p.admitted, endKind, shape, lifo, laneStates(lanes), pool.stats())
            .isBetween(closed ? 0 : 1, 1);
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
