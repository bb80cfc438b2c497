package dev.warmpool.benchmarks;

import dev.warmpool.WorkerPool;
import dev.warmpool.rxjava3.PoolSchedulers;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.schedulers.Schedulers;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Items per second of {@code Flowable.range(0, 200k).flatMap(i -> Flowable.fromCallable(..)
 * .subscribeOn(s), 64)} for {@link PoolSchedulers#from} against {@code Schedulers.io()} and {@code
 * Schedulers.from(Executors.newFixedThreadPool(N))}, side by side in one JVM: a warmup, then five
 * rounds in which the candidates take turns in a rotating order; medians and ratios at the end.
 *
 * <p>A plain main class in pool-benchmarks (it was a test-folder main of the adapter). Run from the
 * repository root:
 * <pre>
 * ./mvnw -q -B -pl pool-benchmarks -am install -DskipTests
 * ./mvnw -q -B -pl pool-benchmarks dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * java -cp pool-benchmarks/target/classes:$(cat pool-benchmarks/target/cp.txt) \
 *     dev.warmpool.benchmarks.RxJavaThroughputComparison [N]
 * </pre>
 * N (default 8) is both the fixed pool's size and the warmpool's capacity; the warmpool is in
 * blocking mode, so the 64 concurrent inner subscriptions beyond N wait in its line.
 */
public final class RxJavaThroughputComparison {
  private static final int ITEMS = 200_000;
  private static final int CONCURRENCY = 64;
  private static final int WARMUP = 3;
  private static final int ROUNDS = 5;

  private RxJavaThroughputComparison() {}

  /** Runs the comparison; {@code args[0]}, if given, is N. */
  public static void main(String[] args) {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 8;
    WorkerPool pool = WorkerPool.builder().name("bench").capacity(n).build();
    ExecutorService fixed = Executors.newFixedThreadPool(n);
    Map<String, Scheduler> candidates = new LinkedHashMap<>();
    candidates.put("PoolSchedulers.from(warmpool " + n + ")", PoolSchedulers.from(pool));
    candidates.put("Schedulers.io()", Schedulers.io());
    candidates.put("Schedulers.from(fixed " + n + ")", Schedulers.from(fixed));
    List<String> names = new ArrayList<>(candidates.keySet());

    System.out.printf("%d items, flatMap concurrency %d, N = %d, %d CPUs, %s%n", ITEMS, CONCURRENCY,
        n, Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
    for (int w = 0; w < WARMUP; w++) {
      for (String name : names) {
        run(candidates.get(name));
      }
    }
    Map<String, double[]> results = new LinkedHashMap<>();
    names.forEach(name -> results.put(name, new double[ROUNDS]));
    for (int r = 0; r < ROUNDS; r++) {
      for (int k = 0; k < names.size(); k++) {
        String name = names.get((r + k) % names.size());
        results.get(name)[r] = run(candidates.get(name));
      }
    }

    double io = median(results.get(names.get(1)));
    double fromFixed = median(results.get(names.get(2)));
    System.out.printf("%-36s %12s %10s %14s   rounds (M items/s)%n", "scheduler", "median/s",
        "vs io()", "vs from(fixed)");
    for (String name : names) {
      double[] rounds = results.get(name);
      double m = median(rounds);
      StringBuilder all = new StringBuilder();
      for (double v : rounds) {
        all.append(String.format(" %.3f", v / 1e6));
      }
      System.out.printf("%-36s %12.0f %9.2fx %13.2fx  %s%n", name, m, m / io, m / fromFixed, all);
    }
    System.out.println("warmpool " + pool.stats());

    pool.close();
    fixed.shutdown();
    Schedulers.shutdown();
  }

  private static double run(Scheduler s) {
    long start = System.nanoTime();
    long count = Flowable.range(0, ITEMS)
        .flatMap(i -> Flowable.fromCallable(() -> i).subscribeOn(s), CONCURRENCY)
        .count()
        .blockingGet();
    long nanos = System.nanoTime() - start;
    if (count != ITEMS) {
      throw new AssertionError("lost items: " + count);
    }
    return ITEMS / (nanos / (double) TimeUnit.SECONDS.toNanos(1));
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }
}
