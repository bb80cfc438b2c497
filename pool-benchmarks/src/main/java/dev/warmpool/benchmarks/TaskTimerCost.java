package dev.warmpool.benchmarks;

import dev.warmpool.WorkerPool;
import dev.warmpool.micrometer.WorkerPoolMetrics;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.jvm.ExecutorServiceMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The cost of {@link WorkerPoolMetrics}' task timers ({@code executor}, {@code executor.idle})
 * on the tiny-task shape (issue 31): tasks/s of one producer {@code enqueue}ing batches of 1,000
 * empty tasks on a pool of capacity 2, for three pools in one JVM, interleaved each round: bound
 * with the timers (a {@code SimpleMeterRegistry}), bound without them ({@code taskTimers=false}),
 * and not bound; and, for scale, a fixed(2) {@code ThreadPoolExecutor} wrapped by Micrometer's own
 * {@code ExecutorServiceMetrics.monitor} (its {@code TimedExecutorService} records the same two
 * timers) and bare. Prints every round and the medians' ratios (above 1: the timers cost nothing).
 *
 * <p>Usage: {@code TaskTimerCost [rounds=7] [millis=500]}; the first round is a warm-up.
 */
public final class TaskTimerCost {
  private TaskTimerCost() {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 7;
    long millis = args.length > 1 ? Long.parseLong(args[1]) : 500;
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    WorkerPool[] pools = new WorkerPool[3];
    for (int i = 0; i < pools.length; i++) {
      pools[i] = WorkerPool.builder().name("timer-cost-" + i).capacity(2)
          .maxWaiting(Integer.MAX_VALUE).build();
    }
    new WorkerPoolMetrics(pools[0], Tags.empty()).bindTo(registry);
    new WorkerPoolMetrics(pools[1], Tags.empty(), false).bindTo(registry);
    ExecutorService fixed = Executors.newFixedThreadPool(2);
    ExecutorService fixedTimed = ExecutorServiceMetrics.monitor(registry,
        Executors.newFixedThreadPool(2), "fixed-timed");
    Executor[] executors = {pools[0]::enqueue, pools[1]::enqueue, pools[2]::enqueue, fixedTimed,
        fixed};
    double[][] rates = new double[executors.length][rounds];
    try {
      for (int r = -1; r < rounds; r++) {
        for (int i = 0; i < executors.length; i++) {
          double rate = throughput(executors[i], millis);
          if (r >= 0) {
            rates[i][r] = rate;
          }
        }
        if (r >= 0) {
          System.out.printf(Locale.ROOT, "round %d: on %.2f, off %.2f, unbound %.2f,"
              + " fixed timed %.2f, fixed %.2f M/s%n", r + 1, rates[0][r] / 1e6,
              rates[1][r] / 1e6, rates[2][r] / 1e6, rates[3][r] / 1e6, rates[4][r] / 1e6);
        }
      }
    } finally {
      for (WorkerPool p : pools) {
        p.close();
      }
      fixed.shutdown();
      fixedTimed.shutdown();
    }
    double on = median(rates[0]);
    double off = median(rates[1]);
    double unbound = median(rates[2]);
    double fixedTimedRate = median(rates[3]);
    double fixedRate = median(rates[4]);
    System.out.printf(Locale.ROOT, "medians: on %.2f, off %.2f, unbound %.2f, fixed timed %.2f,"
        + " fixed %.2f M/s; on/off %.3f, on/unbound %.3f, fixed timed/fixed %.3f, on/fixed timed"
        + " %.3f; executor timer count %d; load %s%n", on / 1e6, off / 1e6, unbound / 1e6,
        fixedTimedRate / 1e6, fixedRate / 1e6, on / off, on / unbound, fixedTimedRate / fixedRate,
        on / fixedTimedRate,
        registry.get("executor").tag("name", "timer-cost-0").timer().count(),
        GoalTable.loadAvg());
  }

  private static double throughput(Executor executor, long millis) {
    Batch batch = new Batch();
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    long t0 = System.nanoTime();
    long n = 0;
    do {
      batch.submitAndAwait(executor, 1000);
      n += 1000;
    } while (System.nanoTime() < end);
    return n / ((System.nanoTime() - t0) / 1e9);
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }
}
