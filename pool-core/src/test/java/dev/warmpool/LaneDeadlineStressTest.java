package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Lanes waiting for their first seat under a line deadline of microseconds to a few milliseconds,
 * raced against the seat hand-off (short tasks finishing), more executes, admitted work
 * ({@code executeAdmitted}, due timers), lane close, task cancel, resize, and a final
 * {@code shutdown} or {@code shutdownNow}, on a pool and on a subpool. At quiescence every accepted
 * task ended exactly one way (ran, expired, withdrawn or cancelled, handed back; a closed lane's
 * pending tasks are cancelled silently), admitted work never expired, each expiry was heard once,
 * and {@code submitted == completed + failed + handedBack}, expired apart and exact.
 */
@Timeout(300)
@Tag("stress")
class LaneDeadlineStressTest {
  private static final int LANES = 4;
  private static final int SUBMITTERS = 2;
  private static final int OPS = 80;

  /** A task that records how it ended; {@code admitted} marks one that must never expire. */
  static final class Probe implements CancellationAware {
    final boolean admitted;
    final AtomicInteger ran = new AtomicInteger();
    final AtomicInteger expired = new AtomicInteger();
    final AtomicInteger cancelled = new AtomicInteger();
    volatile int lane = -1;

    Probe(boolean admitted) {
      this.admitted = admitted;
    }

    @Override
    public void run() {
      ran.incrementAndGet();
    }

    @Override
    public void onCancel() {
      cancelled.incrementAndGet();
    }

    @Override
    public void onExpired(PoolOverloadedException cause) {
      expired.incrementAndGet();
    }
  }

