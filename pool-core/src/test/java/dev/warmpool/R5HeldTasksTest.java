package dev.warmpool;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * r5 (adversarial review of version 4): the engine's hold-off state on the shared timer. It is
 * taken off the timer ({@code Engine.leaveTimer}) only by the last worker that exits after
 * shutdown; a pool whose workers were all retired idle before the shutdown has no such worker.
 */
@Timeout(60)
class R5HeldTasksTest {

  /**
   * Guarantee 12: the timer thread ends soon after its last task. A pool that turned holding off
   * (its resume up to 10 s away on the shared timer), whose workers then all expired idle, and
   * which is then shut down, terminated with no worker left to exit, and nothing took the resume
   * of the terminated pool off the timer (and it would reboot with holding still off). Failed 3/3
   * (r5) when only a worker exiting after shutdown took it back; now the last worker to leave does,
   * shut down or not.
   */
  @Test
  void guarantee12_aPoolWhoseWorkersExpiredBeforeShutdownLeavesNoHoldOffOnTheTimer()
      throws Exception {
    BoundedPool pool = (BoundedPool) WorkerPool.builder().name(PoolFixture.uniqueName("r5held"))
        .capacity(4).maxIdle(Duration.ofMillis(5)).build();
    try {
      // Turn holding off three times (each hold-off twice as long): the last lasts 400 ms, long
      // enough for every worker to expire and exit before holding resumes.
      for (int i = 1; i <= 3; i++) {
        assertTrue(PoolFixture.waitUntil(Duration.ofSeconds(10),
            () -> !pool.engine.isHoldingOff()), "holding resumed");
        int before = pool.engine.holdOffs();
        while (pool.engine.holdOffs() == before) {
          CountDownLatch ran = new CountDownLatch(1);
          pool.submit(() -> {
            pool.enqueue(ran::countDown);
            ran.await(); // a wait no hook sees: the watch frees it and turns holding off
            return null;
          }).get(10, TimeUnit.SECONDS);
        }
      }
      assertTrue(pool.engine.isHoldingOff() && pool.engine.onTimer(), "the resume is pending");
      // every worker expires idle while the pool runs: no worker is left to exit at shutdown
      assertTrue(PoolFixture.waitUntil(Duration.ofSeconds(10), () -> pool.stats().workers() == 0),
          "workers expired");
      // and their threads have exited (a retired worker's slot is free before its thread runs
      // its exit, which would otherwise find the pool shut down and clean up)
      assertTrue(PoolFixture.waitUntil(Duration.ofSeconds(10),
          () -> PoolFixture.liveThreadsOf(pool.name()).isEmpty()), "worker threads exited");
      // the last worker to leave took the resume back (it was due 400 ms after the last hold-off)
      assertFalse(pool.engine.onTimer(), "no hold-off resume left once the last worker left");
      pool.shutdown();
      assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
      assertFalse(pool.engine.onTimer(), "nothing of a terminated pool's engine on the timer");
      assertFalse(pool.engine.isHoldingOff(), "a reboot must find holding on");
    } finally {
      pool.shutdownNow();
    }
  }
}
