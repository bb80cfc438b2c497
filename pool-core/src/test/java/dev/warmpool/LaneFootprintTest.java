package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A lane makes its queue with its first task (issue 33: a lane that only holds timers needs none):
 * the first tasks of a fresh lane racing each other (an execute and a timer due at once, or one the
 * timer thread hands on) both run, in the lane, one at a time; a close racing them leaves nothing
 * pending and the counters exact (DESIGN section 5: closing a lane cancels its pending tasks).
 */
class LaneFootprintTest {
  private static final Duration SAFETY = Duration.ofSeconds(30);

  /** Section 5: every accepted task of a lane runs, one at a time, also the first ones racing. */
  @Test
  void section5_aFreshLanesFirstTasksRacingEachOtherAllRunOneAtATime() throws Exception {
    try (WorkerPool pool = WorkerPool.builder().name("fresh").capacity(2).build()) {
      AtomicInteger running = new AtomicInteger();
      AtomicInteger overlaps = new AtomicInteger();
      int rounds = PoolFixture.stress(400);
      for (int round = 0; round < rounds; round++) {
        SerialExecutor lane = pool.newSerialExecutor();
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch ran = new CountDownLatch(3);
        Runnable task = () -> {
          if (running.incrementAndGet() != 1) {
            overlaps.incrementAndGet();
          }
          running.decrementAndGet();
          ran.countDown();
        };
        long delay = round % 2 == 0 ? 0 : 20_000; // due at the call, or handed on by the timer
        Thread a = new Thread(() -> {
          awaitQuietly(go);
          lane.execute(task);
        });
        Thread b = new Thread(() -> {
          awaitQuietly(go);
          lane.schedule(task, delay, TimeUnit.NANOSECONDS);
        });
        a.start();
        b.start();
        go.countDown();
        lane.executeAdmitted(task);
        a.join();
        b.join();
        assertThat(ran.await(SAFETY.toSeconds(), TimeUnit.SECONDS)).as("round %d", round).isTrue();
      }
      assertThat(overlaps.get()).isZero();
      awaitQuiet(pool);
      PoolStats s = pool.stats();
      assertThat(s.submitted()).as("%s", s).isEqualTo(s.completed()).isEqualTo(3L * rounds);
    }
  }

  /**
   * Section 5 and guarantee 7: a close racing a fresh lane's first execute and its timers (due at
   * once, or pending) leaves no task pending: a timer ran or its future reads cancelled, an execute
   * was refused, ran, or was withdrawn by the close; the lane holds no timer, and the counters are
   * exact at quiescence (submitted == completed: a withdrawn task leaves submitted).
   */
  @Test
  void section5_closeRacingAFreshLanesFirstTasksLeavesNothingPending() throws Exception {
    try (WorkerPool pool = WorkerPool.builder().name("fresh-close").capacity(2).build()) {
      AtomicInteger ran = new AtomicInteger(); // the executes' tasks
      AtomicInteger timersRan = new AtomicInteger();
      AtomicInteger refused = new AtomicInteger();
      int accepted = 0;
      int timersDone = 0;
      int timersScheduled = 0;
      for (int round = 0; round < PoolFixture.stress(400); round++) {
        SerialExecutor lane = pool.newSerialExecutor();
        List<ScheduledFuture<?>> futures = new CopyOnWriteArrayList<>();
        AtomicInteger executed = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        Thread a = new Thread(() -> {
          awaitQuietly(go);
          try {
            lane.execute(ran::incrementAndGet);
            executed.incrementAndGet();
          } catch (RejectedExecutionException closed) {
            refused.incrementAndGet();
          }
        });
        Thread b = new Thread(() -> {
          awaitQuietly(go);
          try {
            futures.add(lane.schedule(timersRan::incrementAndGet, 0, TimeUnit.NANOSECONDS));
            futures.add(lane.schedule(timersRan::incrementAndGet, 1, TimeUnit.HOURS));
          } catch (RejectedExecutionException closed) {
            refused.incrementAndGet();
          }
        });
        a.start();
        b.start();
        go.countDown();
        lane.close();
        a.join();
        b.join();
        accepted += executed.get();
        for (ScheduledFuture<?> f : futures) {
          await().atMost(SAFETY).until(f::isDone); // ran, or cancelled by the close
          timersScheduled++;
          if (!f.isCancelled()) {
            timersDone++;
          }
        }
        assertThat(((SerialLane) lane).pendingTimers()).as("round %d", round).isZero();
      }
      awaitQuiet(pool);
      // An execute that returned may still be cancelled by the close (a pending task): not counted.
      // (A due timer may run before the close too: counted apart, by its future. A future whose
      // task ran reads done; as with FutureTask, a cancel(false) landing after the task returned
      // but before its future completed may still win, so a cancelled future may have run.)
      assertThat(ran.get()).isLessThanOrEqualTo(accepted);
      assertThat(timersRan.get()).as("every timer whose future completed ran, none twice")
          .isGreaterThanOrEqualTo(timersDone).isLessThanOrEqualTo(timersScheduled);
      PoolStats s = pool.stats();
      assertThat(s.submitted()).as("%s, %d refused", s, refused.get()).isEqualTo(s.completed());
      assertThat(s.waiting()).isZero();
    }
  }

  private static void awaitQuiet(WorkerPool p) {
    await().atMost(SAFETY).until(() -> p.stats().busy() == 0 && p.stats().waiting() == 0
        && p.stats().submitted() == p.stats().completed() + p.stats().failed());
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
