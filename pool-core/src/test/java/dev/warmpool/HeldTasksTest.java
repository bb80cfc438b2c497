package dev.warmpool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Held tasks (Engine, "Held tasks"): work that a running task queues on its own pool is run by the
 * same worker after the task, unless the task blocks, in which case the hold watch, a wait on this
 * library, or shutdownNow moves it on. Each test would hang (and time out) if a held task were
 * stranded behind its blocked holder.
 */
@Timeout(30)
class HeldTasksTest {

  @Test
  void aTaskQueuedByAShortTaskRunsNextOnTheSameWorker() throws Exception {
    BoundedPool pool = (BoundedPool) WorkerPool.builder().name("held-same").capacity(4).build();
    try {
      AtomicReference<Thread> inner = new AtomicReference<>();
      AtomicReference<Thread> outer = new AtomicReference<>();
      CountDownLatch done = new CountDownLatch(1);
      pool.execute(() -> {
        outer.set(Thread.currentThread());
        pool.enqueue(() -> {
          inner.set(Thread.currentThread());
          done.countDown();
        });
      });
      assertTrue(done.await(10, TimeUnit.SECONDS));
      // A preempted holder (a loaded machine) may outlive the 1 ms hold watch, which then rightly
      // publishes the task to another worker; only that excuses another thread.
      if (pool.engine.watchFoundHeld() == 0) {
        assertSame(outer.get(), inner.get(), "the holder runs its queued task itself");
      }
    } finally {
      pool.close();
    }
  }

  @Test
  void aTaskThatQueuesWorkAndThenWaitsForItOnALatchIsFreedByTheHoldWatch() throws Exception {
    WorkerPool pool = WorkerPool.builder().name("held-latch").capacity(2).build();
    try {
      CountDownLatch innerRan = new CountDownLatch(1);
      AtomicReference<Thread> inner = new AtomicReference<>();
      Future<?> outer = pool.submit(() -> {
        pool.enqueue(() -> {
          inner.set(Thread.currentThread());
          innerRan.countDown();
        });
        innerRan.await(); // blocks outside the library: only the watch can publish the inner task
        return null;
      });
      outer.get(10, TimeUnit.SECONDS);
      assertNotSame(null, inner.get());
    } finally {
      pool.close();
    }
  }

  @Test
  void aTaskFoundWaitingForItsHeldWorkTurnsHoldingOffForAWhile() throws Exception {
    // The first wait outside the library is freed by the hold watch, which finds the holder stuck
    // and turns holding off: the next subtask queued by a task is published at once, not held.
    BoundedPool pool = (BoundedPool) WorkerPool.builder().name("held-off").capacity(4).build();
    try {
      CountDownLatch firstRan = new CountDownLatch(1);
      pool.submit(() -> {
        pool.enqueue(firstRan::countDown);
        firstRan.await(); // a wait no hook sees: only the watch frees it
        return null;
      }).get(10, TimeUnit.SECONDS);
      assertEquals(1, pool.engine.holdOffs(), "the watch found the holder waiting");
      // Holding comes back after 100 ms, which a loaded machine may spend anywhere: so what is
      // checked is that while it is off (read before the enqueue), nothing is held.
      Boolean heldNothingIfOff = pool.submit(() -> {
        boolean off = pool.engine.isHoldingOff();
        pool.enqueue(() -> { });
        return !off || Worker.current().held.isEmpty();
      }).get(10, TimeUnit.SECONDS);
      assertTrue(heldNothingIfOff, "published at once while holding is off");
    } finally {
      pool.close();
    }
  }

  /** A task that queues a subtask and waits for it on a latch, which only the watch frees. */
  private static void waitOutsideForASubtask(WorkerPool pool) throws Exception {
    CountDownLatch ran = new CountDownLatch(1);
    pool.submit(() -> {
      pool.enqueue(ran::countDown);
      ran.await();
      return null;
    }).get(10, TimeUnit.SECONDS);
  }

  @Test
  void aPatternFoundAgainAfterHoldingResumedHoldsOffTwiceAsLong() throws Exception {
    // Issue 33: a fixed 100 ms hold-off made a task that joins its subtask every few ms pay the
    // 1 ms watch once per 100 ms, in its p99. Each recurrence doubles the hold-off (to 10 s).
    BoundedPool pool = (BoundedPool) WorkerPool.builder().name("held-double").capacity(4).build();
    try {
      long base = Engine.HOLD_OFF_NANOS;
      for (int i = 1; i <= 3; i++) {
        assertTrue(PoolFixture.waitUntil(java.time.Duration.ofSeconds(10),
            () -> !pool.engine.isHoldingOff()), "holding resumed");
        // the watch may not find this one waiting if it was armed earlier: repeat until it does
        int before = pool.engine.holdOffs();
        while (pool.engine.holdOffs() == before) {
          waitOutsideForASubtask(pool);
        }
        assertEquals(base << i, pool.engine.nextHoldOffNanos(), "after hold-off " + i);
      }
    } finally {
      pool.close();
    }
  }

