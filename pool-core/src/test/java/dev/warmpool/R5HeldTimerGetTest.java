package dev.warmpool;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * r5 (adversarial review of version 4), held tasks: a task that waits in {@code Future.get} for
 * work it queued on its own pool publishes what its worker holds first (Engine, "Held tasks";
 * {@code PublishingFuture.get}). The future of {@code schedule} is a {@code DelayedTask}, whose
 * {@code get} has no such hook: a due timer that the task's worker holds waits for the hold watch
 * (1 ms), and the watch, finding the holder waiting, turns holding off for the whole pool.
 */
@Timeout(60)
class R5HeldTimerGetTest {

  @Test
  void heldTasks_aTaskWaitingForItsOwnDueTimerPublishesItFirstAsForSubmit() throws Exception {
    BoundedPool pool = (BoundedPool) WorkerPool.builder()
        .name(PoolFixture.uniqueName("r5timerget")).capacity(4).build();
    try {
      // A task descheduled for the watch period between its schedule and its get also meets the
      // watch, hook or not: so a few tries, each with holding on; one clean try is enough.
      for (int attempt = 0; attempt < 3; attempt++) {
        assertTrue(PoolFixture.waitUntil(Duration.ofSeconds(15),
            () -> !pool.engine.isHoldingOff()), "holding on");
        int before = pool.engine.watchFoundHeld();
        pool.submit(() -> pool.schedule(() -> 1, 0, TimeUnit.MILLISECONDS)
            .get(10, TimeUnit.SECONDS)).get(10, TimeUnit.SECONDS);
        if (pool.engine.watchFoundHeld() == before) {
          return;
        }
      }
      fail("each time, only the hold watch freed the due timer its holder waited for in get();"
          + " hold-offs " + pool.engine.holdOffs());
    } finally {
      pool.shutdownNow();
    }
  }
}
