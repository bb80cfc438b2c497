package dev.warmpool.benchmarks;

import dev.warmpool.WorkerPool;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Scenario 4, the ants burst: one submitter hands {@code tasks} tasks that each sleep 10 ms to a pool
 * of {@code capacity} workers (the cached pool has no bound). Figures: wall time from the first
 * submission to the last completion, tasks per second, peak live threads (the JVM's own peak, reset
 * at the start), threads started, and peak RSS ({@code VmHWM}; the JVM alone is in {@code rss
 * before}). Run once per fresh JVM.
 *
 * <p>Usage: {@code AntsBurst <peer> [tasks=100000] [capacity=10000] [sleepMs=10] [via=execute|enqueue]}.
 * {@code via=enqueue} (warmpool peers only) submits with {@code WorkerPool.enqueue}, which never blocks
 * the producer: the tasks beyond the capacity wait in the line without a thread. It separates the
 * cost of a blocked producer's hand-off from the cost of running the tasks.
 */
public final class AntsBurst {
  static final String TABLE = "burst";

  private AntsBurst() {}

  public static void main(String[] args) throws InterruptedException {
    String peer = args[0];
    Map<String, String> o = Harness.options(args, 1);
    int tasks = Harness.intOption(o, "tasks", 100_000);
    int capacity = Harness.intOption(o, "capacity", 10_000);
    long sleepMs = Harness.intOption(o, "sleepMs", 10);
    boolean viaEnqueue = "enqueue".equals(o.getOrDefault("via", "execute"));

    AtomicLong remaining = new AtomicLong(tasks);
    CountDownLatch done = new CountDownLatch(1);
    Runnable task = () -> {
      try {
        Thread.sleep(sleepMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (remaining.decrementAndGet() == 0) {
        done.countDown();
      }
    };

    ExecutorService executor = Peers.blocking(peer, capacity, "ants");
    long rssBefore = Harness.statusKb("VmRSS");
    long startedBefore = Harness.THREADS.getTotalStartedThreadCount();
    Harness.THREADS.resetPeakThreadCount();
    long start = System.nanoTime();
    String failure = null;
    try {
      if (viaEnqueue) {
        WorkerPool pool = (WorkerPool) executor;
        for (int i = 0; i < tasks; i++) {
          pool.enqueue(task);
        }
      } else {
        for (int i = 0; i < tasks; i++) {
          executor.execute(task);
        }
      }
      done.await();
    } catch (OutOfMemoryError | RuntimeException e) {
      failure = e.toString();
    }
    long wallNanos = System.nanoTime() - start;
    if (failure != null) {
      System.out.println("burst failed for " + peer + ": " + failure);
      Harness.result(TABLE, "failed", peer, 1);
      System.exit(0);
    }
    Harness.result(TABLE, "wall s", peer, wallNanos / 1e9);
    Harness.result(TABLE, "tasks/s", peer, tasks / (wallNanos / 1e9));
    Harness.result(TABLE, "peak threads", peer, Harness.THREADS.getPeakThreadCount());
    Harness.result(TABLE, "threads started", peer,
        Harness.THREADS.getTotalStartedThreadCount() - startedBefore);
    Harness.result(TABLE, "peak RSS MiB", peer, Harness.statusKb("VmHWM") / 1024.0);
    Harness.result(TABLE, "RSS before MiB", peer, rssBefore / 1024.0);
    executor.shutdownNow();
    executor.awaitTermination(30, TimeUnit.SECONDS);
  }
}
