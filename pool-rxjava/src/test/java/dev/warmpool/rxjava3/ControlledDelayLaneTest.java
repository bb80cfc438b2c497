package dev.warmpool.rxjava3;

import dev.warmpool.WorkerPool;
import java.time.Duration;

/**
 * Issue 34: every test of {@link LaneDeadlineTest} again on a pool with
 * {@code controlledDelay(5 ms, 50 ms)}: a worker waiting for its first seat is shed as by a line
 * deadline (one onError, nothing runs late), and an admitted worker never expires.
 */
class ControlledDelayLaneTest extends LaneDeadlineTest {
  @Override
  WorkerPool.Builder line(WorkerPool.Builder b) {
    return b.controlledDelay(Duration.ofMillis(5), Duration.ofMillis(50));
  }
}
