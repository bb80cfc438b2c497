package dev.warmpool.benchmarks;

import dev.warmpool.PoolStats;
import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Single;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The goal tables of issues 10 ("Performance goals") and 22 ("Speed") measured in one JVM: every shape except the
 * Kotlin round trips (see {@code CoroutineRoundTripComparison.kt} and {@code CoroutineShapes.kt}). Peers are interleaved
 * round by round (round r: for each shape, warmpool, then each peer); the first {@code warmup}
 * rounds are discarded and the table gives the median of the other {@code rounds}. Uses only
 * warmpool's public API (the builder, {@code execute}, {@code stats()} and the adapters'
 * {@code PoolSchedulers}).
 *
 * <ol>
 *   <li>tiny tasks (empty Runnable), 1 producer, capacity 2: vs {@code TPE fixed 2 + LinkedBlockingQueue},
 *       {@code ForkJoinPool(2)}, {@code TPE(0,2,60s,SynchronousQueue)} whose rejection handler does
 *       a blocking {@code put}. The producer submits batches of 1000 and waits for each batch to
 *       complete ({@link Batch}) for {@code 500 ms x scale}; tasks completed per second. warmpool
 *       is measured twice: with {@code execute} (blocking mode: past the 2 seats the producer waits
 *       in line, the goal against the handoff pool) and with {@code enqueue} (the producer never
 *       waits: past the seats, tasks wait in line; the goals against the fixed pool and
 *       ForkJoinPool, as in issue 22).</li>
 *   <li>the same at capacity 64, with 1 and with 2 producers: vs fixed(64) + LinkedBlockingQueue,
 *       through {@code enqueue} (issue 33's goal: like the fixed pool's queue, the producer never
 *       waits) and, reported without a goal, through {@code execute} (blocking mode: past 64
 *       seats the producer waits in line).</li>
 *   <li>Reactor: {@code 200k x scale} {@code Mono.fromCallable(..).subscribeOn(s)} merged by
 *       {@code Flux.range(..).flatMap(.., 64)}, capacity 20: vs {@code fromExecutorService(fixed 20)}
 *       and {@code newBoundedElastic(20, Integer.MAX_VALUE, "be")}; items per second.</li>
 *   <li>RxJava, direct tasks: the same with {@code Single} and {@code flatMapSingle(.., false, 64)}
 *       ({@code Single.subscribeOn} schedules a direct task): vs {@code Schedulers.from(fixed 20)}
 *       and {@code Schedulers.io()}.</li>
 *   <li>latency, one task outstanding, capacity 2, submit-to-run time: gap 0 p50
 *       ({@code 20000 x scale} samples, or as many as fit in {@code 1 s x scale}, at least 1000) and
 *       gap 1 ms (the producer sleeps, so workers park) p99 ({@code 1500 x scale} samples): vs jboss
 *       {@code EnhancedQueueExecutor}, fixed(2), cached TPE; also against the best of them.</li>
 *   <li>threads: a stream of {@code 1M x scale} tiny tasks submitted back to back by 1 producer
 *       (cut short after {@code 3 s x scale}; the count is reported), then awaited, on a fresh pool
 *       of capacity 64 each round: {@code stats().workersStarted()}, the peak of
 *       {@code stats().workers()} and of {@code stats().busy()} sampled every 1 ms by a side thread;
 *       vs a fresh fixed(64)'s largest pool size, peak pool size and peak active count.</li>
 *   <li>Kotlin: {@code 200k x scale} round trips {@code withContext(d) {}} from 64 coroutines of ONE
 *       {@code runBlocking} event loop (issue 33's event-loop row), capacity 20: vs {@code newFixedThreadPool(20).asCoroutineDispatcher()}
 *       and {@code Dispatchers.IO.limitedParallelism(20)}; round trips per second.</li>
 *   <li>a subpool's cost (issue 14): tiny tasks, 1 producer, through a plain pool of capacity 64
 *       and through a subpool of capacity 64 of another such pool; the ratio reads plain/subpool.</li>
 *   <li>RxJava, a Worker per item (issue 22): {@code 200k x scale}
 *       {@code Flowable.fromCallable(..).subscribeOn(s)} merged by
 *       {@code Flowable.range(..).flatMap(.., 64)}, capacity 20 ({@code Flowable.subscribeOn}
 *       makes a {@code Worker} per inner source and schedules its subscription there): vs
 *       {@code Schedulers.from(fixed 20)} and {@code Schedulers.io()}; items per second.</li>
 *   <li>burst start latency of blocking tasks (issue 22), capacity 64, on an idle and warm pool:
 *       all 64 workers started once when the pool is built (64 tasks that each wait until all 64
 *       run), and parked before every burst (a 5 ms pause after the previous burst ended). A burst
 *       is 64 tasks submitted back to back by 1 producer ({@code execute}), each sleeping 5 ms;
 *       a task's start latency is submit to start ({@code System.nanoTime}). {@code 100 x scale}
 *       bursts per round (at least 10; with 100 the p99 is the second worst burst, not the worst):
 *       the p99 and p50 over bursts of the 64th (last submitted) task's start latency, and the p99
 *       over all tasks: vs fixed(64) + LinkedBlockingQueue. Warm rather than fresh because a warm
 *       pool tests the wake-up policy: every task should wake a parked worker at once, not wait
 *       for a running one or a stall watch. The 5 ms sleep and pause do not scale.</li>
 *   <li>nested join (issue 33): a task joins a subtask it put on its own pool, outside the library,
 *       one call per 2 ms, capacity 2: p50 and p99 vs fixed(2) + LinkedBlockingQueue.</li>
 *   <li>Kotlin from {@code Dispatchers.Default} (issue 33): {@code 200k x scale} coroutines launched
 *       on {@code Dispatchers.Default}, at most 64 in flight, each one {@code withContext(d) {}},
 *       capacity 20: vs {@code newFixedThreadPool(20).asCoroutineDispatcher()}; coroutines per
 *       second.</li>
 *   <li>a service (issue 33): Poisson arrivals at 2,000 requests/s for {@code 2 s x scale} per
 *       executor and round (the same seeded schedule for each), each request
 *       {@code Mono.fromCallable(..).subscribeOn(s)} whose callable blocks for 1 ms
 *       ({@code parkNanos}), capacity 20: p50 and p99 of the time from the request's intended
 *       arrival (so a late driver counts against the executor, not for it) to its value reaching
 *       the subscriber: vs {@code fromExecutorService(fixed 20)} and
 *       {@code newBoundedElastic(20)}.</li>
 *   <li>memory as work grows (issue 33; {@link MemoryPerUnit}'s units, heap after GC per unit): an
 *       idle Reactor {@code Worker} with a pending timer vs {@code newBoundedElastic(64)}, the same
 *       for RxJava vs {@code Schedulers.from(fixed 20)} (reported), and a task waiting in line vs a
 *       fixed(1) + {@code LinkedBlockingQueue} node (goal: at most 1.5x its bytes). Run with
 *       {@code -Xmx2g}.</li>
 * </ol>
 *
 * <p>Every ratio is oriented so that above 1 means warmpool is better: throughput is
 * warmpool / peer, latency and thread counts are peer / warmpool. The goal column states the issue's
 * goal in those terms (for example "p99 <= 1.2x best peer" becomes ratio {@code >= 0.83}). Also
 * printed: the JDK, {@code nproc}, {@code /proc/loadavg} at start and end, and every round's values.
 * Progress (with seconds per shape) goes to stderr, the report to stdout. At the defaults a round
 * takes about 45 s on 2 cores (throughput shapes are time-bounded, the Reactor and RxJava shapes are
 * not; shape 10 is about 2.5 s, shape 13 about 7 s), so about 4.5 minutes in all.
 *
 * <p>Options ({@code key=value}): {@code rounds=5} measured rounds, {@code warmup=1} discarded
 * rounds, {@code scale=1} multiplies every size and duration, {@code only=1,...,14}
 * shapes (numbered as above), {@code results=true} also prints each median as a {@link Harness}
 * result line (how {@code BenchmarkReport}'s section 9 reads shapes 11, 13 and 14).
 * Build once, then run from the repository root (on Temurin 25, replace {@code java} by
 * {@code /usr/lib/jvm/temurin-25-jdk-amd64/bin/java}; the classes target Java 17):
 * <pre>
 * ./mvnw -q -B -pl pool-benchmarks -am package -DskipTests dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * java -Xmx2g -cp pool-benchmarks/target/classes:$(cat pool-benchmarks/target/cp.txt) \
 *     dev.warmpool.benchmarks.GoalTable rounds=5
 * </pre>
 */
public final class GoalTable {
  static final int BATCH = 1000;
  static final int CONCURRENCY = 64;
  static final int ADAPTER_CAPACITY = 20;
  static final long GAP_1MS = TimeUnit.MILLISECONDS.toNanos(1);
  static final int NPROC = Runtime.getRuntime().availableProcessors();
  static final String RX_DIRECT =
      "RxJava Single.subscribeOn (direct tasks), flatMapSingle 64, capacity 20";
  static final String RX_WORKER =
      "RxJava Flowable.subscribeOn (a Worker per item), flatMap 64, capacity 20";
  static final String KOTLIN_DEFAULT =
      "Kotlin coroutines launched on Dispatchers.Default, 64 in flight, each withContext(d) {}, capacity 20";
  static final String TINY_2_ENQUEUE = "tiny tasks, 1 producer, capacity 2, enqueue";
  static final String SERVICE =
      "a service: Poisson 2,000 requests/s, each subscribeOn(s) then a 1 ms blocking call, capacity 20";
  static final String NESTED =
      "nested join: a task joins a subtask on its own pool, one call per 2 ms, capacity 2";
  static final String BURST = "burst of 64 blocking tasks (sleep 5 ms), idle warm pool, capacity 64";
  static final int BURST_SIZE = 64;
  static final long BURST_SLEEP_MILLIS = 5;
  static final long BURST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private final double scale;
  /** Per-round values by key "shape|metric|peer", in insertion order. */
  private final Map<String, List<Double>> samples = new LinkedHashMap<>();
  private boolean measuring;

  private GoalTable(double scale) {
    this.scale = scale;
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> o = Harness.options(args, 0);
    int rounds = Harness.intOption(o, "rounds", 5);
    int warmup = Harness.intOption(o, "warmup", 1);
    double scale = Double.parseDouble(o.getOrDefault("scale", "1"));
    Set<Integer> only = new TreeSet<>();
    for (String s : o.getOrDefault("only", "1,2,3,4,5,6,7,8,9,10,11,12,13,14").split(",")) {
      only.add(Integer.parseInt(s.trim()));
    }
    GoalTable t = new GoalTable(scale);
    String loadStart = loadAvg();
    long t0 = System.nanoTime();

    List<Shape> shapes = new ArrayList<>();
    try {
      if (only.contains(1)) shapes.add(t.new TinyCapacity2());
      if (only.contains(2)) shapes.add(t.new TinyCapacity64());
      if (only.contains(3)) shapes.add(t.new ReactorShape());
      if (only.contains(4)) shapes.add(t.new RxShape());
      if (only.contains(5)) shapes.add(t.new Latency());
      if (only.contains(6)) shapes.add(t.new Threads());
      if (only.contains(7)) shapes.add(t.new KotlinShape());
      if (only.contains(8)) shapes.add(t.new SubpoolOverhead());
      if (only.contains(9)) shapes.add(t.new RxWorkerShape());
      if (only.contains(10)) shapes.add(t.new BurstStartLatency());
      if (only.contains(11)) shapes.add(t.new NestedJoin());
      if (only.contains(12)) shapes.add(t.new KotlinDefaultShape());
      if (only.contains(13)) shapes.add(t.new Service());
      if (only.contains(14)) shapes.add(t.new Memory());
      for (int r = 0; r < warmup + rounds; r++) {
        t.measuring = r >= warmup;
        long rs = System.nanoTime();
        StringBuilder times = new StringBuilder();
        for (Shape s : shapes) {
          long ss = System.nanoTime();
          s.round();
          times.append(String.format(Locale.ROOT, " %s %.1f s;", s.getClass().getSimpleName(),
              (System.nanoTime() - ss) / 1e9));
        }
        System.err.printf(Locale.ROOT, "%s %d/%d done in %.1f s:%s%n", t.measuring ? "round" : "warm-up",
            t.measuring ? r - warmup + 1 : r + 1, t.measuring ? rounds : warmup,
            (System.nanoTime() - rs) / 1e9, times);
      }
    } finally {
      for (Shape s : shapes) {
        s.close();
      }
    }
    String loadEnd = loadAvg();
    double wall = (System.nanoTime() - t0) / 1e9;

    PrintOut out = new PrintOut();
    out.line("# warmpool goal table");
    out.line("");
    out.line(String.format(Locale.ROOT, "- JDK: %s (%s, %s), %s", System.getProperty("java.version"),
        System.getProperty("java.vm.name"), System.getProperty("java.vendor"),
        System.getProperty("java.home")));
    out.line("- nproc: " + nproc() + " (availableProcessors " + NPROC + ")");
    out.line("- loadavg at start: " + loadStart);
    out.line("- loadavg at end:   " + loadEnd);
    out.line(String.format(Locale.ROOT,
        "- %d measured rounds (median), %d warm-up, scale %s, peers interleaved; wall %.0f s", rounds,
        warmup, o.getOrDefault("scale", "1"), wall));
    out.line("- ratio: above 1 means warmpool is better (throughput warmpool/peer; latency and threads"
        + " peer/warmpool)");
    out.line("");
    t.table(out, only);
    out.line("");
    out.line("Per-round values (" + "shape | metric | executor: values):");
    out.line("");
    for (Map.Entry<String, List<Double>> e : t.samples.entrySet()) {
      StringBuilder b = new StringBuilder("- " + e.getKey().replace("|", " | ") + ":");
      for (double v : e.getValue()) {
        b.append(' ').append(fmt(v));
      }
      out.line(b.toString());
    }
    if (Boolean.parseBoolean(o.getOrDefault("results", "false"))) {
      // for BenchmarkReport's section 9: each median as a harness result, the shape as its table
      for (String key : t.samples.keySet()) {
        String[] f = key.split("\\|", 3);
        Harness.result(f[0], f[1], f[2], t.median(f[0], f[1], f[2]));
      }
    }
    System.out.flush();
  }

  // ---------------------------------------------------------------- the table

  /** Which way a metric is better. */
  enum Kind {
    THROUGHPUT, LATENCY, COUNT, /** lower is better */ BYTES, /** shown, not compared */ INFO
  }

  private void table(PrintOut out, Set<Integer> only) {
    out.line("| shape | metric | warmpool | peer | peer value | ratio | goal | met |");
    out.line("|---|---|---|---|---|---|---|---|");
    if (only.contains(1)) {
      String s = "tiny tasks, 1 producer, capacity 2";
      row(out, s, "tasks/s", Kind.THROUGHPUT, Peers.TPE_FIXED, "fixed(2)+LBQ", 1.0);
      row(out, s, "tasks/s", Kind.THROUGHPUT, Peers.FORK_JOIN, "ForkJoinPool(2)", 0.5);
      row(out, s, "tasks/s", Kind.THROUGHPUT, Peers.TPE_HANDOFF, "TPE(0,2,SynchronousQueue)+put", 2.0);
      row(out, TINY_2_ENQUEUE, "tasks/s", Kind.THROUGHPUT, Peers.TPE_FIXED, "fixed(2)+LBQ", 1.0);
      row(out, TINY_2_ENQUEUE, "tasks/s", Kind.THROUGHPUT, Peers.FORK_JOIN, "ForkJoinPool(2)", 0.5);
    }
    if (only.contains(2)) {
      for (int producers = 1; producers <= 2; producers++) {
        row(out, tiny64(producers, true), "tasks/s", Kind.THROUGHPUT, Peers.TPE_FIXED,
            "fixed(64)+LBQ", 1.0);
        row(out, tiny64(producers, false), "tasks/s", Kind.THROUGHPUT, Peers.TPE_FIXED,
            "fixed(64)+LBQ", Double.NaN);
      }
    }
    if (only.contains(3)) {
      String s = "Reactor subscribeOn, flatMap 64, capacity 20";
      row(out, s, "items/s", Kind.THROUGHPUT, "from-fixed", "fromExecutorService(fixed 20)", 1.2);
      row(out, s, "items/s", Kind.THROUGHPUT, "bounded-elastic", "newBoundedElastic(20)", 5.0);
    }
    if (only.contains(4)) {
      String s = RX_DIRECT;
      row(out, s, "items/s", Kind.THROUGHPUT, "rx-from-fixed", "Schedulers.from(fixed 20)", 1.2);
      row(out, s, "items/s", Kind.THROUGHPUT, "rx-io", "Schedulers.io()", 5.0);
    }
    if (only.contains(5)) {
      String s = "latency, one outstanding, capacity 2";
      row(out, s, "gap 0 p50 us", Kind.LATENCY, Peers.JBOSS, "jboss EnhancedQueueExecutor", 1.0);
      row(out, s, "gap 0 p50 us", Kind.LATENCY, Peers.TPE_FIXED, "fixed(2)", Double.NaN);
      row(out, s, "gap 0 p50 us", Kind.LATENCY, Peers.TPE_CACHED, "TPE cached", Double.NaN);
      String[] peers = {Peers.JBOSS, Peers.TPE_FIXED, Peers.TPE_CACHED};
      String[] labels = {"jboss EnhancedQueueExecutor", "fixed(2)", "TPE cached"};
      String best = null;
      String bestLabel = null;
      for (int i = 0; i < peers.length; i++) {
        row(out, s, "gap 1ms p99 us", Kind.LATENCY, peers[i], labels[i], Double.NaN);
        double m = median(s, "gap 1ms p99 us", peers[i]);
        if (best == null || m < median(s, "gap 1ms p99 us", best)) {
          best = peers[i];
          bestLabel = labels[i];
        }
      }
      row(out, s, "gap 1ms p99 us", Kind.LATENCY, best, "best peer: " + bestLabel, 1 / 1.2);
    }
    if (only.contains(6)) {
      String s = "threads, stream of tiny tasks, capacity 64";
      row(out, s, "threads started", Kind.COUNT, Peers.TPE_FIXED, "fixed(64)", Double.NaN);
      row(out, s, "peak live workers", Kind.COUNT, Peers.TPE_FIXED, "fixed(64)", Double.NaN);
      row(out, s, "peak busy workers", Kind.COUNT, Peers.TPE_FIXED, "fixed(64)", Double.NaN);
      row(out, s, "stream tasks/s", Kind.THROUGHPUT, Peers.TPE_FIXED, "fixed(64)", Double.NaN);
      row(out, s, "stream tasks submitted", Kind.INFO, Peers.TPE_FIXED, "fixed(64)", Double.NaN);
      out.line("| (goal) | busy or spinning workers ~ cores (" + NPROC
          + "), the others parked and expiring | | | | | report | |");
    }
    if (only.contains(7)) {
      String s = "Kotlin withContext round trips, 64 concurrent, capacity 20";
      row(out, s, "round trips/s", Kind.THROUGHPUT, "kotlin-fixed",
          "fixed(20).asCoroutineDispatcher()", 1.0);
      row(out, s, "round trips/s", Kind.THROUGHPUT, "kotlin-io-limited",
          "Dispatchers.IO.limitedParallelism(20)", 1.0);
    }
    if (only.contains(12)) {
      row(out, KOTLIN_DEFAULT, "coroutines/s", Kind.THROUGHPUT, "kotlin-fixed",
          "fixed(20).asCoroutineDispatcher()", 1.0);
    }
    if (only.contains(8)) {
      // the ratio reads plain pool / subpool: how many times slower a subpool task is
      row(out, "subpool overhead: tiny tasks, 1 producer, capacity 64", "tasks/s", Kind.THROUGHPUT,
          "warmpool-subpool", "subpool(64) of a pool(64)", Double.NaN);
    }
    if (only.contains(9)) {
      String s = RX_WORKER;
      row(out, s, "items/s", Kind.THROUGHPUT, "rx-from-fixed", "Schedulers.from(fixed 20)", 1.2);
      row(out, s, "items/s", Kind.THROUGHPUT, "rx-io", "Schedulers.io()", 5.0);
    }
    if (only.contains(10)) {
      String s = BURST;
      // the goal: the 64th task's p99 start latency within 2x of the fixed pool's
      row(out, s, "64th task p99 us", Kind.LATENCY, Peers.TPE_FIXED, "fixed(64)+LBQ", 0.5);
      row(out, s, "64th task p50 us", Kind.LATENCY, Peers.TPE_FIXED, "fixed(64)+LBQ", Double.NaN);
      row(out, s, "all tasks p99 us", Kind.LATENCY, Peers.TPE_FIXED, "fixed(64)+LBQ", Double.NaN);
      row(out, s, "workers before round", Kind.INFO, Peers.TPE_FIXED, "fixed(64)+LBQ", Double.NaN);
    }
    if (only.contains(11)) {
      // the goal (issue 33): within 1.25x of fixed(2) at p50 and p99
      row(out, NESTED, "p50 us", Kind.LATENCY, Peers.TPE_FIXED, "fixed(2)+LBQ", 0.8);
      row(out, NESTED, "p99 us", Kind.LATENCY, Peers.TPE_FIXED, "fixed(2)+LBQ", 0.8);
    }
    if (only.contains(13)) {
      // the goal (issue 33): p50 and p99 at least as low as each peer's
      for (String metric : List.of("p50 us", "p99 us")) {
        row(out, SERVICE, metric, Kind.LATENCY, "from-fixed", "fromExecutorService(fixed 20)", 1.0);
        row(out, SERVICE, metric, Kind.LATENCY, "bounded-elastic", "newBoundedElastic(20)", 1.0);
      }
    }
    if (only.contains(14)) {
      row(out, Memory.REACTOR, "bytes per unit", Kind.BYTES, "newBoundedElastic(64, MAX)",
          "newBoundedElastic(64)", 1.0);
      row(out, Memory.RX, "bytes per unit", Kind.BYTES, "Schedulers.from(fixed 20)",
          "Schedulers.from(fixed 20)", Double.NaN);
      // the goal: at most 1.5x a LinkedBlockingQueue node
      row(out, Memory.LINE, "bytes per unit", Kind.BYTES, "fixed(1) + LinkedBlockingQueue, execute",
          "fixed(1)+LBQ node", 1 / 1.5);
    }
  }

  private void row(PrintOut out, String shape, String metric, Kind kind, String peer,
      String peerLabel, double goal) {
    double w = median(shape, metric, Peers.WARMPOOL);
    double p = median(shape, metric, peer);
    double ratio = kind == Kind.THROUGHPUT ? w / p : kind == Kind.INFO ? Double.NaN : p / w;
    String goalText = Double.isNaN(goal) ? "-" : String.format(Locale.ROOT, ">= %.2f", goal);
    String met = Double.isNaN(goal) || Double.isNaN(ratio) ? "-" : ratio >= goal ? "yes" : "NO";
    out.line(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s |", shape, metric,
        value(kind, w), peerLabel, value(kind, p),
        Double.isNaN(ratio) ? "-" : String.format(Locale.ROOT, "%.2f", ratio), goalText, met));
  }

  private double median(String shape, String metric, String peer) {
    List<Double> v = samples.get(key(shape, metric, peer));
    if (v == null) {
      return Double.NaN;
    }
    double[] a = new double[v.size()];
    for (int i = 0; i < a.length; i++) {
      a[i] = v.get(i);
    }
    return Harness.median(a);
  }

  private static String value(Kind kind, double v) {
    switch (kind) {
      case THROUGHPUT:
        return v >= 1e6 ? String.format(Locale.ROOT, "%.2fM/s", v / 1e6)
            : String.format(Locale.ROOT, "%.0fk/s", v / 1e3);
      case LATENCY:
        return String.format(Locale.ROOT, "%.1f us", v);
      case BYTES:
        return String.format(Locale.ROOT, "%.0f B", v);
      default:
        return String.format(Locale.ROOT, "%.0f", v);
    }
  }

  private static String fmt(double v) {
    if (v == Math.rint(v) && Math.abs(v) < 1e6) {
      return String.valueOf((long) v);
    }
    return String.format(Locale.ROOT, "%.4g", v);
  }

  private static String key(String shape, String metric, String peer) {
    return shape + "|" + metric + "|" + peer;
  }

  private void record(String shape, String metric, String peer, double value) {
    if (measuring) {
      samples.computeIfAbsent(key(shape, metric, peer), k -> new ArrayList<>()).add(value);
    }
  }

  // ---------------------------------------------------------------- shapes

  interface Shape {
    void round() throws Exception;

    void close();
  }

  /** Shape 1. Executors live for the whole run, so every round after the warm-up finds them warm. */
  final class TinyCapacity2 implements Shape {
    final String shape = "tiny tasks, 1 producer, capacity 2";
    final String[] ids = {Peers.WARMPOOL, Peers.TPE_FIXED, Peers.FORK_JOIN, Peers.TPE_HANDOFF};
    final ExecutorService[] executors = new ExecutorService[ids.length];

    TinyCapacity2() {
      for (int i = 0; i < ids.length; i++) {
        executors[i] = Peers.blocking(ids[i], 2, "c2-" + ids[i]);
      }
    }

    /** The same pool size through {@code enqueue}, which never blocks the producer (issue 22). */
    final WorkerPool enqueuePool = WorkerPool.builder().name("c2-enqueue").capacity(2)
        .maxWaiting(Integer.MAX_VALUE).build();
    final Executor enqueue = enqueuePool::enqueue;

    @Override
    public void round() throws InterruptedException {
      for (int i = 0; i < ids.length; i++) {
        double v = tinyThroughput(executors[i], 1);
        record(shape, "tasks/s", ids[i], v);
        if (i > 0) { // the peers' same-round values, so both warmpool rows compare with them
          record(TINY_2_ENQUEUE, "tasks/s", ids[i], v);
        }
      }
      record(TINY_2_ENQUEUE, "tasks/s", Peers.WARMPOOL, tinyThroughput(enqueue, 1));
    }

    @Override
    public void close() {
      for (ExecutorService e : executors) {
        Peers.close(e);
      }
      Peers.close(enqueuePool);
    }
  }

  static String tiny64(int producers, boolean enqueue) {
    return "tiny tasks, " + producers + (producers == 1 ? " producer" : " producers")
        + ", capacity 64" + (enqueue ? ", enqueue" : ", execute");
  }

  /** Shape 2. */
  final class TinyCapacity64 implements Shape {
    final String[] ids = {Peers.WARMPOOL, Peers.TPE_FIXED};
    final ExecutorService[] executors = new ExecutorService[ids.length];
    /** The same pool size through {@code enqueue}, which never blocks the producer. */
    final WorkerPool enqueuePool = WorkerPool.builder().name("c64-enqueue").capacity(64)
        .maxWaiting(Integer.MAX_VALUE).build();
    final Executor enqueue = enqueuePool::enqueue;

    TinyCapacity64() {
      for (int i = 0; i < ids.length; i++) {
        executors[i] = Peers.blocking(ids[i], 64, "c64-" + ids[i]);
      }
    }

    @Override
    public void round() throws InterruptedException {
      for (int producers = 1; producers <= 2; producers++) {
        for (int i = 0; i < ids.length; i++) {
          double v = tinyThroughput(executors[i], producers);
          record(tiny64(producers, false), "tasks/s", ids[i], v);
          if (i > 0) { // the peer's same-round value, so both warmpool rows compare with it
            record(tiny64(producers, true), "tasks/s", ids[i], v);
          }
        }
        record(tiny64(producers, true), "tasks/s", Peers.WARMPOOL,
            tinyThroughput(enqueue, producers));
      }
    }

    @Override
    public void close() {
      for (ExecutorService e : executors) {
        Peers.close(e);
      }
      Peers.close(enqueuePool);
    }
  }

  /**
   * Shape 8 (issue 14): the cost of a subpool. The same tiny tasks through a plain pool of capacity
   * 64 and through a subpool of capacity 64 of another such pool (blocking mode, so each seated task
   * is forwarded to the parent as admitted work); the ratio is plain/subpool throughput.
   */
  final class SubpoolOverhead implements Shape {
    final String shape = "subpool overhead: tiny tasks, 1 producer, capacity 64";
    final WorkerPool plain = WorkerPool.builder().name("so-plain").capacity(64).build();
    final WorkerPool parent = WorkerPool.builder().name("so-parent").capacity(64).build();
    final WorkerPool subpool = parent.newSubpool("so-sub", 64);

    @Override
    public void round() throws InterruptedException {
      record(shape, "tasks/s", Peers.WARMPOOL, tinyThroughput(plain, 1));
      record(shape, "tasks/s", "warmpool-subpool", tinyThroughput(subpool, 1));
    }

    @Override
    public void close() {
      plain.close();
      parent.close();
    }
  }

  /**
   * Tiny-task throughput: {@code producers} threads each submit batches of {@value #BATCH} and wait
   * for each batch to complete, for {@code 500 ms x scale}; tasks completed per second, all producers
   * together.
   */
  double tinyThroughput(Executor executor, int producers) throws InterruptedException {
    long budget = (long) (TimeUnit.MILLISECONDS.toNanos(500) * scale);
    CountDownLatch ready = new CountDownLatch(producers);
    CountDownLatch go = new CountDownLatch(1);
    long[] tasks = new long[producers];
    long[] ends = new long[producers];
    long[] deadline = new long[1];
    Thread[] threads = new Thread[producers];
    for (int p = 0; p < producers; p++) {
      int me = p;
      threads[p] = new Thread(() -> {
        Batch batch = new Batch();
        ready.countDown();
        try {
          go.await();
        } catch (InterruptedException e) {
          return;
        }
        long end = deadline[0];
        long n = 0;
        do {
          batch.submitAndAwait(executor, BATCH);
          n += BATCH;
        } while (System.nanoTime() < end);
        tasks[me] = n;
        ends[me] = System.nanoTime();
      }, "producer-" + p);
      threads[p].start();
    }
    ready.await();
    long start = System.nanoTime();
    deadline[0] = start + budget; // published to the producers by go.countDown()
    go.countDown();
    long total = 0;
    long last = start;
    for (int p = 0; p < producers; p++) {
      threads[p].join();
      total += tasks[p];
      last = Math.max(last, ends[p]);
    }
    return total / ((last - start) / 1e9);
  }

  /** Shape 3. */
  /**
   * The Reactor shapes' executors: warmpool, {@code fromExecutorService(fixed 20)} and
   * {@code newBoundedElastic(20)}, named {@code prefix-...}, each capacity 20.
   */
  static class ReactorPeers {
    final WorkerPool pool;
    final ExecutorService fixed;
    final String[] ids = {Peers.WARMPOOL, "from-fixed", "bounded-elastic"};
    final Scheduler[] schedulers;

    ReactorPeers(String prefix, String elasticName) {
      pool = WorkerPool.builder().name(prefix + "-wp").capacity(ADAPTER_CAPACITY).build();
      fixed = Executors.newFixedThreadPool(ADAPTER_CAPACITY, Peers.named(prefix + "-fixed"));
      schedulers = new Scheduler[] {
          dev.warmpool.reactor.PoolSchedulers.from(pool),
          Schedulers.fromExecutorService(fixed),
          Schedulers.newBoundedElastic(ADAPTER_CAPACITY, Integer.MAX_VALUE, elasticName)};
    }

    public void close() {
      for (Scheduler s : schedulers) {
        s.dispose();
      }
      Peers.close(pool);
      Peers.close(fixed);
    }
  }

  final class ReactorShape extends ReactorPeers implements Shape {
    final String shape = "Reactor subscribeOn, flatMap 64, capacity 20";

    ReactorShape() {
      super("reactor", "be");
    }

    @Override
    public void round() {
      int items = Math.max(1000, (int) (200_000 * scale));
      for (int i = 0; i < ids.length; i++) {
        Scheduler s = schedulers[i];
        long t0 = System.nanoTime();
        Flux.range(0, items)
            .flatMap(n -> Mono.fromCallable(() -> n).subscribeOn(s), CONCURRENCY)
            .blockLast();
        record(shape, "items/s", ids[i], items / ((System.nanoTime() - t0) / 1e9));
      }
    }

  }

  /** Shape 4. */
  final class RxShape implements Shape {
    final String shape = RX_DIRECT;
    final WorkerPool pool = WorkerPool.builder().name("rx-wp").capacity(ADAPTER_CAPACITY).build();
    final ExecutorService fixed = Executors.newFixedThreadPool(ADAPTER_CAPACITY, Peers.named("rx-fixed"));
    final String[] ids = {Peers.WARMPOOL, "rx-from-fixed", "rx-io"};
    final io.reactivex.rxjava3.core.Scheduler[] schedulers = {
        dev.warmpool.rxjava3.PoolSchedulers.from(pool),
        io.reactivex.rxjava3.schedulers.Schedulers.from(fixed),
        io.reactivex.rxjava3.schedulers.Schedulers.io()};

    @Override
    public void round() {
      int items = Math.max(1000, (int) (200_000 * scale));
      for (int i = 0; i < ids.length; i++) {
        io.reactivex.rxjava3.core.Scheduler s = schedulers[i];
        long t0 = System.nanoTime();
        Flowable.range(0, items)
            .flatMapSingle(n -> Single.fromCallable(() -> n).subscribeOn(s), false, CONCURRENCY)
            .blockingLast();
        record(shape, "items/s", ids[i], items / ((System.nanoTime() - t0) / 1e9));
      }
    }

    @Override
    public void close() {
      schedulers[0].shutdown();
      schedulers[1].shutdown();
      Peers.close(pool);
      Peers.close(fixed);
    }
  }

  /** Shape 9: as shape 4, but {@code Flowable.subscribeOn}, which makes a Worker per item. */
  final class RxWorkerShape implements Shape {
    final String shape = RX_WORKER;
    final WorkerPool pool = WorkerPool.builder().name("rxw-wp").capacity(ADAPTER_CAPACITY).build();
    final ExecutorService fixed = Executors.newFixedThreadPool(ADAPTER_CAPACITY, Peers.named("rxw-fixed"));
    final String[] ids = {Peers.WARMPOOL, "rx-from-fixed", "rx-io"};
    final io.reactivex.rxjava3.core.Scheduler[] schedulers = {
        dev.warmpool.rxjava3.PoolSchedulers.from(pool),
        io.reactivex.rxjava3.schedulers.Schedulers.from(fixed),
        io.reactivex.rxjava3.schedulers.Schedulers.io()};

    @Override
    public void round() {
      int items = Math.max(1000, (int) (200_000 * scale));
      for (int i = 0; i < ids.length; i++) {
        io.reactivex.rxjava3.core.Scheduler s = schedulers[i];
        long t0 = System.nanoTime();
        Flowable.range(0, items)
            .flatMap(n -> Flowable.fromCallable(() -> n).subscribeOn(s), CONCURRENCY)
            .blockingLast();
        record(shape, "items/s", ids[i], items / ((System.nanoTime() - t0) / 1e9));
      }
    }

    @Override
    public void close() {
      schedulers[0].shutdown();
      schedulers[1].shutdown();
      Peers.close(pool);
      Peers.close(fixed);
    }
  }

  /**
   * Shape 10: bursts of {@value #BURST_SIZE} blocking tasks on an idle, warm pool of capacity 64.
   * The pools live for the whole run; all their workers are started once, when built.
   */
  final class BurstStartLatency implements Shape {
    final String shape = BURST;
    final String[] ids = {Peers.WARMPOOL, Peers.TPE_FIXED};
    final ExecutorService[] executors = new ExecutorService[ids.length];
    final long[] submittedAt = new long[BURST_SIZE];
    final long[] startedAt = new long[BURST_SIZE];
    final Runnable[] tasks = new Runnable[BURST_SIZE];
    final Histogram last = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
    final Histogram all = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
    /** The current burst's; written before its tasks are submitted, so they see it. */
    CountDownLatch finished;

    BurstStartLatency() throws InterruptedException {
      for (int i = 0; i < BURST_SIZE; i++) {
        int me = i;
        tasks[i] = () -> {
          startedAt[me] = System.nanoTime();
          try {
            Thread.sleep(BURST_SLEEP_MILLIS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // shutdownNow at the end of the run
          }
          finished.countDown();
        };
      }
      for (int i = 0; i < ids.length; i++) {
        executors[i] = Peers.blocking(ids[i], BURST_SIZE, "burst-" + ids[i]);
        startAll(executors[i]);
      }
    }

    /** Runs 64 tasks that each wait until all 64 run: afterwards 64 workers exist. */
    private void startAll(ExecutorService executor) throws InterruptedException {
      CountDownLatch running = new CountDownLatch(BURST_SIZE);
      CountDownLatch done = new CountDownLatch(BURST_SIZE);
      for (int i = 0; i < BURST_SIZE; i++) {
        executor.execute(() -> {
          running.countDown();
          try {
            running.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          done.countDown();
        });
      }
      if (!done.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the pool did not run " + BURST_SIZE + " tasks at once");
      }
    }

    private int workers(int i) {
      return executors[i] instanceof WorkerPool ? ((WorkerPool) executors[i]).stats().workers()
          : ((ThreadPoolExecutor) executors[i]).getPoolSize();
    }

    @Override
    public void round() throws InterruptedException {
      int bursts = Math.max(10, (int) (100 * scale));
      for (int i = 0; i < ids.length; i++) {
        ExecutorService executor = executors[i];
        record(shape, "workers before round", ids[i], workers(i));
        last.reset();
        all.reset();
        for (int b = 0; b < bursts; b++) {
          LockSupport.parkNanos(BURST_PAUSE_NANOS); // let every worker park
          CountDownLatch done = new CountDownLatch(BURST_SIZE);
          finished = done;
          for (int t = 0; t < BURST_SIZE; t++) {
            submittedAt[t] = System.nanoTime();
            executor.execute(tasks[t]);
          }
          if (!done.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("a burst did not finish in 60 s");
          }
          for (int t = 0; t < BURST_SIZE; t++) { // the latch orders the tasks' writes before these reads
            all.recordValue(Math.max(0, startedAt[t] - submittedAt[t]));
          }
          last.recordValue(Math.max(0, startedAt[BURST_SIZE - 1] - submittedAt[BURST_SIZE - 1]));
        }
        record(shape, "64th task p99 us", ids[i], last.getValueAtPercentile(99) / 1000.0);
        record(shape, "64th task p50 us", ids[i], last.getValueAtPercentile(50) / 1000.0);
        record(shape, "all tasks p99 us", ids[i], all.getValueAtPercentile(99) / 1000.0);
      }
    }

    @Override
    public void close() {
      for (ExecutorService e : executors) {
        Peers.close(e);
      }
    }
  }

  /** Shape 7: Kotlin round trips, through {@code CoroutineShapes.kt}. */
  final class KotlinShape implements Shape {
    final String shape = "Kotlin withContext round trips, 64 concurrent, capacity 20";
    final WorkerPool pool = WorkerPool.builder().name("kt-wp").capacity(ADAPTER_CAPACITY).build();
    final ExecutorService fixed =
        Executors.newFixedThreadPool(ADAPTER_CAPACITY, Peers.named("kt-fixed"));
    final String[] ids = {Peers.WARMPOOL, "kotlin-fixed", "kotlin-io-limited"};
    final List<kotlinx.coroutines.CoroutineDispatcher> dispatchers =
        CoroutineShapes.goalDispatchers(pool, fixed, ADAPTER_CAPACITY);

    @Override
    public void round() {
      int roundTrips = Math.max(CONCURRENCY * 100, (int) (200_000 * scale));
      for (int i = 0; i < ids.length; i++) {
        record(shape, "round trips/s", ids[i], CoroutineShapes.withContextRoundTripsPerSecond(
            dispatchers.get(i), roundTrips, CONCURRENCY));
      }
    }

    @Override
    public void close() {
      Peers.close(pool);
      Peers.close(fixed);
    }
  }

  /** Shape 11 (issue 33): coroutines launched on Dispatchers.Default, 64 in flight, one round trip each. */
  final class KotlinDefaultShape implements Shape {
    final WorkerPool pool = WorkerPool.builder().name("ktd-wp").capacity(ADAPTER_CAPACITY).build();
    final ExecutorService fixed =
        Executors.newFixedThreadPool(ADAPTER_CAPACITY, Peers.named("ktd-fixed"));
    final String[] ids = {Peers.WARMPOOL, "kotlin-fixed"};
    final List<kotlinx.coroutines.CoroutineDispatcher> dispatchers =
        CoroutineShapes.goalDispatchers(pool, fixed, ADAPTER_CAPACITY).subList(0, 2);

    @Override
    public void round() {
      int coroutines = Math.max(CONCURRENCY * 100, (int) (200_000 * scale));
      for (int i = 0; i < ids.length; i++) {
        record(KOTLIN_DEFAULT, "coroutines/s", ids[i], CoroutineShapes.withContextFromDefaultPerSecond(
            dispatchers.get(i), coroutines, CONCURRENCY));
      }
    }

    @Override
    public void close() {
      Peers.close(pool);
      Peers.close(fixed);
    }
  }

  /** Shape 5: closed loop with one task outstanding, as {@link HandOffLatency}. */
  final class Latency implements Shape {
    final String shape = "latency, one outstanding, capacity 2";
    final String[] ids = {Peers.WARMPOOL, Peers.JBOSS, Peers.TPE_FIXED, Peers.TPE_CACHED};
    final ExecutorService[] executors = new ExecutorService[ids.length];
    final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
    final OneShot task = new OneShot(histogram);

    Latency() {
      for (int i = 0; i < ids.length; i++) {
        executors[i] = Peers.blocking(ids[i], 2, "lat-" + ids[i]);
      }
    }

    @Override
    public void round() {
      int atZero = Math.max(1000, (int) (20_000 * scale));
      int at1ms = Math.max(200, (int) (1_500 * scale));
      for (int i = 0; i < ids.length; i++) {
        histogram.reset();
        run(executors[i], 0, atZero, (long) (1e9 * scale));
        record(shape, "gap 0 p50 us", ids[i], histogram.getValueAtPercentile(50) / 1000.0);
      }
      for (int i = 0; i < ids.length; i++) {
        histogram.reset();
        run(executors[i], GAP_1MS, at1ms, 0);
        record(shape, "gap 1ms p99 us", ids[i], histogram.getValueAtPercentile(99) / 1000.0);
      }
    }

    /**
     * {@code n} samples; with a {@code budgetNanos} above 0, at least 1000 and no more than fit in
     * that time (a slow peer, such as the cached TPE starting threads at gap 0, ends early).
     */
    private void run(ExecutorService executor, long gapNanos, int n, long budgetNanos) {
      long start = System.nanoTime();
      for (int i = 0; i < n; i++) {
        if (budgetNanos > 0 && i >= 1000 && System.nanoTime() - start > budgetNanos) {
          break;
        }
        if (gapNanos > 0) {
          LockSupport.parkNanos(gapNanos);
        }
        task.arm();
        executor.execute(task);
        task.await();
      }
    }

    @Override
    public void close() {
      for (ExecutorService e : executors) {
        Peers.close(e);
      }
    }
  }

  /**
   * Shape 6: a fresh pool per round and per executor, a stream of tiny tasks from one producer
   * (submitted back to back, then awaited), worker counts sampled every 1 ms by a side thread.
   */
  final class Threads implements Shape {
    final String shape = "threads, stream of tiny tasks, capacity 64";

    @Override
    public void round() throws InterruptedException {
      long n = Math.max(10_000, (long) (1_000_000 * scale));

      WorkerPool pool = WorkerPool.builder().name("thr-wp").capacity(64).build();
      try {
        Sampler sampler = new Sampler(() -> {
          PoolStats st = pool.stats();
          return new int[] {st.workers(), st.busy()};
        });
        double rate = stream(pool, n, sampler, Peers.WARMPOOL);
        record(shape, "threads started", Peers.WARMPOOL, pool.stats().workersStarted());
        record(shape, "peak live workers", Peers.WARMPOOL, sampler.peak[0]);
        record(shape, "peak busy workers", Peers.WARMPOOL, sampler.peak[1]);
        record(shape, "stream tasks/s", Peers.WARMPOOL, rate);
      } finally {
        Peers.close(pool);
      }

      ThreadPoolExecutor fixed = (ThreadPoolExecutor) Executors.newFixedThreadPool(64, Peers.named("thr-fixed"));
      try {
        Sampler sampler = new Sampler(() -> new int[] {fixed.getPoolSize(), fixed.getActiveCount()});
        double rate = stream(fixed, n, sampler, Peers.TPE_FIXED);
        record(shape, "threads started", Peers.TPE_FIXED, fixed.getLargestPoolSize());
        record(shape, "peak live workers", Peers.TPE_FIXED, Math.max(sampler.peak[0], fixed.getPoolSize()));
        record(shape, "peak busy workers", Peers.TPE_FIXED, sampler.peak[1]);
        record(shape, "stream tasks/s", Peers.TPE_FIXED, rate);
      } finally {
        Peers.close(fixed);
      }
    }

    /**
     * Submits {@code n} tiny tasks back to back (stopping early after {@code 3 s x scale}), waits
     * until all have run, and returns tasks per second; records how many were submitted.
     */
    private double stream(Executor executor, long n, Sampler sampler, String id)
        throws InterruptedException {
      AtomicLong completed = new AtomicLong();
      Runnable task = completed::incrementAndGet;
      Thread side = new Thread(sampler, "sampler");
      side.setDaemon(true);
      side.start();
      long t0 = System.nanoTime();
      long budget = (long) (3e9 * scale);
      long submitted = 0;
      while (submitted < n) {
        executor.execute(task);
        if ((++submitted & 1023) == 0 && System.nanoTime() - t0 > budget) {
          break;
        }
      }
      while (completed.get() < submitted) {
        LockSupport.parkNanos(20_000);
      }
      double rate = submitted / ((System.nanoTime() - t0) / 1e9);
      sampler.stop = true;
      side.join();
      record(shape, "stream tasks submitted", id, submitted);
      return rate;
    }

    @Override
    public void close() {}
  }

  /** Samples a few gauges every 1 ms and keeps their peaks. */
  static final class Sampler implements Runnable {
    interface Gauges {
      int[] read();
    }

    final Gauges gauges;
    final int[] peak = new int[2];
    volatile boolean stop;

    Sampler(Gauges gauges) {
      this.gauges = gauges;
    }

    @Override
    public void run() {
      do {
        int[] v = gauges.read();
        for (int i = 0; i < peak.length; i++) {
          peak[i] = Math.max(peak[i], v[i]);
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
      } while (!stop);
      int[] v = gauges.read(); // once more at the end of the stream
      for (int i = 0; i < peak.length; i++) {
        peak[i] = Math.max(peak[i], v[i]);
      }
    }
  }

  // ---------------------------------------------------------------- environment

  static String loadAvg() {
    try {
      return Files.readString(Path.of("/proc/loadavg"), StandardCharsets.US_ASCII).trim();
    } catch (IOException | RuntimeException unavailable) {
      return "unavailable";
    }
  }

  private static String nproc() {
    try {
      Process p = new ProcessBuilder("nproc").redirectErrorStream(true).start();
      String s = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
      return p.waitFor() == 0 ? s : "?";
    } catch (IOException | RuntimeException e) {
      return "?";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "?";
    }
  }

  /** The report, on stdout. */
  static final class PrintOut {
    void line(String s) {
      System.out.println(s);
    }
  }

  /**
   * Shape 11 (issue 33): a task that puts a subtask on its own pool and waits for it outside the
   * library ({@code CompletableFuture.supplyAsync(.., pool).join()}), as blocking code that calls an
   * async API does. One call every 2 ms from a caller thread (paced by intended start, so a slow
   * call does not spread the next ones), capacity 2; latency from submit to the outer future's
   * completion. {@code 500 x scale} calls per round and peer.
   */
  final class NestedJoin implements Shape {
    final String[] ids = {Peers.WARMPOOL, Peers.TPE_FIXED};
    final ExecutorService[] executors = new ExecutorService[ids.length];
    final Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);

    NestedJoin() {
      for (int i = 0; i < ids.length; i++) {
        executors[i] = Peers.blocking(ids[i], 2, "nested-" + ids[i]);
      }
    }

    @Override
    public void round() throws Exception {
      int calls = Math.max(50, (int) (500 * scale));
      long period = TimeUnit.MILLISECONDS.toNanos(2);
      for (int i = 0; i < ids.length; i++) {
        ExecutorService executor = executors[i];
        h.reset();
        long next = System.nanoTime();
        for (int c = 0; c < calls; c++) {
          next += period;
          long wait;
          while ((wait = next - System.nanoTime()) > 0) {
            LockSupport.parkNanos(wait);
          }
          long t0 = System.nanoTime();
          executor.submit(() -> java.util.concurrent.CompletableFuture.supplyAsync(() -> 1, executor)
              .join()).get(10, TimeUnit.SECONDS);
          h.recordValue(System.nanoTime() - t0);
        }
        record(NESTED, "p50 us", ids[i], h.getValueAtPercentile(50) / 1000.0);
        record(NESTED, "p99 us", ids[i], h.getValueAtPercentile(99) / 1000.0);
      }
    }

    @Override
    public void close() {
      for (ExecutorService e : executors) {
        Peers.close(e);
      }
    }
  }
  /**
   * Shape 13. One driver thread subscribes each request at its intended arrival; latency runs from
   * that instant, so an executor that makes the driver late pays for it (no coordinated omission).
   */
  final class Service extends ReactorPeers implements Shape {
    final org.HdrHistogram.ConcurrentHistogram h =
        new org.HdrHistogram.ConcurrentHistogram(TimeUnit.SECONDS.toNanos(60), 3);
    int round;

    Service() {
      super("svc", "svc-be");
    }

    @Override
    public void round() throws Exception {
      long[] gaps = poissonGaps(2_000, Math.max(200, (int) (4_000 * scale)), 33L + round++);
      for (int i = 0; i < ids.length; i++) {
        Scheduler s = schedulers[i];
        h.reset();
        CountDownLatch done = new CountDownLatch(gaps.length);
        AtomicLong failed = new AtomicLong();
        long next = System.nanoTime();
        for (long gap : gaps) {
          next += gap;
          long wait;
          while ((wait = next - System.nanoTime()) > 0) {
            LockSupport.parkNanos(wait);
          }
          long intended = next;
          Mono.fromCallable(() -> {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // the blocking call
                return intended;
              })
              .subscribeOn(s)
              .subscribe(v -> {
                h.recordValue(System.nanoTime() - v);
                done.countDown();
              }, e -> {
                failed.incrementAndGet();
                done.countDown();
              });
        }
        if (!done.await(60, TimeUnit.SECONDS) || failed.get() != 0) {
          throw new IllegalStateException(ids[i] + ": " + done.getCount() + " requests unfinished, "
              + failed.get() + " failed");
        }
        record(SERVICE, "p50 us", ids[i], h.getValueAtPercentile(50) / 1000.0);
        record(SERVICE, "p99 us", ids[i], h.getValueAtPercentile(99) / 1000.0);
      }
    }

    /** Exponential gaps (nanos) of a Poisson process of {@code perSecond}, seeded. */
    private long[] poissonGaps(int perSecond, int n, long seed) {
      java.util.Random r = new java.util.Random(seed);
      long[] gaps = new long[n];
      for (int i = 0; i < n; i++) {
        gaps[i] = (long) (-Math.log(1 - r.nextDouble()) * 1e9 / perSecond);
      }
      return gaps;
    }
  }

  /** Shape 14: {@link MemoryPerUnit}'s shapes, warmpool and the peer each goal names. */
  final class Memory implements Shape {
    static final String REACTOR = "idle Reactor Worker with a pending timer";
    static final String RX = "idle RxJava Worker with a pending timer";
    static final String LINE = "task waiting in line (capacity 1, blocking)";

    @Override
    public void round() throws Exception {
      Map<String, Map<String, MemoryPerUnit.Shape>> shapes = MemoryPerUnit.shapes();
      measure(shapes, REACTOR, "warmpool", "newBoundedElastic(64, MAX)");
      measure(shapes, RX, "warmpool", "Schedulers.from(fixed 20)");
      measure(shapes, LINE, "warmpool enqueue", "fixed(1) + LinkedBlockingQueue, execute");
    }

    private void measure(Map<String, Map<String, MemoryPerUnit.Shape>> shapes, String shape,
        String warmpool, String peer) throws Exception {
      Map<String, MemoryPerUnit.Shape> peers = shapes.get(shape);
      record(shape, "bytes per unit", Peers.WARMPOOL, MemoryPerUnit.measure(peers.get(warmpool)));
      record(shape, "bytes per unit", peer, MemoryPerUnit.measure(peers.get(peer)));
    }

    @Override
    public void close() {
    }
  }
}
