package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A pool's pending timers live in a list through the timers' own links (issue 33: no concurrent
 * set node per timer). Guarantee 7 through it: a timer leaves the list once, from its head, middle
 * or tail, however often it is cancelled, and shutdown cancels exactly the ones still pending,
 * also while other threads schedule and cancel.
 */
class TimersListTest {

  /** Guarantee 7: shutdown cancels every timer still pending, after cancels from every position. */
  @Test
  void guarantee7_shutdownCancelsExactlyTheTimersLeftAfterCancelsFromEveryPosition() {
    WorkerPool pool = WorkerPool.builder().name("timers-list").capacity(1).build();
    List<ScheduledFuture<?>> timers = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      timers.add(pool.schedule(() -> { }, 1, TimeUnit.HOURS));
    }
    timers.get(0).cancel(false); // the head
    timers.get(999).cancel(false); // the tail
    for (int i = 1; i < 999; i += 3) {
      timers.get(i).cancel(false); // the middle
      timers.get(i).cancel(false); // twice: it left once
    }
    AbstractWorkerPool p = (AbstractWorkerPool) pool;
    assertThat(p.timers.size()).isEqualTo(1000 - 2 - 333);
    pool.shutdown();
    assertThat(timers).allMatch(ScheduledFuture::isCancelled);
    assertThat(p.timers.size()).isZero();
    assertThat(pool.isTerminated()).isTrue();
  }

  /** Guarantee 7: shutdown racing schedules and cancels from two threads leaves no timer pending. */
  @Test
  void guarantee7_shutdownRacingSchedulesAndCancelsLeavesNoTimerPending() throws Exception {
    for (int round = 0; round < 200; round++) {
      WorkerPool pool = WorkerPool.builder().name("timers-race").capacity(1).build();
      List<ScheduledFuture<?>> kept = java.util.Collections.synchronizedList(new ArrayList<>());
      CountDownLatch go = new CountDownLatch(1);
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < 2; t++) {
        Thread th = new Thread(() -> {
          try {
            go.await();
            for (int i = 0; i < 200; i++) {
              ScheduledFuture<?> f = pool.schedule(() -> { }, 1, TimeUnit.HOURS);
              if (i % 2 == 0) {
                f.cancel(false);
              } else {
                kept.add(f);
              }
            }
          } catch (java.util.concurrent.RejectedExecutionException closed) {
            // shut down: later schedules are refused
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
        th.start();
        threads.add(th);
      }
      go.countDown();
      pool.shutdown();
      for (Thread th : threads) {
        th.join();
      }
      synchronized (kept) {
        assertThat(kept).as("round %d", round).allMatch(ScheduledFuture::isDone);
      }
      assertThat(((AbstractWorkerPool) pool).timers.size()).as("round %d", round).isZero();
      assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }
  }
}
