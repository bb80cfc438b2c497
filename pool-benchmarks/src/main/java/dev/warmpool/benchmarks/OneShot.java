package dev.warmpool.benchmarks;

import org.HdrHistogram.Histogram;

/**
 * A task for closed-loop measurements with one task outstanding: the producer stamps the submit time,
 * submits, and spins until the task has run. The task records its submit-to-run latency itself.
 */
final class OneShot implements Runnable {
  private final Histogram latencies;
  private volatile long submittedAt;
  private volatile boolean done;

  /** @param latencies where the task records submit-to-run nanoseconds, or null to record nothing */
  OneShot(Histogram latencies) {
    this.latencies = latencies;
  }

  /** Call right before submitting. */
  void arm() {
    done = false;
    submittedAt = System.nanoTime();
  }

  @Override
  public void run() {
    if (latencies != null) {
      latencies.recordValue(System.nanoTime() - submittedAt);
    }
    done = true;
  }

  /** Spins (yielding after a while, for slow peers on a busy machine) until the task has run. */
  void await() {
    for (int spins = 0; !done; spins++) {
      if (spins < 20_000) {
        Thread.onSpinWait();
      } else {
        Thread.yield();
      }
    }
  }
}
