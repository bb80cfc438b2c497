package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * {@link WorkerPool#setTaskTimer}: every task of every door is timed once, from acceptance to start
 * and for its run (DESIGN section 6, "Metrics": the {@code executor} and {@code executor.idle}
 * timers).
 */
class TaskTimerTest {

  /** (wait, run) pairs as the timer heard them. */
  static final class Recorder implements WorkerPool.TaskTimer {
    final List<long[]> heard = new CopyOnWriteArrayList<>();

    @Override
    public void taskRan(long waitNanos, long runNanos) {
      heard.add(new long[] {waitNanos, runNanos});
    }
  }

  @Test
  void waitIsFromAcceptanceToStartThroughTheLineAndRunIsTheRun() throws Exception {
    Recorder timer = new Recorder();
    try (WorkerPool pool = WorkerPool.builder().name("timed").capacity(1).build()) {
      pool.setTaskTimer(timer);
      assertThat(pool.taskTimer()).isSameAs(timer);
      CountDownLatch holding = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      pool.execute(() -> {
        holding.countDown();
        block(release);
      });
      holding.await();
      long[] ran = new long[1];
      pool.enqueue(() -> {
        long t0 = System.nanoTime();
        LockSupport.parkNanos(5_000_000);
        ran[0] = System.nanoTime() - t0;
      });
      long accepted = System.nanoTime(); // the task was accepted before this
      LockSupport.parkNanos(20_000_000); // time in line, to be measured (not a synchronisation)
      long waitedAtLeast = System.nanoTime() - accepted;
      release.countDown();
      await().atMost(Duration.ofSeconds(10)).until(() -> timer.heard.size() == 2);
      long[] queued = timer.heard.get(1);
      assertThat(queued[0]).isGreaterThanOrEqualTo(waitedAtLeast);
      assertThat(queued[1]).isGreaterThanOrEqualTo(ran[0]).isGreaterThanOrEqualTo(5_000_000);
    }
  }

  @Test
  void everyDoorIsTimedOnceASubpoolsTasksForItsParentTooAndNullStops() throws Exception {
    Recorder parentTimer = new Recorder();
    Recorder subTimer = new Recorder();
    try (WorkerPool pool = WorkerPool.builder().name("doors").capacity(4)
        .failureHandler((t, e) -> {}).build()) {
      WorkerPool sub = pool.newSubpool("sub", 2);
      pool.setTaskTimer(parentTimer);
      sub.setTaskTimer(subTimer);
      CountDownLatch done = new CountDownLatch(9);
      pool.execute(done::countDown);
      pool.enqueue(done::countDown);
      pool.submit(done::countDown).get();
      pool.submit(() -> {
        done.countDown();
        return 1;
      }).get();
      pool.execute(() -> {
        done.countDown();
        throw new IllegalStateException("a failing task is timed too");
      });
      SerialExecutor lane = pool.newSerialExecutor();
      lane.execute(done::countDown);
      lane.execute(done::countDown);
      pool.schedule(done::countDown, 1, TimeUnit.MILLISECONDS);
      sub.execute(done::countDown);
      assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
      CountDownLatch twoRuns = new CountDownLatch(2);
      ScheduledFuture<?> periodic = pool.scheduleAtFixedRate(twoRuns::countDown, 0, 1,
          TimeUnit.MILLISECONDS);
      assertThat(twoRuns.await(10, TimeUnit.SECONDS)).isTrue();
      periodic.cancel(false);
      // 9 tasks + at least 2 periodic runs for the parent; the subpool's one task for both
      await().atMost(Duration.ofSeconds(10)).until(() -> parentTimer.heard.size() >= 11);
      assertThat(subTimer.heard).hasSize(1);
      assertThat(parentTimer.heard).allSatisfy(pair -> {
        assertThat(pair[0]).isNotNegative();
        assertThat(pair[1]).isNotNegative();
      });

      pool.setTaskTimer(null);
      sub.setTaskTimer(null);
      int before = parentTimer.heard.size();
      pool.submit(() -> {}).get();
      sub.submit(() -> {}).get();
      assertThat(parentTimer.heard).hasSize(before);
      assertThat(subTimer.heard).hasSize(1);
    }
  }

  private static void block(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