  private static void spin(int micros) {
    PoolFixture.spinFor(TimeUnit.MICROSECONDS.toNanos(micros));
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"pool", "subpool"})
  void everyLaneTaskEndsExactlyOneWayAndTheCountersAreExact(String where) throws Exception {
    long end = System.nanoTime() + PoolFixture.stress(Duration.ofSeconds(3)).toNanos();
    int rounds = 0;
    long expiredSeen = 0;
    while (System.nanoTime() < end || rounds < 20) {
      rounds++;
      expiredSeen += round(where.equals("subpool"), rounds);
    }
    System.out.printf("LaneDeadlineStressTest %s: %d rounds, %d lane tasks expired%n", where,
        rounds, expiredSeen);
    assertThat(expiredSeen).as("the race was exercised: some lane tasks expired").isPositive();
  }

  private long round(boolean sub, int round) throws Exception {
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    WorkerPool parent = WorkerPool.builder().name(PoolFixture.uniqueName("lane-deadline-stress"))
        .capacity(sub ? 3 : 1 + rnd.nextInt(2)).maxIdle(Duration.ofMinutes(1))
        .maxWaitInLine(Duration.ofNanos(20_000 + rnd.nextInt(500_000))).build();
    WorkerPool pool = sub ? parent.newSubpool("sub", 1 + rnd.nextInt(2)) : parent;
    SerialExecutor[] lanes = new SerialExecutor[LANES];
    AtomicBoolean[] closing = new AtomicBoolean[LANES];
    for (int i = 0; i < LANES; i++) {
      lanes[i] = pool.newSerialExecutor();
      closing[i] = new AtomicBoolean();
    }
    List<Probe> accepted = Collections.synchronizedList(new ArrayList<>());
    Map<ScheduledFuture<?>, Probe> timers = Collections.synchronizedMap(new IdentityHashMap<>());
    List<TaskHandle> plain = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger plainRan = new AtomicInteger();

    List<PoolFixture.Background> submitters = new ArrayList<>();
    for (int s = 0; s < SUBMITTERS; s++) {
      submitters.add(PoolFixture.background("submitter-" + s, () -> {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int op = 0; op < OPS; op++) {
          int l = r.nextInt(LANES);
          int kind = r.nextInt(100);
          try {
            if (kind < 50) {
              Probe p = new Probe(false);
              p.lane = l;
              lanes[l].execute(p);
              accepted.add(p);
            } else if (kind < 60) {
              Probe p = new Probe(true);
              p.lane = l;
              lanes[l].executeAdmitted(p);
              accepted.add(p);
            } else if (kind < 68) {
              Probe p = new Probe(true);
              p.lane = l;
              timers.put(lanes[l].schedule(p, r.nextInt(2) * r.nextInt(300),
                  TimeUnit.MICROSECONDS), p);
            } else if (kind < 88) {
              // Short tasks: their seats are handed to the lanes' entries as they finish.
              int micros = r.nextInt(500);
              TaskHandle h = pool.enqueue(() -> {
                plainRan.incrementAndGet();
                spin(micros);
              });
              plain.add(h);
              if (r.nextInt(6) == 0) {
                h.cancel();
              }
            } else if (kind < 92) {
              ScheduledFuture<?> f = null;
              synchronized (timers) {
                if (!timers.isEmpty()) {
                  f = timers.keySet().iterator().next();
                }
              }
              if (f != null) {
                f.cancel(false);
              }
            } else if (kind < 96) {
              pool.resize(1 + r.nextInt(3));
            } else if (kind < 98 && r.nextInt(3) == 0) {
              closing[l].set(true); // before the close: a pending task may then end silently
              lanes[l].close();
            } else {
              spin(r.nextInt(100));
            }
          } catch (RejectedExecutionException refused) {
            // not accepted: a closed lane, a full line; nothing to account for
          }
        }
      }));
    }
    for (PoolFixture.Background b : submitters) {
      b.join();
      assertThat(b.failures()).isZero();
    }
    List<Runnable> back = new ArrayList<>();
    boolean now = rnd.nextBoolean();
    if (now) {
      back.addAll(pool.shutdownNow());
    }
    if (sub) {
      pool.shutdown();
      assertThat(pool.awaitTermination(20, TimeUnit.SECONDS)).as("round %d: subpool %s", round,
          pool.stats()).isTrue();
    }
    parent.shutdown();
    assertThat(parent.awaitTermination(20, TimeUnit.SECONDS)).as("round %d: %s", round,
        parent.stats()).isTrue();

    Map<Runnable, Integer> handedBack = new IdentityHashMap<>();
    for (Runnable r : back) {
      handedBack.merge(r, 1, Integer::sum);
    }
    for (int n : handedBack.values()) {
      assertThat(n).as("round %d: handed back once", round).isEqualTo(1);
    }
    int plainExpired = 0;
    synchronized (plain) {
      for (TaskHandle h : plain) {
        assertThat(h.isDone()).as("round %d", round).isTrue();
        plainExpired += h.isExpired() ? 1 : 0;
      }
    }
    int plainExpiredFinal = plainExpired;
    // Expiries are counted at once and heard on helper threads: wait for the last of them.
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(20), () -> {
      long h = 0;
      for (Probe p : accepted) {
        h += p.expired.get();
      }
      return h + plainExpiredFinal == pool.stats().expired();
    })).as("round %d: every expiry heard (%s)", round, pool.stats()).isTrue();
    long heard = 0;
    int ran = 0;
    for (Probe p : accepted) {
      int ways = p.ran.get() + p.expired.get() + handedBack.getOrDefault(p, 0);
      if (closing[p.lane].get()) {
        assertThat(ways).as("round %d: at most one way (closed lane)", round).isLessThanOrEqualTo(1);
      } else {
        assertThat(ways).as("round %d: exactly one way: ran %s expired %s back %s", round, p.ran,
            p.expired, handedBack.containsKey(p)).isEqualTo(1);
      }
      if (p.admitted) {
        assertThat(p.expired).as("round %d: admitted work never expires", round).hasValue(0);
      }
      assertThat(p.cancelled).as("round %d: onCancel only for timers", round).hasValue(0);
      heard += p.expired.get();
      ran += p.ran.get();
    }
    // A timer cancelled after its lane's carrier took it still counts its (empty) run as
    // completed, and one cancelled while due may also be handed back: bounds, not equalities.
    int cancelledTimers = 0;
    synchronized (timers) {
      for (Map.Entry<ScheduledFuture<?>, Probe> t : timers.entrySet()) {
        Probe p = t.getValue();
        boolean cancelled = t.getKey().isCancelled();
        int back1 = handedBack.getOrDefault((Runnable) t.getKey(), 0);
        assertThat(p.ran.get() + back1).as("round %d: a timer ran or was handed back, once", round)
            .isLessThanOrEqualTo(1);
        assertThat(p.ran.get() + back1 + (cancelled ? 1 : 0))
            .as("round %d: a timer ran, was cancelled or handed back", round).isPositive();
        assertThat(p.expired).as("round %d: a due timer never expires", round).hasValue(0);
        cancelledTimers += cancelled ? 1 : 0;
        ran += p.ran.get();
      }
    }
    ran += plainRan.get();
    heard = 0;
    for (Probe p : accepted) {
      assertThat(p.expired.get()).as("round %d: heard once", round).isLessThanOrEqualTo(1);
      assertThat(p.ran.get() + p.expired.get()).as("round %d", round).isLessThanOrEqualTo(1);
      heard += p.expired.get();
    }
    PoolStats s = pool.stats();
    assertThat(s.expired()).as("round %d", round).isEqualTo(heard + plainExpired);
    assertThat(s.completed()).as("round %d: %s", round, s).isBetween((long) ran,
        (long) ran + cancelledTimers);
    assertThat(s.submitted()).as("round %d: %s", round, s)
        .isEqualTo(s.completed() + s.failed() + back.size());
    assertThat(s.waiting()).as("round %d", round).isZero();
    if (sub) {
      PoolStats p = parent.stats();
      assertThat(p.expired()).as("round %d: chained to the parent", round).isEqualTo(s.expired());
      assertThat(p.submitted()).as("round %d: parent %s", round, p)
          .isEqualTo(p.completed() + p.failed() + back.size());
    }
    return heard;
  }
}