  @Test
  void aPoolThatTerminatesLeavesNoHoldOffOnTheSharedTimer() throws Exception {
    // Guarantee 12: the timer thread ends soon after its last task; a hold-off's resume (up to
    // 10 s away) of a pool that is gone must not keep it alive.
    BoundedPool pool = (BoundedPool) WorkerPool.builder().name("held-leave").capacity(4).build();
    // The hold-off's resume must still be pending at the shutdown. A stall longer than the
    // hold-off (100 ms) lets it fire first (failed once at a load of 5.5): then find the pattern
    // again; each recurrence doubles the hold-off.
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    do {
      waitOutsideForASubtask(pool);
    } while (!(pool.engine.isHoldingOff() && pool.engine.onTimer())
        && System.nanoTime() < giveUp);
    assertTrue(pool.engine.holdOffs() >= 1);
    assertTrue(pool.engine.isHoldingOff() && pool.engine.onTimer(), "the resume is pending");
    pool.shutdown();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    assertTrue(PoolFixture.waitUntil(java.time.Duration.ofSeconds(5),
        () -> pool.stats().workers() == 0));
    assertFalse(pool.engine.onTimer(), "nothing of the pool's engine left on the timer");
    assertFalse(pool.engine.isHoldingOff(), "a reboot finds holding on");
  }

  @Test
  @Timeout(120)
  void holdingThatPaysOffForAsLongAsTheHoldOffHalvesIt() throws Exception {
    BoundedPool pool = (BoundedPool) WorkerPool.builder().name("held-halve").capacity(4).build();
    try {
      waitOutsideForASubtask(pool);
      assertEquals(1, pool.engine.holdOffs());
      assertEquals(2 * Engine.HOLD_OFF_NANOS, pool.engine.nextHoldOffNanos());
      // Short tasks that queue a subtask and end: the watch finds nobody waiting, for 200 ms.
      // (A safepoint or a preemption of more than 0.5 ms while a task holds can still look like a
      // wait and double it again: the loop goes on until it has halved back. At a load of 10 on
      // 2 cores that took more than 20 s once: the bound is only a liveness one.)
      long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
      while (pool.engine.nextHoldOffNanos() != Engine.HOLD_OFF_NANOS) {
        assertTrue(System.nanoTime() < giveUp, "not halved back in 90 s");
        CountDownLatch ran = new CountDownLatch(1);
        pool.execute(() -> pool.enqueue(ran::countDown));
        assertTrue(ran.await(10, TimeUnit.SECONDS));
      }
    } finally {
      pool.close();
    }
  }

  @Test
  void aTaskRefusedForWantOfASeatHandsTheTasksItHoldsToIdleWorkersAtOnce() throws Exception {
    // The rule (issue 33, review 4): a held task holds its seat, so the tasks a running task holds
    // may cost a rejection in a nonblocking pool (as tasks queued for a worker do); but the call
    // that is refused publishes what its caller holds, so idle workers start on it at once instead
    // of after the 1 ms watch, and the pool drains while its producer runs.
    BoundedPool pool = (BoundedPool) WorkerPool.builder().name("held-refused").capacity(4)
        .nonblocking(true).build();
    try {
      // A round where the watch fired meanwhile (a cold or preempted refusal; it then also turns
      // holding off for a while) proves nothing: rounds go on until one is conclusive.
      int round = 0;
      String outcome = "inconclusive";
      while (outcome.equals("inconclusive") && ++round <= 20) {
        PoolFixture.waitUntil(java.time.Duration.ofSeconds(15), () -> !pool.engine.isHoldingOff());
        outcome = refusedWhileHolding(pool);
      }
      assertEquals("published at the refusal", outcome, "round " + round);
      long rounds = round;
      assertTrue(PoolFixture.waitUntil(java.time.Duration.ofSeconds(10),
          () -> pool.stats().completed() == 4 * rounds));
      assertEquals(rounds, pool.stats().rejected());
      assertEquals(4 * rounds, pool.stats().submitted());
    } finally {
      pool.close();
    }
  }

