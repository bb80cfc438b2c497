package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Controlled delay and adaptive LIFO under races (guarantees 4, 9 and 13): expiry by the timer and
 * at the hand-off racing the hand-off itself, a handle's cancel, resize, shutdown, shutdownNow and
 * reboot, with tasks, blocked callers and a lane waiting for its first seat in the one line. Every
 * entry ends exactly one way (ran, withdrawn, expired, handed back, or refused at its call), each
 * counted per task, and the counters are exact at quiescence, before and after a reboot.
 */
@Timeout(300)
@Tag("stress")
class ControlledDelayStressTest {
  private static final Duration HOUR = Duration.ofHours(1);

  /** A task that counts each way it can end; it hears of an expiry as a {@link CancellationAware}. */
  static final class Probe implements CancellationAware {
    final AtomicInteger ran = new AtomicInteger();
    final AtomicInteger heard = new AtomicInteger();

    @Override
    public void run() {
      ran.incrementAndGet();
      PoolFixture.spinFor(ThreadLocalRandom.current().nextInt(150_000));
    }

    @Override
    public void onCancel() {
      heard.incrementAndGet();
    }
  }

  @Test
  void expiryRacingHandOffCancelResizeShutdownAndRebootEndsEachEntryOneWay() throws Exception {
    long end = System.nanoTime() + PoolFixture.stress(Duration.ofSeconds(4)).toNanos();
    int rounds = 0;
    while (System.nanoTime() < end || rounds < 20) {
      rounds++;
      ThreadLocalRandom rnd = ThreadLocalRandom.current();
      long target = 20_000 + rnd.nextInt(200_000);
      WorkerPool.Builder b = WorkerPool.builder().name(PoolFixture.uniqueName("codel-race"))
          .capacity(1 + rnd.nextInt(2)).maxIdle(HOUR)
          .controlledDelay(Duration.ofNanos(target), Duration.ofNanos(target * (2 + rnd.nextInt(4))))
          .adaptiveLifo(rnd.nextBoolean());
      if (rnd.nextInt(4) == 0) {
        b.maxWaitInLine(Duration.ofNanos(1 + rnd.nextInt(1_000_000)));
      }
      WorkerPool pool = b.build();
      String round = "round " + rounds + " " + pool;
      try {
        check(pool, rnd, round, false);
        pool.reboot();
        check(pool, rnd, round + " after reboot", true);
      } finally {
        pool.shutdownNow();
      }
    }
    assertThat(rounds).isPositive();
  }

  /** One batch of racing work, then a shutdown; the counts it checks are cumulative over batches. */
  private int handedBackSoFar;

