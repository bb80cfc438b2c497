package dev.warmpool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review 5 of held tasks (Engine, "Held tasks"): a task held by its worker runs exactly once, is
 * handed back, or is withdrawn by its handle; the pool's counts are exact at quiescence and it
 * terminates, whatever the holder does after queueing (blocks, throws, is shrunk away, is shut down).
 */
@Timeout(30)
class HeldTasksReviewTest {

  /** A factory whose calls after the first block until released: the pool keeps one worker. */
  static final class OneWorkerFactory implements ThreadFactory {
    final CountDownLatch release = new CountDownLatch(1);
    final AtomicInteger calls = new AtomicInteger();
    final String name;

    OneWorkerFactory(String name) {
      this.name = name;
    }

    @Override
    public Thread newThread(Runnable r) {
      if (calls.incrementAndGet() > 1) {
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return TestFactories.daemon(r, name + "-" + calls.get());
    }
  }

  private static void await(CountDownLatch l) throws InterruptedException {
    assertTrue(l.await(10, TimeUnit.SECONDS), "timed out");
  }

  private static void assertQuiet(PoolStats s, long completed, long failed) {
    assertEquals(0, s.busy(), s.toString());
    assertEquals(0, s.waiting(), s.toString());
    assertEquals(completed, s.completed(), s.toString());
    assertEquals(failed, s.failed(), s.toString());
    assertEquals(completed + failed, s.submitted(), s.toString());
  }

  @Test
  void cancellingAHeldTaskByItsHandleWithdrawsItAndItNeverRuns() throws Exception {
    OneWorkerFactory factory = new OneWorkerFactory("held-cancel");
    WorkerPool pool = WorkerPool.builder().name("held-cancel").capacity(3).threadFactory(factory)
        .build();
    AtomicBoolean ran = new AtomicBoolean();
    AtomicReference<TaskHandle> handle = new AtomicReference<>();
    AtomicBoolean cancelled = new AtomicBoolean();
    CountDownLatch outerDone = new CountDownLatch(1);
    pool.execute(() -> {
      TaskHandle h = pool.enqueue(() -> ran.set(true));
      handle.set(h);
      cancelled.set(h.cancel());
      outerDone.countDown();
    });
    await(outerDone);
    // The only worker reaches the withdrawn task (held, or published by the watch) and skips it,
    // then takes this marker: after it, nothing of the outer task is left.
    CountDownLatch marker = new CountDownLatch(1);
    pool.enqueue(marker::countDown);
    await(marker);
    assertTrue(cancelled.get(), "a held task has not started: its handle withdraws it");
    assertTrue(handle.get().isCancelled());
    assertFalse(ran.get());
    pool.shutdown();
    factory.release.countDown();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    assertQuiet(pool.stats(), 2, 0);
  }

  @Test
  void cancellingTheFutureOfAHeldSubmitWithdrawsIt() throws Exception {
    OneWorkerFactory factory = new OneWorkerFactory("held-fcancel");
    WorkerPool pool = WorkerPool.builder().name("held-fcancel").capacity(3).threadFactory(factory)
        .build();
    AtomicBoolean ran = new AtomicBoolean();
    AtomicReference<Future<?>> future = new AtomicReference<>();
    CountDownLatch outerDone = new CountDownLatch(1);
    pool.execute(() -> {
      Future<?> f = pool.submit(() -> ran.set(true));
      future.set(f);
      f.cancel(false);
      outerDone.countDown();
    });
    await(outerDone);
    CountDownLatch marker = new CountDownLatch(1);
    pool.enqueue(marker::countDown);
    await(marker);
    assertTrue(future.get().isCancelled());
    assertFalse(ran.get());
    pool.shutdown();
    factory.release.countDown();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    assertQuiet(pool.stats(), 2, 0);
  }

