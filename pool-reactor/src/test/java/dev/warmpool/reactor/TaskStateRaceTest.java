package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * PoolTask's own states and interrupt handshake (issue 33: it no longer extends FutureTask). A
 * dispose from another thread racing a run's start or end: the task ends exactly once (the
 * scheduler's graceful disposal completes only when every accepted task ended), reads disposed,
 * and its interrupt never reaches the worker's next task (guarantee: a disposed run's interrupt is
 * for that run only).
 */
class TaskStateRaceTest {
  private static final Duration SAFETY = Duration.ofSeconds(30);
  private final WorkerPool pool = WorkerPool.builder().name("task-state").capacity(2).build();

  @AfterEach
  void close() {
    pool.shutdownNow();
    pool.close();
  }

  /** A dispose racing the start of an immediate or a timer's run, then a probe on the same lane. */
  @Test
  void disposeRacingARunsStartEndsTheTaskOnceAndNeverLeaksItsInterrupt() throws Exception {
    Scheduler s = PoolSchedulers.from(pool);
    AtomicInteger leaked = new AtomicInteger();
    for (int round = 0; round < 2000; round++) {
      Scheduler.Worker w = s.createWorker();
      CountDownLatch go = new CountDownLatch(1);
      Runnable body = () -> {
        long end = System.nanoTime() + 20_000;
        while (System.nanoTime() < end && !Thread.currentThread().isInterrupted()) {
          Thread.onSpinWait(); // a short run that an interrupt may cut
        }
      };
      Disposable d = round % 2 == 0 ? w.schedule(body) : w.schedule(body, 0, TimeUnit.NANOSECONDS);
      Thread disposer = new Thread(() -> {
        Occupied.awaitQuietly(go);
        d.dispose();
      });
      disposer.start();
      go.countDown();
      disposer.join();
      assertThat(d.isDisposed()).as("round %d", round).isTrue();
      CountDownLatch probed = new CountDownLatch(1);
      w.schedule(() -> {
        if (Thread.currentThread().isInterrupted()) {
          leaked.incrementAndGet();
        }
        probed.countDown();
      });
      assertThat(probed.await(SAFETY.toSeconds(), TimeUnit.SECONDS)).isTrue();
      w.dispose();
    }
    assertThat(leaked.get()).as("interrupts that reached the next task").isZero();
    s.disposeGracefully().block(SAFETY); // every accepted task ended, exactly once
  }

  /**
   * A dispose racing the end of a periodic run: either the run sees it (and ends the task) or the
   * dispose finds no run in progress (and ends it): never neither, so the graceful disposal
   * completes; no run starts after the dispose returned.
   */
  @Test
  void disposeRacingAPeriodicRunsEndEndsTheTaskOnce() throws Exception {
    Scheduler s = PoolSchedulers.from(pool);
    for (int round = 0; round < 2000; round++) {
      Scheduler.Worker w = s.createWorker();
      CountDownLatch first = new CountDownLatch(1);
      AtomicInteger runs = new AtomicInteger();
      Disposable d = (round & 1) == 0
          ? w.schedulePeriodically(() -> {
            runs.incrementAndGet();
            first.countDown();
          }, 0, 1, TimeUnit.MICROSECONDS)
          : s.schedulePeriodically(() -> {
            runs.incrementAndGet();
            first.countDown();
          }, 0, 1, TimeUnit.MICROSECONDS);
      assertThat(first.await(SAFETY.toSeconds(), TimeUnit.SECONDS)).isTrue();
      d.dispose(); // races the end of a run, or the next one's start
      assertThat(d.isDisposed()).isTrue();
      w.dispose();
    }
    s.disposeGracefully().block(SAFETY); // every accepted task ended, exactly once
  }
}
