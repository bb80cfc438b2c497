package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The sibling hand-off of a sharded pool (guarantee 14) under everything that may race it: line
 * deadlines, handles cancelled at once, lanes, resizes, and a shutdown or shutdownNow while the
 * submitters still run. At quiescence every accepted task ran exactly once, or was handed back, or
 * expired (it heard of it), or was withdrawn by its handle; nothing ran twice; and the counters
 * summed over the shards are exact (guarantees 4 and 13). Cycles: {@code -Dwarmpool.stress.cycles}
 * (default 40).
 */
@Tag("stress")
@Timeout(300)
class ShardSiblingStressTest {
  private static final int CYCLES = Integer.getInteger("warmpool.stress.cycles", 40);
  private static final int SUBMITTERS = 3;
  private static final int TASKS_EACH = 300;

  private static final int REFUSED = 1;
  private static final int ACCEPTED = 2;
  private static final int WITHDRAWN = 3;

  /** A task that records its runs and its expiry. */
  static final class Probe implements CancellationAware {
    final int id;
    final AtomicIntegerArray runs;
    final AtomicIntegerArray expired;
    final int spin;

    Probe(int id, AtomicIntegerArray runs, AtomicIntegerArray expired, int spin) {
      this.id = id;
      this.runs = runs;
      this.expired = expired;
      this.spin = spin;
    }

    @Override
    public void run() {
      runs.incrementAndGet(id);
      LaneAndShardFaultsTest.spin(spin);
    }

    @Override
    public void onCancel() {
      expired.incrementAndGet(id);
    }
  }

  @Test
  void guarantee14_siblingHandOffRacingDeadlinesCancelsResizeAndShutdownLosesNothing()
      throws Exception {
    for (int cycle = 0; cycle < CYCLES; cycle++) {
      runCycle(cycle);
    }
  }

  private void runCycle(int cycle) throws Exception {
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    WorkerPool.Builder b = WorkerPool.builder().name(PoolFixture.uniqueName("sib")).capacity(1)
        .maxWaiting(10_000);
    if (rnd.nextBoolean()) {
      b.maxWaitInLine(Duration.ofMillis(1 + rnd.nextInt(10)));
    }
    ShardedPool pool = ShardedPool.of(3, rnd.nextBoolean() ? ShardedPool.Placement.ROUND_ROBIN
        : ShardedPool.Placement.LEAST_BUSY, b);
    int n = SUBMITTERS * TASKS_EACH;
    AtomicIntegerArray runs = new AtomicIntegerArray(n);
    AtomicIntegerArray expired = new AtomicIntegerArray(n);
    AtomicIntegerArray outcome = new AtomicIntegerArray(n);
    AtomicInteger executeExpired = new AtomicInteger();
    Probe[] probes = new Probe[n];
    for (int i = 0; i < n; i++) {
      probes[i] = new Probe(i, runs, expired, rnd.nextInt(2_000));
    }
    List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int s = 0; s < SUBMITTERS; s++) {
      int base = s * TASKS_EACH;
      SerialExecutor lane = pool.newSerialExecutor();
      threads.add(new Thread(() -> {
        try {
          start.await();
          ThreadLocalRandom r = ThreadLocalRandom.current();
          for (int i = base; i < base + TASKS_EACH; i++) {
            submit(pool, lane, probes[i], r, outcome, executeExpired);
          }
        } catch (Throwable t) {
          failures.add(t);
        }
      }, "submitter-" + s));
    }
    int ending = rnd.nextInt(3); // 0: shutdown after, 1: shutdown racing, 2: shutdownNow racing
    threads.forEach(Thread::start);
    start.countDown();
    for (int i = 0; i < 4; i++) {
      LaneAndShardFaultsTest.spin(rnd.nextInt(200_000));
      pool.resize(3 + rnd.nextInt(4)); // shards of 1 or 2 seats
    }
    List<Runnable> handedBack = List.of();
    if (ending == 1) {
      pool.shutdown();
    } else if (ending == 2) {
      handedBack = pool.shutdownNow();
    }
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(60));
      assertThat(t.isAlive()).as("%s returned", t.getName()).isFalse();
    }
    if (ending == 0) {
      pool.shutdown();
    }
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS))
        .as("cycle %d terminated (%s)", cycle, ShardPlacementStressTest.shards(pool)).isTrue();
    assertThat(failures).isEmpty();

    Map<Runnable, Integer> back = new IdentityHashMap<>();
    for (Runnable r : handedBack) {
      back.merge(r, 1, Integer::sum);
    }
    // The helper thread that tells an expired task may lag its count: wait for the notices.
    long expectedExpired = pool.stats().expired() - executeExpired.get();
    PoolFixture.eventually().until(() -> sum(expired) >= expectedExpired);
    int ran = 0;
    for (int i = 0; i < n; i++) {
      int o = outcome.get(i);
      int r = runs.get(i);
      int x = expired.get(i);
      int h = back.getOrDefault(probes[i], 0);
      String what = "cycle " + cycle + " (ending " + ending + "), task " + i + ": outcome " + o
          + ", runs " + r + ", expired " + x + ", handed back " + h;
      if (o == ACCEPTED) {
        assertThat(r + x + h).as(what).isEqualTo(1);
      } else {
        assertThat(r + x + h).as(what).isZero();
      }
      ran += r;
    }
    PoolStats s = pool.stats();
    assertThat(s.submitted()).as("cycle %d: %s", cycle, s)
        .isEqualTo(s.completed() + s.failed() + handedBack.size());
    assertThat(s.completed()).as("cycle %d: %s", cycle, s).isEqualTo(ran);
    assertThat(s.expired()).as("cycle %d: %s", cycle, s)
        .isEqualTo(sum(expired) + executeExpired.get());
    assertThat(s.waiting()).isZero();
    assertThat(s.busy()).isZero();
  }

  private static long sum(AtomicIntegerArray a) {
    long t = 0;
    for (int i = 0; i < a.length(); i++) {
      t += a.get(i);
    }
    return t;
  }

  private static void submit(ShardedPool pool, SerialExecutor lane, Probe p, ThreadLocalRandom r,
      AtomicIntegerArray outcome, AtomicInteger executeExpired) {
    int kind = r.nextInt(5);
    outcome.set(p.id, ACCEPTED); // before the call: the task may run before it returns
    try {
      switch (kind) {
        case 0 -> pool.execute(p);
        case 1 -> {
          if (!pool.tryExecute(p)) {
            outcome.set(p.id, REFUSED);
          }
        }
        case 2 -> pool.enqueue(p, Duration.ofMillis(1 + r.nextInt(5)));
        case 3 -> {
          TaskHandle h = pool.enqueue(p);
          if (r.nextBoolean() && h.cancel()) {
            outcome.set(p.id, WITHDRAWN);
          }
        }
        default -> lane.execute(p);
      }
    } catch (PoolOverloadedException refused) {
      outcome.set(p.id, REFUSED);
      if (kind == 0 && refused.getMessage().contains("waited")) {
        executeExpired.incrementAndGet(); // a blocked caller past its deadline: counted expired
      }
    } catch (RejectedExecutionException refused) {
      outcome.set(p.id, REFUSED);
    }
  }
}