  @Test
  void gracefulShutdownWhileAHolderWaitsForItsHeldTasksRunsThemAndTerminates() throws Exception {
    WorkerPool pool = WorkerPool.builder().name("held-shutdown").capacity(4).build();
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch go = new CountDownLatch(1);
    CountDownLatch inner = new CountDownLatch(3);
    AtomicBoolean sawAll = new AtomicBoolean();
    pool.execute(() -> {
      for (int i = 0; i < 3; i++) {
        pool.enqueue(inner::countDown);
      }
      holding.countDown();
      try {
        go.await();
        sawAll.set(inner.await(10, TimeUnit.SECONDS)); // only others can run them now
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    await(holding);
    pool.shutdown();
    go.countDown();
    assertTrue(pool.awaitTermination(20, TimeUnit.SECONDS), pool.stats().toString());
    assertTrue(sawAll.get());
    assertQuiet(pool.stats(), 4, 0);
    assertEquals(0, pool.stats().workers());
  }

  @Test
  void aTaskThatQueuesWorkThenThrowsIntoAThrowingFailureHandlerLosesNothing() throws Exception {
    AtomicInteger handled = new AtomicInteger();
    WorkerPool pool = WorkerPool.builder().name("held-fail").capacity(3)
        .threadFactory(r -> TestFactories.quietDaemon(r, "held-fail"))
        .failureHandler((t, e) -> {
          handled.incrementAndGet();
          throw new IllegalStateException("handler fails too");
        }).build();
    CountDownLatch inner = new CountDownLatch(2);
    pool.execute(() -> {
      pool.enqueue(inner::countDown);
      pool.enqueue(inner::countDown);
      throw new IllegalArgumentException("task fails after queueing");
    });
    await(inner);
    pool.shutdown();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS), pool.stats().toString());
    assertEquals(1, handled.get());
    assertQuiet(pool.stats(), 2, 1);
  }

  @Test
  void shrinkingWhileATaskHoldsWorkRunsEachHeldTaskOnce() throws Exception {
    WorkerPool pool = WorkerPool.builder().name("held-shrink").capacity(4).build();
    // Two workers: the holder and one that stays busy until released.
    CountDownLatch otherBusy = new CountDownLatch(1);
    CountDownLatch releaseOther = new CountDownLatch(1);
    pool.execute(() -> {
      otherBusy.countDown();
      try {
        releaseOther.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    await(otherBusy);
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch go = new CountDownLatch(1);
    AtomicInteger ran = new AtomicInteger();
    CountDownLatch inner = new CountDownLatch(2);
    pool.execute(() -> {
      pool.enqueue(() -> {
        ran.incrementAndGet();
        inner.countDown();
      });
      pool.enqueue(() -> {
        ran.incrementAndGet();
        inner.countDown();
      });
      holding.countDown();
      try {
        go.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    await(holding);
    pool.resize(1);
    go.countDown();
    releaseOther.countDown();
    await(inner);
    pool.shutdown();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS), pool.stats().toString());
    assertEquals(2, ran.get());
    assertQuiet(pool.stats(), 4, 0);
  }

  @Test
  void shutdownNowThenRebootLeavesNoStaleHeldTask() throws Exception {
    OneWorkerFactory factory = new OneWorkerFactory("held-reboot");
    WorkerPool pool = WorkerPool.builder().name("held-reboot").capacity(3).threadFactory(factory)
        .build();
    CountDownLatch holding = new CountDownLatch(1);
    AtomicInteger heldRuns = new AtomicInteger();
    Runnable held = heldRuns::incrementAndGet;
    pool.execute(() -> {
      pool.enqueue(held);
      pool.enqueue(held);
      holding.countDown();
      try {
        new CountDownLatch(1).await(); // until shutdownNow interrupts it
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    await(holding);
    List<Runnable> back = pool.shutdownNow();
    factory.release.countDown();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS), pool.stats().toString());
    assertEquals(2, back.size());
    pool.reboot();
    CountDownLatch after = new CountDownLatch(1);
    pool.execute(after::countDown);
    await(after);
    pool.shutdown();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    assertEquals(0, heldRuns.get(), "handed back, so never run");
    PoolStats s = pool.stats();
    assertEquals(0, s.busy() + s.waiting(), s.toString());
    assertEquals(s.completed() + 2, s.submitted(), s.toString());
  }

  @Test
  void aSubpoolsShutdownNowHandsBackATaskHeldOnItsParentsWorkerOnce() throws Exception {
    OneWorkerFactory factory = new OneWorkerFactory("held-sub");
    WorkerPool pool = WorkerPool.builder().name("held-sub").capacity(3).threadFactory(factory)
        .build();
    WorkerPool sub = pool.newSubpool("sub", 2);
    AtomicBoolean heldRan = new AtomicBoolean();
    Runnable held = () -> heldRan.set(true);
    holdThenBlock(sub, held);
    List<Runnable> back = sub.shutdownNow();
    assertTrue(sub.awaitTermination(10, TimeUnit.SECONDS), sub.stats().toString());
    List<Runnable> parentBack = pool.shutdownNow();
    factory.release.countDown();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS), pool.stats().toString());
    assertEquals(List.of(held), back);
    assertEquals(List.of(), parentBack, "handed back once, by the subpool");
    assertFalse(heldRan.get());
    PoolStats s = pool.stats();
    assertEquals(0, s.busy() + s.waiting(), s.toString());
  }

  @Test
  void aParentsShutdownNowHandsBackASubpoolTaskHeldOnItsWorkerOnce() throws Exception {
    OneWorkerFactory factory = new OneWorkerFactory("held-sub2");
    WorkerPool pool = WorkerPool.builder().name("held-sub2").capacity(3).threadFactory(factory)
        .build();
    WorkerPool sub = pool.newSubpool("sub", 2);
    AtomicBoolean heldRan = new AtomicBoolean();
    Runnable held = () -> heldRan.set(true);
    holdThenBlock(sub, held);
    List<Runnable> back = pool.shutdownNow();
    factory.release.countDown();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS), pool.stats().toString());
    assertTrue(sub.isTerminated());
    assertEquals(List.of(held), back);
    assertFalse(heldRan.get());
    PoolStats s = pool.stats();
    assertEquals(0, s.busy() + s.waiting(), s.toString());
    PoolStats ss = sub.stats();
    assertEquals(ss.completed() + 1, ss.submitted(), ss.toString());
  }

  @Test
  void aLaneTaskHeldByAWorkerRunsInOrderAndOnce() throws Exception {
    WorkerPool pool = WorkerPool.builder().name("held-lane").capacity(3).build();
    SerialExecutor lane = pool.newSerialExecutor();
    StringBuffer order = new StringBuffer();
    CountDownLatch done = new CountDownLatch(3);
    CountDownLatch holderWaits = new CountDownLatch(1);
    pool.execute(() -> {
      lane.execute(() -> {
        order.append('a');
        done.countDown();
      });
      lane.execute(() -> {
        order.append('b');
        done.countDown();
      });
      try {
        // waits for its own lane's work outside the library: only the watch frees it
        assertTrue(holderWaits.await(10, TimeUnit.SECONDS));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    lane.execute(() -> {
      order.append('c');
      done.countDown();
      holderWaits.countDown();
    });
    await(done);
    pool.shutdown();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    assertEquals(3, order.length());
  }

  @Test
  void virtualThreadWorkersFreeHeldTasksWhoseHolderBlocksOnAJdkPrimitive() throws Exception {
    Assumptions.assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21+");
    WorkerPool pool = WorkerPool.builder().name("held-vt").capacity(64).virtualThreads(true).build();
    // 32 holders, each queues a subtask and then waits for it on a latch, a CompletableFuture
    // join or a get of the subpool's future: each subtask runs while its holder waits.
    WorkerPool sub = pool.newSubpool("held-vt-sub", 64);
    CountDownLatch all = new CountDownLatch(32);
    AtomicInteger freed = new AtomicInteger();
    for (int i = 0; i < 32; i++) {
      int kind = i % 3;
      pool.execute(() -> {
        try {
          if (kind == 0) {
            CountDownLatch ran = new CountDownLatch(1);
            pool.enqueue(ran::countDown);
            if (ran.await(10, TimeUnit.SECONDS)) {
              freed.incrementAndGet();
            }
          } else if (kind == 1) {
            if (java.util.concurrent.CompletableFuture.supplyAsync(() -> 1, pool)
                .get(10, TimeUnit.SECONDS) == 1) {
              freed.incrementAndGet();
            }
          } else {
            if (sub.submit(() -> 1).get(10, TimeUnit.SECONDS) == 1) {
              freed.incrementAndGet();
            }
          }
        } catch (Exception e) {
          Thread.currentThread().interrupt();
        } finally {
          all.countDown();
        }
      });
    }
    await(all);
    assertEquals(32, freed.get());
    pool.shutdown();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    PoolStats s = pool.stats();
    assertEquals(0, s.busy() + s.waiting(), s.toString());
    assertEquals(s.submitted(), s.completed(), s.toString());
  }

  @Test
  void aHolderThatTheWatchFreedAndThatQueuesMoreIsWatchedAgain() throws Exception {
    // Each round the holder queues one more task and waits for it outside the library: the watch
    // that published the previous one must be armed again by the next first hold.
    WorkerPool pool = WorkerPool.builder().name("held-rearm").capacity(3).build();
    try {
      AtomicInteger freed = new AtomicInteger();
      Future<?> outer = pool.submit(() -> {
        for (int round = 0; round < 20; round++) {
          CountDownLatch ran = new CountDownLatch(1);
          pool.enqueue(ran::countDown);
          if (!ran.await(5, TimeUnit.SECONDS)) {
            return null;
          }
          freed.incrementAndGet();
        }
        return null;
      });
      outer.get(20, TimeUnit.SECONDS);
      assertEquals(20, freed.get());
    } finally {
      pool.close();
    }
  }

  /**
   * A task of {@code pool} queues {@code held} there (its worker holds it), then blocks until
   * interrupted; returns once it holds.
   */
  private static void holdThenBlock(WorkerPool pool, Runnable held) throws InterruptedException {
    CountDownLatch holding = new CountDownLatch(1);
    pool.execute(() -> {
      pool.enqueue(held);
      holding.countDown();
      try {
        new CountDownLatch(1).await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    await(holding);
  }
}
