package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Third review: serial lanes' reusable entry, subpool admission and lifecycle, under races with
 * close, timer cancels, shutdown/shutdownNow and reboot. Each test checks exact invariants at
 * quiescence: no task runs twice, nothing accepted is lost, waiting/busy return to 0.
 */
class ThirdReviewTest {
  @AutoClose
  final PoolFixture fixture = new PoolFixture();

  /** A task that counts its runs; ran twice is a fault. */
  static final class Probe implements Runnable {
    final AtomicInteger runs = new AtomicInteger();
    static final Set<Probe> TWICE = ConcurrentHashMap.newKeySet();

    @Override
    public void run() {
      if (runs.incrementAndGet() > 1) {
        TWICE.add(this);
      }
    }
  }

  static long ran(List<Probe> probes) {
    return probes.stream().filter(p -> p.runs.get() > 0).count();
  }

  static void awaitSettled(WorkerPool pool, String what) {
    awaitSettled(pool, what, 0);
  }

  /** Waits until nothing waits or runs and submitted == completed + failed + handed back. */
  static void awaitSettled(WorkerPool pool, String what, int handedBack) {
    boolean ok = PoolFixture.waitUntil(Duration.ofSeconds(10), () -> {
      PoolStats s = pool.stats();
      return s.waiting() == 0 && s.busy() == 0
          && s.submitted() == s.completed() + s.failed() + handedBack;
    });
    assertThat(ok).as("%s settled: %s", what, pool.stats()).isTrue();
  }

