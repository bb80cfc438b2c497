package dev.warmpool.reactor;

import dev.warmpool.WorkerPool;
import java.time.Duration;

/**
 * Issue 34: every line-deadline test of {@link LineDeadlineTest} again on a pool with
 * {@code controlledDelay(5 ms, 50 ms)} instead: an entry that controlled delay sheds reaches a
 * Reactor subscriber exactly as a line deadline's does (one onError, nothing runs late), and timers
 * never expire.
 */
class ControlledDelayLineTest extends LineDeadlineTest {
  @Override
  WorkerPool.Builder line(WorkerPool.Builder b) {
    return b.controlledDelay(Duration.ofMillis(5), Duration.ofMillis(50));
  }
}
