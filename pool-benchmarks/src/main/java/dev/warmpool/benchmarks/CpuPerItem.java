package dev.warmpool.benchmarks;

import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Single;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Where an adapter shape's time goes (issue 22): for warmpool and the fixed pool, interleaved, one
 * line per run with items per second, process CPU per item, CPUs busy (CPU time / wall time) and
 * context switches per item (voluntary and involuntary, summed over the process's threads from
 * {@code /proc/self/task}). Throughput alone cannot tell "too few CPUs busy" (a wake-up problem) from
 * "too much CPU per item" (a cost problem); these columns can.
 *
 * <p>Shapes ({@code shape=}): {@code reactor} (GoalTable shape 3), {@code rx} (shape 4, direct
 * tasks), {@code rxw} (shape 9, a Worker per item); 200k items, flatMap concurrency 64, capacity 20.
 * {@code tiny2} and {@code tiny64} (issue 33: GoalTable shapes 1 and 2 through {@code enqueue}): 2M
 * empty tasks from one producer in batches of 1,000 ({@link Batch}), capacity 2 or 64, against a
 * fixed pool of that size.
 * Options: {@code runs=5} pairs. Run from the repository root after building (see {@link GoalTable}):
 * <pre>
 * java -cp pool-benchmarks/target/classes:$(cat pool-benchmarks/target/cp.txt) \
 *     dev.warmpool.benchmarks.CpuPerItem shape=reactor
 * </pre>
 */
public final class CpuPerItem {
  private static final int ITEMS = 200_000;
  private static final int TINY_TASKS = 2_000_000;
  private static final int CAPACITY = 20;
  private static final int CONCURRENCY = 64;

  private CpuPerItem() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> o = Harness.options(args, 0);
    String shape = o.getOrDefault("shape", "reactor");
    int runs = Harness.intOption(o, "runs", 5);
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    int capacity = shape.equals("tiny2") ? 2 : shape.equals("tiny64") ? 64 : CAPACITY;
    int items = capacity == CAPACITY ? ITEMS : TINY_TASKS;
    WorkerPool pool = WorkerPool.builder().name("cpi-wp").capacity(capacity).build();
    ExecutorService fixed = Executors.newFixedThreadPool(capacity, Peers.named("cpi-fixed"));
    System.out.println("shape " + shape + ", " + items + " items, loadavg " + loadAvg());
    try {
      for (int r = 0; r < runs * 2; r++) {
        boolean wp = r % 2 == 0;
        Runnable run = shape(shape, wp, pool, fixed);
        long cpu0 = os.getProcessCpuTime();
        long switches0 = contextSwitches();
        long t0 = System.nanoTime();
        run.run();
        long wall = System.nanoTime() - t0;
        long cpu = os.getProcessCpuTime() - cpu0;
        long switches = contextSwitches() - switches0;
        System.out.printf(Locale.ROOT,
            "%-8s %6.2f M items/s  cpu/item %5.0f ns  cpus %4.2f  switches/item %6.3f%n",
            wp ? "warmpool" : "fixed", items / (wall / 1e9) / 1e6, (double) cpu / items,
            (double) cpu / wall, (double) switches / items);
      }
    } finally {
      Peers.close(pool);
      Peers.close(fixed);
    }
  }

  private static Runnable tiny(java.util.concurrent.Executor executor) {
    return () -> {
      Batch batch = new Batch();
      for (int n = 0; n < TINY_TASKS; n += GoalTable.BATCH) {
        batch.submitAndAwait(executor, GoalTable.BATCH);
      }
    };
  }

  private static Runnable shape(String shape, boolean wp, WorkerPool pool, ExecutorService fixed) {
    switch (shape) {
      case "reactor": {
        reactor.core.scheduler.Scheduler s = wp ? dev.warmpool.reactor.PoolSchedulers.from(pool)
            : reactor.core.scheduler.Schedulers.fromExecutorService(fixed);
        return () -> Flux.range(0, ITEMS)
            .flatMap(n -> Mono.fromCallable(() -> n).subscribeOn(s), CONCURRENCY).blockLast();
      }
      case "rx": {
        io.reactivex.rxjava3.core.Scheduler s = rx(wp, pool, fixed);
        return () -> Flowable.range(0, ITEMS)
            .flatMapSingle(n -> Single.fromCallable(() -> n).subscribeOn(s), false, CONCURRENCY)
            .blockingLast();
      }
      case "rxw": {
        io.reactivex.rxjava3.core.Scheduler s = rx(wp, pool, fixed);
        return () -> Flowable.range(0, ITEMS)
            .flatMap(n -> Flowable.fromCallable(() -> n).subscribeOn(s), CONCURRENCY)
            .blockingLast();
      }
      case "tiny2":
      case "tiny64":
        return tiny(wp ? pool::enqueue : fixed);
      default:
        throw new IllegalArgumentException(
            "shape must be reactor, rx, rxw, tiny2 or tiny64, was " + shape);
    }
  }

  private static io.reactivex.rxjava3.core.Scheduler rx(boolean wp, WorkerPool pool,
      ExecutorService fixed) {
    return wp ? dev.warmpool.rxjava3.PoolSchedulers.from(pool)
        : io.reactivex.rxjava3.schedulers.Schedulers.from(fixed);
  }

  /** Context switches of every live thread of this process, voluntary and involuntary. */
  private static long contextSwitches() throws IOException {
    long n = 0;
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
      for (Path t : tasks) {
        try {
          for (String line : Files.readAllLines(t.resolve("status"))) {
            if (line.contains("ctxt_switches")) {
              n += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            }
          }
        } catch (IOException threadEnded) {
          // the thread exited while we read: its switches are gone with it
        }
      }
    }
    return n;
  }

  private static String loadAvg() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (IOException e) {
      return "?";
    }
  }
}