  /**
   * Many lanes on a pool of capacity 1 held by a blocker, so every lane waits in line with its
   * entry; lane.execute races lane.close() from another thread; then the blocker releases.
   */
  @Test
  void laneExecuteRacingCloseOnAFullPool() throws Exception {
    long end = System.nanoTime() + PoolFixture.stress(Duration.ofMillis(1500)).toNanos();
    int rounds = 0;
    while (System.nanoTime() < end) {
      rounds++;
      WorkerPool pool = fixture.pool("r3close", b -> b.capacity(1).maxWaiting(1000));
      PoolFixture.Gate blocker = fixture.occupy(pool);
      List<SerialExecutor> lanes = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        lanes.add(pool.newSerialExecutor());
      }
      List<Probe> accepted = new CopyOnWriteList<>();
      AtomicInteger refused = new AtomicInteger();
      CountDownLatch start = new CountDownLatch(1);
      PoolFixture.Background closer = PoolFixture.background("closer", () -> {
        start.await();
        for (SerialExecutor l : lanes) {
          for (int k = ThreadLocalRandom.current().nextInt(50); k > 0; k--) {
            Thread.onSpinWait();
          }
          l.close();
        }
      });
      start.countDown();
      for (int i = 0; i < 60; i++) {
        Probe p = new Probe();
        try {
          lanes.get(i % lanes.size()).execute(p);
          accepted.add(p);
        } catch (RejectedExecutionException e) {
          refused.incrementAndGet();
        }
      }
      closer.join();
      assertThat(closer.failed().get()).isZero();
      assertThat(pool.stats().waiting()).as("closed lanes hold no place, round %d: %s", rounds,
          pool.stats()).isZero();
      blocker.open();
      awaitSettled(pool, "round " + rounds);
      assertThat(Probe.TWICE).isEmpty();
      PoolStats s = pool.stats();
      assertThat(s.completed()).isEqualTo(1 + ran(accepted)); // the rest were discarded by close
      assertThat(s.rejected()).isEqualTo(refused.get());
      pool.shutdown();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  /**
   * Lane timers due at once and cancelled at once, on a full pool (the lane waits in line), on many
   * lanes at once; the cancel either withdraws the task (it never runs) or loses to its run.
   */
  @Test
  void laneTimerCancelledWhenDueOnAFullPool() throws Exception {
    WorkerPool pool = fixture.pool("r3timer", b -> b.capacity(1).maxWaiting(1000));
    long end = System.nanoTime() + PoolFixture.stress(Duration.ofMillis(1500)).toNanos();
    int rounds = 0;
    while (System.nanoTime() < end) {
      rounds++;
      PoolFixture.Gate blocker = fixture.occupy(pool);
      List<SerialExecutor> lanes = new ArrayList<>();
      List<Probe> probes = new ArrayList<>();
      List<Future<?>> futures = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        SerialExecutor l = pool.newSerialExecutor();
        lanes.add(l);
        for (int j = 0; j < 3; j++) {
          Probe p = new Probe();
          probes.add(p);
          // 1 ns, not 0 (handed on at the call): the timer thread fires them while we cancel
          futures.add(l.schedule(p, 1, TimeUnit.NANOSECONDS));
        }
      }
      int withdrawn = 0;
      for (int i = 0; i < futures.size(); i++) {
        if (ThreadLocalRandom.current().nextInt(3) != 0) {
          for (int k = ThreadLocalRandom.current().nextInt(2000); k > 0; k--) {
            Thread.onSpinWait();
          }
          if (futures.get(i).cancel(false)) {
            withdrawn++;
          }
        }
      }
      blocker.open();
      for (int i = 0; i < futures.size(); i++) {
        Future<?> f = futures.get(i);
        if (!f.isCancelled()) {
          f.get(10, TimeUnit.SECONDS);
        } else {
          assertThat(probes.get(i).runs.get()).as("a withdrawn timer ran").isZero();
        }
      }
      awaitSettled(pool, "round " + rounds);
      assertThat(Probe.TWICE).isEmpty();
      assertThat(ran(probes)).isEqualTo(probes.size() - withdrawn);
      lanes.forEach(SerialExecutor::close);
    }
    PoolStats s = pool.stats();
    assertThat(s.waiting()).isZero();
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  /**
   * shutdownNow at a random moment while many lanes (of the pool and of a subpool) wait in line
   * behind a blocker and new tasks keep arriving: every accepted task ran once or was handed back,
   * never both; the pool terminates.
   */
  @Test
  void shutdownNowWhileLanesWaitInLine() throws Exception {
    long end = System.nanoTime() + PoolFixture.stress(Duration.ofMillis(1500)).toNanos();
    int rounds = 0;
    while (System.nanoTime() < end) {
      rounds++;
      WorkerPool pool = fixture.pool("r3now", b -> b.capacity(2).maxWaiting(1000));
      WorkerPool sub = pool.newSubpool("s", 1);
      PoolFixture.Gate blocker = fixture.occupy(pool);
      List<SerialExecutor> lanes = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        lanes.add(pool.newSerialExecutor());
        lanes.add(sub.newSerialExecutor());
      }
      List<Probe> accepted = new CopyOnWriteList<>();
      CountDownLatch start = new CountDownLatch(1);
      List<Runnable> handedBack = new CopyOnWriteList<>();
      PoolFixture.Background stopper = PoolFixture.background("stopper", () -> {
        start.await();
        for (int k = ThreadLocalRandom.current().nextInt(20_000); k > 0; k--) {
          Thread.onSpinWait();
        }
        handedBack.addAll(pool.shutdownNow());
        blocker.open();
      });
      start.countDown();
      for (int i = 0; i < 200; i++) {
        Probe p = new Probe();
        try {
          lanes.get(i % lanes.size()).execute(p);
          accepted.add(p);
        } catch (RejectedExecutionException e) {
          // refused: closed pool
        }
      }
      stopper.join();
      assertThat(stopper.failed().get()).isZero();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).as("round %d: %s", rounds,
          pool.stats()).isTrue();
      assertThat(sub.isTerminated()).isTrue();
      assertThat(Probe.TWICE).isEmpty();
      for (Probe p : accepted) {
        boolean back = handedBack.contains(p);
        assertThat(p.runs.get() == 1 ^ back).as("ran once xor handed back, round %d", rounds)
            .isTrue();
      }
      PoolStats s = pool.stats();
      assertThat(s.waiting()).isZero();
      assertThat(s.busy()).isZero();
    }
  }

  /** A subpool's shutdownNow while its tasks wait in the parent's line; the parent runs on. */
  @Test
  void subpoolShutdownNowWhileItsTasksWaitInTheParentsLine() throws Exception {
    WorkerPool pool = fixture.pool("r3subnow", b -> b.capacity(1).maxWaiting(1000));
    int handedBackSoFar = 0; // the parent's counters add up over the rounds
    for (int round = 0; round < 200; round++) {
      WorkerPool sub = pool.newSubpool("s" + round, 3);
      WorkerPool nested = sub.newSubpool("n" + round, 2);
      PoolFixture.Gate blocker = fixture.occupy(pool);
      List<Probe> accepted = new ArrayList<>();
      List<Future<?>> futures = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        Probe p = new Probe();
        accepted.add(p);
        WorkerPool target = i % 2 == 0 ? sub : nested;
        if (i % 3 == 0) {
          futures.add(target.submit(p));
        } else {
          target.enqueue(p);
        }
      }
      Probe plain = new Probe();
      pool.enqueue(plain);
      List<Runnable> back = sub.shutdownNow();
      blocker.open();
      assertThat(sub.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      assertThat(nested.isTerminated()).isTrue();
      handedBackSoFar += back.size();
      awaitSettled(pool, "round " + round, handedBackSoFar);
      assertThat(sub.stats().submitted()).as("round %d: %s", round, sub.stats())
          .isEqualTo(sub.stats().completed() + back.size());
      assertThat(plain.runs.get()).isEqualTo(1);
      for (Probe p : accepted) {
        boolean handed = back.stream().anyMatch(r -> r == p || unwrapIs(r, p));
        assertThat(p.runs.get() == 1 ^ handed).as("round %d", round).isTrue();
      }
      assertThat(Probe.TWICE).isEmpty();
      assertThat(sub.stats().waiting()).isZero();
      assertThat(nested.stats().waiting()).isZero();
      assertThat(pool.stats().waiting()).isZero();
    }
  }

  private static boolean unwrapIs(Runnable r, Probe p) {
    // submit() hands back its future: it ran iff the probe ran; count it as handed back if not run
    return r instanceof Future<?> && p.runs.get() == 0;
  }

  /**
   * newSubpool and a subpool's reboot racing the parent's shutdown: each call either throws
   * PoolClosedException or yields a subpool that the parent's termination waits for; the parent
   * always terminates, and a subpool made is never left running on a shut-down parent.
   */
  @Test
  void newSubpoolAndRebootRacingParentShutdown() throws Exception {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.getLong("adopt.seconds", 3));
    int rounds = 0;
    while (System.nanoTime() < end) {
      rounds++;
      WorkerPool pool = fixture.pool("r3adopt", b -> b.capacity(2));
      WorkerPool old = pool.newSubpool("old", 1);
      old.shutdown();
      assertThat(old.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
      List<WorkerPool> made = new CopyOnWriteList<>();
      CountDownLatch start = new CountDownLatch(1);
      PoolFixture.Background maker = PoolFixture.background("maker", () -> {
        start.await();
        for (int i = 0; i < 20; i++) {
          try {
            WorkerPool s = pool.newSubpool("s" + i, 1);
            made.add(s);
            made.add(s.newSubpool("n" + i, 1));
          } catch (PoolClosedException closed) {
            // refused
          }
        }
      });
      PoolFixture.Background rebooter = PoolFixture.background("rebooter", () -> {
        start.await();
        try {
          old.reboot();
          old.execute(() -> { });
        } catch (PoolClosedException closed) {
          // refused
        }
      });
      start.countDown();
      for (int k = ThreadLocalRandom.current().nextInt(5000); k > 0; k--) {
        Thread.onSpinWait();
      }
      pool.shutdown();
      maker.join();
      rebooter.join();
      assertThat(maker.failed().get() + rebooter.failed().get()).isZero();
      boolean terminated = pool.awaitTermination(10, TimeUnit.SECONDS);
      if (!terminated) {
        StringBuilder why = new StringBuilder("round " + rounds + ": " + pool.stats()
            + " seats " + ((BoundedPool) pool).admission.state.seats()
            + " state " + ((BoundedPool) pool).admission.state.state()
            + " timersQuiet " + ((BoundedPool) pool).timers.isQuiet() + " workers " + ((BoundedPool) pool).workers() + "\n old: shutdown " + old.isShutdown()
            + " terminated " + old.isTerminated() + " " + old.stats());
        for (WorkerPool s : made) {
          why.append("\n ").append(s.name()).append(": shutdown ").append(s.isShutdown())
              .append(" terminated ").append(s.isTerminated()).append(' ').append(s.stats());
        }
        throw new AssertionError(why.toString());
      }
      for (WorkerPool s : made) {
        assertThat(s.isShutdown()).isTrue();
      }
      assertThat(old.isShutdown()).as("rebooted subpool of a shut-down parent").isTrue();
    }
  }

  /** A tiny thread-safe list (CopyOnWriteArrayList with a shorter name). */
  static final class CopyOnWriteList<T> extends java.util.concurrent.CopyOnWriteArrayList<T> {
    private static final long serialVersionUID = 1L;
  }
}
