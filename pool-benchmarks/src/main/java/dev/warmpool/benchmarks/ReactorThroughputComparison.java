package dev.warmpool.benchmarks;

import dev.warmpool.WorkerPool;
import dev.warmpool.reactor.PoolSchedulers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Side-by-side throughput of {@code Mono.fromCallable(..).subscribeOn(s)} merged with
 * {@code flatMap(.., 64)}, 200,000 items, for this scheduler, {@code Schedulers.boundedElastic()} and
 * {@code Schedulers.fromExecutorService(Executors.newFixedThreadPool(N))} in one JVM. The pool's
 * capacity and the fixed pool's size are N (first argument; default 10 x availableProcessors, which
 * is also {@code boundedElastic()}'s default thread cap, the one it always uses here). After a
 * warm-up the rounds are interleaved (A, B, C, A, B, C, ...) so that drift in the machine's load hits
 * all three alike; the report gives the median items/s and the ratios.
 *
 * <p>A plain main class in pool-benchmarks (it was a test-folder main of the adapter). Run from the
 * repository root:
 * <pre>
 * ./mvnw -q -B -pl pool-benchmarks -am install -DskipTests
 * ./mvnw -q -B -pl pool-benchmarks dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * java -cp pool-benchmarks/target/classes:$(cat pool-benchmarks/target/cp.txt) \
 *     dev.warmpool.benchmarks.ReactorThroughputComparison [N]
 * </pre>
 */
public final class ReactorThroughputComparison {
  private static final int ITEMS = 200_000;
  private static final int CONCURRENCY = 64;
  private static final int WARMUP_ROUNDS = 3;
  private static final int ROUNDS = 5;

  public static void main(String[] args) {
    int n = args.length > 0 ? Integer.parseInt(args[0])
        : 10 * Runtime.getRuntime().availableProcessors();
    WorkerPool pool = WorkerPool.builder().name("bench").capacity(n)
        .maxIdle(Duration.ofSeconds(60)).build();
    ExecutorService fixed = Executors.newFixedThreadPool(n);
    Map<String, Scheduler> schedulers = new LinkedHashMap<>();
    schedulers.put("warmpool", PoolSchedulers.from(pool));
    schedulers.put("boundedElastic", Schedulers.boundedElastic());
    schedulers.put("fromExecutorService(fixed)", Schedulers.fromExecutorService(fixed));

    System.out.printf(Locale.ROOT, "java %s, %d cpus, N = %d threads, %,d items, flatMap(.., %d)%n",
        System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(), n, ITEMS,
        CONCURRENCY);
    report("Mono.fromCallable(..).subscribeOn(s)  [direct schedule]", schedulers,
        s -> Mono.fromCallable(() -> 1).subscribeOn(s));
    report("Mono.fromCallable(..).hide().subscribeOn(s)  [one worker per item]", schedulers,
        s -> Mono.fromCallable(() -> 1).hide().subscribeOn(s));

    schedulers.values().forEach(Scheduler::dispose);
    pool.close();
    fixed.shutdownNow();
  }

  private static void report(String shape, Map<String, Scheduler> schedulers,
      Function<Scheduler, Mono<Integer>> item) {
    for (int i = 0; i < WARMUP_ROUNDS; i++) {
      schedulers.values().forEach(s -> run(s, item));
    }
    Map<String, List<Double>> rates = new LinkedHashMap<>();
    schedulers.keySet().forEach(name -> rates.put(name, new ArrayList<>()));
    for (int i = 0; i < ROUNDS; i++) {
      schedulers.forEach((name, s) -> rates.get(name).add(run(s, item)));
    }
    double ours = median(rates.get("warmpool"));
    System.out.println();
    System.out.println(shape);
    rates.forEach((name, r) -> System.out.printf(Locale.ROOT,
        "  %-28s median %,11.0f items/s   warmpool/this %5.2fx   rounds %s%n", name, median(r),
        ours / median(r), format(r)));
  }

  /** One round; returns items per second. */
  private static double run(Scheduler s, Function<Scheduler, Mono<Integer>> item) {
    long start = System.nanoTime();
    Long count = Flux.range(0, ITEMS)
        .flatMap(i -> item.apply(s), CONCURRENCY)
        .count()
        .block(Duration.ofMinutes(5));
    long nanos = System.nanoTime() - start;
    if (count == null || count != ITEMS) {
      throw new IllegalStateException("lost items: " + count);
    }
    return ITEMS * 1e9 / nanos;
  }

  private static double median(List<Double> values) {
    double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  private static String format(List<Double> values) {
    return Arrays.toString(values.stream().mapToLong(Math::round).toArray());
  }

  private ReactorThroughputComparison() {}
}
