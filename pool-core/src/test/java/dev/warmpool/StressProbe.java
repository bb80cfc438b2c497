package dev.warmpool;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A stress test's task that records how it ended: it ran (spinning up to 100 us, so lines form),
 * expired in line, or was withdrawn by its handle (counted by a {@link RandomCanceller}). None of
 * them is a timer, so core's {@code onCancel} is a fault.
 */
class StressProbe implements CancellationAware {
  /** Admitted work: must never expire. */
  final boolean admitted;
  /** The lane it went to, or -1. */
  final int lane;
  final AtomicInteger ran = new AtomicInteger();
  final AtomicInteger expired = new AtomicInteger();
  final AtomicInteger withdrawn = new AtomicInteger();

  StressProbe(boolean admitted, int lane) {
    this.admitted = admitted;
    this.lane = lane;
  }

  @Override
  public void run() {
    ran.incrementAndGet();
    PoolFixture.spinFor(ThreadLocalRandom.current().nextInt(100_000));
  }

  @Override
  public void onCancel() {
    throw new AssertionError("onCancel for an unscheduled task");
  }

  @Override
  public void onExpired(PoolOverloadedException cause) {
    expired.incrementAndGet();
  }
}
