package dev.warmpool.benchmarks;

import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * Scenario 1: hand-off latency, closed loop with one task outstanding. The producer waits a gap
 * (0 and 20 us by spinning, 1 ms by sleeping, so that the worker has parked), stamps the time and
 * submits; the task records submit-to-run nanoseconds in an HdrHistogram. Each gap is warmed up, then
 * measured {@code reps} times; the figures are the medians over the repetitions of p50, p99 and p99.9.
 *
 * <p>Usage: {@code HandOffLatency <peer> [samples=20000] [reps=3]} (samples at gap 0; fewer at
 * longer gaps, see {@link #samplesAt}).
 */
public final class HandOffLatency {
  static final String TABLE = "latency";
  static final long[] GAPS_NANOS = {0, TimeUnit.MICROSECONDS.toNanos(20), TimeUnit.MILLISECONDS.toNanos(1)};
  static final String[] GAP_NAMES = {"0", "20us", "1ms"};

  private HandOffLatency() {}

  public static void main(String[] args) {
    String peer = args[0];
    Map<String, String> o = Harness.options(args, 1);
    int samples = Harness.intOption(o, "samples", 20_000);
    int reps = Harness.intOption(o, "reps", 3);
    ExecutorService executor = Peers.blocking(peer, 2, "lat");
    Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
    OneShot task = new OneShot(h);
    try {
      for (int g = 0; g < GAPS_NANOS.length; g++) {
        int n = samplesAt(samples, GAPS_NANOS[g]);
        run(executor, task, GAPS_NANOS[g], n); // warm-up
        double[] p50 = new double[reps];
        double[] p99 = new double[reps];
        double[] p999 = new double[reps];
        for (int r = 0; r < reps; r++) {
          h.reset();
          run(executor, task, GAPS_NANOS[g], n);
          p50[r] = h.getValueAtPercentile(50) / 1000.0;
          p99[r] = h.getValueAtPercentile(99) / 1000.0;
          p999[r] = h.getValueAtPercentile(99.9) / 1000.0;
        }
        String table = TABLE + " gap " + GAP_NAMES[g];
        Harness.result(table, "p50 us", peer, Harness.median(p50));
        Harness.result(table, "p99 us", peer, Harness.median(p99));
        Harness.result(table, "p99.9 us", peer, Harness.median(p999));
      }
    } finally {
      Peers.close(executor);
    }
  }

  /** Fewer samples at longer gaps: a quarter at 20 us, a twentieth at 1 ms, at least 1000. */
  static int samplesAt(int samplesAtZero, long gapNanos) {
    if (gapNanos == 0) {
      return samplesAtZero;
    }
    long n = Math.max(samplesAtZero / 20, samplesAtZero * 5_000L / gapNanos);
    return (int) Math.max(1000, Math.min(samplesAtZero, n));
  }

  private static void run(ExecutorService executor, OneShot task, long gapNanos, int n) {
    for (int i = 0; i < n; i++) {
      if (gapNanos >= TimeUnit.MILLISECONDS.toNanos(1)) {
        LockSupport.parkNanos(gapNanos);
      } else if (gapNanos > 0) {
        Harness.spinNanos(gapNanos);
      }
      task.arm();
      executor.execute(task);
      task.await();
    }
  }
}
