package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Guarantee 4 (an accepted task runs) when a growing resize races the start of the first worker:
 * a task is enqueued on a fresh pool (its start goes to the background) and the pool is at once
 * grown past its run queue's ring, so the queue installs a longer ring and moves the task. The
 * background start could look at the queue while the task was out of its sight (the old ring read
 * after the move, or the new one before it), give up, and drop its {@code starting} count only
 * after the grow's own signal had seen it in flight and relied on it: no worker ever started.
 * Before the fix, 40 of 863,473 such rounds lost their start in a warm 60 s loop, and this test
 * failed 3 runs of 3, within the first 53 to 249 rounds; it runs 12,000 (scaled by
 * {@code -Dwarmpool.stress.scale}) and stops at the first task
 * that does not run. The deterministic form of the same
 * interleaving is {@code EngineLincheckTest.startRacingGrowLosesNoWakeUp}.
 */
@Timeout(300)
@Tag("stress")
class GrowStartStressTest {
  private static final int THREADS = 3;
  /** 40,000 when it was written (49 s); failed 3 of 3 runs before the fix, by round 249. */
  private static final int ROUNDS_PER_THREAD = (int) (4_000 * PoolFixture.STRESS_SCALE);
  /** Only a safety bound: a task that is not run by then is taken as lost. */
  private static final long SAFETY_SECONDS = 10;

  @Test
  void growRacingTheFirstBackgroundStartLosesNoTask() throws Exception {
    AtomicReference<String> lost = new AtomicReference<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      Thread thread = new Thread(() -> {
        try {
          for (int i = 0; i < ROUNDS_PER_THREAD && lost.get() == null; i++) {
            BoundedPool pool = (BoundedPool) WorkerPool.builder()
                .name(PoolFixture.uniqueName("grow-start")).capacity(2)
                .maxIdle(Duration.ofHours(1)).build();
            CountDownLatch ran = new CountDownLatch(1);
            pool.enqueue(ran::countDown);
            pool.resize(3); // ring of 2 to ring of 4: install, then move the task
            if (!ran.await(SAFETY_SECONDS, TimeUnit.SECONDS)) {
              lost.compareAndSet(null, "round " + i + ": starts in flight "
                  + pool.engine.startsInFlight() + ", queued " + pool.engine.runQueue.size()
                  + ", " + pool.stats());
            }
            pool.shutdownNow();
            if (!pool.awaitTermination(SAFETY_SECONDS, TimeUnit.SECONDS)) {
              lost.compareAndSet(null, "round " + i + ": did not terminate, " + pool.stats());
            }
          }
        } catch (InterruptedException e) {
          lost.compareAndSet(null, "interrupted");
        }
      }, "grow-start-submitter-" + t);
      thread.start();
      threads.add(thread);
    }
    for (Thread thread : threads) {
      thread.join();
    }
    assertThat(lost.get()).as("a task that never ran").isNull();
  }
}