  private void check(WorkerPool pool, ThreadLocalRandom rnd, String round, boolean rebooted)
      throws Exception {
    if (!rebooted) {
      handedBackSoFar = 0;
    }
    PoolStats before = pool.stats();
    List<Probe> probes = new ArrayList<>();
    List<TaskHandle> handles = new ArrayList<>();
    // Blocked callers: each ends by running its task (or having it handed back), expiring, or
    // being refused by the shutdown.
    AtomicInteger callerReturned = new AtomicInteger();
    AtomicInteger callerExpired = new AtomicInteger();
    AtomicInteger callerRefused = new AtomicInteger();
    List<Probe> callerProbes = Collections.synchronizedList(new ArrayList<>());
    List<Thread> callers = new ArrayList<>();
    for (int c = 0; c < 2; c++) {
      Thread t = new Thread(() -> {
        for (int i = 0; i < 5; i++) {
          Probe p = new Probe();
          callerProbes.add(p);
          try {
            pool.execute(p);
            callerReturned.incrementAndGet();
          } catch (PoolOverloadedException expired) {
            callerExpired.incrementAndGet();
          } catch (RejectedExecutionException closed) {
            callerRefused.incrementAndGet();
          }
        }
      }, "codel-caller");
      t.start();
      callers.add(t);
    }
    // A lane whose first seat may come after its tasks expired with it.
    SerialExecutor lane = pool.newSerialExecutor();
    List<Probe> laneProbes = new ArrayList<>();
    int laneRefused = 0;
    for (int i = 0; i < 40; i++) {
      Probe p = new Probe();
      probes.add(p);
      handles.add(rnd.nextBoolean() ? pool.enqueue(p)
          : pool.enqueue(p, Duration.ofNanos(1 + rnd.nextInt(2_000_000))));
      if (rnd.nextInt(8) == 0) {
        handles.get(rnd.nextInt(handles.size())).cancel();
      }
      if (rnd.nextInt(16) == 0) {
        pool.resize(1 + rnd.nextInt(3));
      }
      if (rnd.nextInt(4) == 0) {
        Probe lp = new Probe();
        laneProbes.add(lp);
        try {
          lane.execute(lp);
        } catch (RejectedExecutionException refused) {
          laneRefused++;
        }
      }
    }
    List<Runnable> back = rnd.nextBoolean() ? pool.shutdownNow() : List.of();
    pool.shutdown();
    for (Thread t : callers) {
      t.join(TimeUnit.SECONDS.toMillis(30));
      assertThat(t.isAlive()).as("%s: caller ended", round).isFalse();
    }
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).as("%s: %s", round, pool.stats())
        .isTrue();
    Set<Runnable> backSet = Collections.newSetFromMap(new IdentityHashMap<>());
    backSet.addAll(back);
    assertThat(backSet).as("%s: nothing handed back twice", round).hasSize(back.size());

    int expired = 0;
    for (int i = 0; i < handles.size(); i++) {
      TaskHandle h = handles.get(i);
      Probe p = probes.get(i);
      assertThat(h.isDone()).as("%s: every handle ended: %s", round, h).isTrue();
      int ways = p.ran.get() + (h.isCancelled() ? 1 : 0) + (h.isExpired() ? 1 : 0)
          + (backSet.contains(p) ? 1 : 0);
      assertThat(ways).as("%s: task %d ended one way (%s, ran %d)", round, i, h, p.ran.get())
          .isEqualTo(1);
      assertThat(p.heard.get()).as("%s: heard only of its expiry", round)
          .isEqualTo(h.isExpired() ? 1 : 0);
      expired += h.isExpired() ? 1 : 0;
    }
    int laneExpired = 0;
    for (Probe lp : laneProbes) {
      int ways = lp.ran.get() + lp.heard.get() + (backSet.contains(lp) ? 1 : 0);
      assertThat(ways).as("%s: lane task ended one way", round).isLessThanOrEqualTo(1);
      laneExpired += lp.heard.get();
    }
    int laneEnded = 0;
    for (Probe lp : laneProbes) {
      laneEnded += lp.ran.get() + lp.heard.get() + (backSet.contains(lp) ? 1 : 0);
    }
    assertThat(laneEnded).as("%s: each accepted lane task ended", round)
        .isEqualTo(laneProbes.size() - laneRefused);
    int callerRan = 0;
    int callerBack = 0;
    for (Probe p : callerProbes) {
      assertThat(p.heard.get()).as("%s: a blocked caller hears by its exception", round).isZero();
      callerRan += p.ran.get();
      callerBack += backSet.contains(p) ? 1 : 0;
    }
    assertThat(callerRan + callerBack).as("%s: a returned execute ran or was handed back", round)
        .isEqualTo(callerReturned.get());
    assertThat(callerReturned.get() + callerExpired.get() + callerRefused.get()).isEqualTo(10);

    PoolStats s = pool.stats();
    handedBackSoFar += back.size();
    assertThat(s.expired() - before.expired()).as("%s: %s", round, s)
        .isEqualTo(expired + callerExpired.get() + laneExpired);
    assertThat(s.submitted()).as("%s: %s", round, s)
        .isEqualTo(s.completed() + s.failed() + handedBackSoFar);
    assertThat(s.waiting()).isZero();
    assertThat(s.busy()).isZero();
  }
}