  /** A producer task holds three tasks, the pool's other seats, and queues a fourth. */
  private static String refusedWhileHolding(BoundedPool pool) throws Exception {
    CountDownLatch started = new CountDownLatch(3);
    CountDownLatch release = new CountDownLatch(1);
    return pool.submit(() -> {
      try {
        for (int i = 0; i < 3; i++) {
          pool.enqueue(() -> {
            started.countDown();
            PoolFixture.awaitQuietly(release, java.time.Duration.ofSeconds(20));
          });
        }
        int watchBefore = pool.engine.watchFoundHeld();
        boolean held = Worker.current().held.size() == 3; // not if holding is off (a past round)
        try {
          pool.enqueue(() -> { });
          return "accepted"; // a seat was free: 4 seats, the producer's and three held
        } catch (PoolOverloadedException expected) {
          String outcome = !held || pool.engine.watchFoundHeld() != watchBefore ? "inconclusive"
              : Worker.current().held.isEmpty() ? "published at the refusal" : "still held";
          started.await(); // a wait outside the library: the three run while we still run
          return outcome;
        }
      } finally {
        release.countDown(); // the three hold their seats until the fourth call is answered
      }
    }).get(10, TimeUnit.SECONDS);
  }

  @Test
  void aTaskThatWaitsForTheFutureOfItsSubtaskPublishesItFirst() throws Exception {
    WorkerPool pool = WorkerPool.builder().name("held-get").capacity(2).build();
    try {
      Future<Integer> outer = pool.submit(() -> pool.submit(() -> 42).get());
      assertEquals(42, outer.get(10, TimeUnit.SECONDS));
    } finally {
      pool.close();
    }
  }

  @Test
  void aTaskWaitingInLineForASeatPublishesWhatItHoldsFirst() throws Exception {
    // Capacity 2: the outer task holds a seat, its held task the other; its blocking execute must
    // wait for a seat, which only the held task, once run elsewhere, can give back.
    WorkerPool pool = WorkerPool.builder().name("held-line").capacity(2).build();
    try {
      CountDownLatch second = new CountDownLatch(1);
      Future<?> outer = pool.submit(() -> {
        pool.enqueue(() -> { });
        pool.execute(second::countDown); // waits in line for a seat
        return null;
      });
      outer.get(10, TimeUnit.SECONDS);
      assertTrue(second.await(10, TimeUnit.SECONDS));
    } finally {
      pool.close();
    }
  }

  @Test
  void shutdownNowHandsBackAHeldTaskWhoseHolderBlocks() throws Exception {
    // The second worker never starts (its factory call blocks), so the held task is still there at
    // shutdownNow, held or (if the hold watch fired first) queued: it must be handed back, never
    // lost or run. EngineLincheckTest pins the held case alone, with a timer that never fires.
    CountDownLatch releaseFactory = new CountDownLatch(1);
    AtomicInteger calls = new AtomicInteger();
    ThreadFactory factory = r -> {
      if (calls.incrementAndGet() > 1) {
        try {
          releaseFactory.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return TestFactories.daemon(r, "held-sn");
    };
    WorkerPool pool = WorkerPool.builder().name("held-sn").capacity(2).threadFactory(factory).build();
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch block = new CountDownLatch(1);
    AtomicBoolean heldRan = new AtomicBoolean();
    Runnable held = () -> heldRan.set(true);
    pool.execute(() -> {
      pool.enqueue(held);
      holding.countDown();
      try {
        block.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt(); // shutdownNow interrupts it
      }
    });
    assertTrue(holding.await(10, TimeUnit.SECONDS));
    List<Runnable> back = pool.shutdownNow();
    releaseFactory.countDown();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    assertEquals(1, back.size(), "the held task is handed back");
    assertFalse(heldRan.get());
    PoolStats s = pool.stats();
    assertEquals(0, s.busy() + s.waiting(), s.toString());
  }

  @RepeatedTest(3)
  void nestedSubmissionsUnderResizeAllRunExactlyOnce() throws Exception {
    // Each task queues up to two more until a budget is spent, while the pool is resized; every
    // accepted task runs once and the pool ends quiet (seats and counts exact).
    WorkerPool pool = WorkerPool.builder().name("held-stress").capacity(8)
        .maxWaiting(Integer.MAX_VALUE).build();
    try {
      int budget = 50_000;
      AtomicInteger left = new AtomicInteger(budget);
      AtomicInteger ran = new AtomicInteger();
      CountDownLatch all = new CountDownLatch(budget);
      Runnable[] task = new Runnable[1];
      task[0] = () -> {
        ran.incrementAndGet();
        all.countDown();
        for (int i = 0; i < 2; i++) {
          if (left.getAndDecrement() > 0) {
            pool.enqueue(task[0]);
          }
        }
      };
      left.decrementAndGet();
      pool.execute(task[0]);
      for (int i = 0; all.getCount() > 0 && i < 10_000; i++) {
        pool.resize(2 + (i % 7));
        Thread.onSpinWait();
      }
      assertTrue(all.await(20, TimeUnit.SECONDS), "ran " + ran.get());
      assertEquals(budget, ran.get());
      pool.shutdown();
      assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
      assertEquals(budget, pool.stats().completed());
    } finally {
      pool.close();
    }
  }
}
