package dev.warmpool.reactor;

import dev.warmpool.WorkerPool;
import java.time.Duration;

/**
 * Issue 34: every test of {@link LaneDeadlineTest} again on a pool with
 * {@code controlledDelay(5 ms, 50 ms)}: a lane waiting for its first seat is shed as by a line
 * deadline, and an admitted lane never expires.
 */
class ControlledDelayLaneTest extends LaneDeadlineTest {
  @Override
  WorkerPool.Builder line(WorkerPool.Builder b) {
    return b.controlledDelay(Duration.ofMillis(5), Duration.ofMillis(50));
  }
}
