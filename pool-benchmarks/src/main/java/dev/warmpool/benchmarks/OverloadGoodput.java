package dev.warmpool.benchmarks;

import dev.warmpool.CancellationAware;
import dev.warmpool.PoolOverloadedException;
import dev.warmpool.PoolStats;
import dev.warmpool.WorkerPool;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Scenario 8, goodput under overload (issue 23): what a pool of capacity {@value #CAPACITY} does
 * with tasks of {@value #TASK_MS} ms (a sleep: blocking I/O) whose callers give up on a task that
 * has not <em>started</em> within {@value #DEADLINE_MS} ms of its submission.
 *
 * <ol>
 *   <li><b>Overload</b>: 2x capacity, 4,000 tasks/s evenly spaced, for {@code seconds}.</li>
 *   <li><b>Poisson</b>: 0.8x capacity, 1,600 tasks/s on average, exponential gaps (bursty, below
 *       capacity on average); every peer of a round sees the same arrival times.</li>
 *   <li><b>Bursts</b>: each second 3x capacity for 200 ms, then 0.5x (1x on average), evenly
 *       spaced: a standing line forms and drains (controlled delay's and adaptive LIFO's case).</li>
 * </ol>
 *
 * <p>The producer is open loop: task {@code i} is due at a fixed offset from the start (by
 * {@link System#nanoTime()}); the producer parks until then, then offers every due task with a call
 * that never blocks, so a slow pool cannot slow the arrivals. A task's <em>submission</em> is the
 * moment the producer calls the peer; its <em>start delay</em> is from there to the first line of
 * its {@code run()}. A task that starts within the deadline and completes is <em>useful</em>; one
 * that starts later still runs its 10 ms (the pool cannot know) and counts as <em>completed
 * late</em>. <b>Goodput</b> = useful tasks / {@code seconds} / 2,000 per second (20 x 1 / 10 ms).
 *
 * <p>At the end of the window the producer stops; what is still queued is left to run (or expire),
 * and counts like the rest: a task that completes after the window counts as useful if it started
 * within its deadline (only tasks submitted in the window's last ~100 ms can), else as late. So the
 * ceiling is 1 + 110 ms / window (1.011 for 10 s), not 1. Every peer is drained to empty, then shut
 * down and awaited before the next one starts, and each trial builds a fresh peer.
 *
 * <p>Peers (ids): {@code warmpool-maxWaitInLine} ({@code maxWaitInLine(50 ms)}, {@code enqueue}; an
 * expired task is seen through {@link CancellationAware#onExpired}), {@code warmpool-controlledDelay}
 * ({@code controlledDelay(5 ms, 100 ms)}, {@code enqueue}), {@code warmpool-controlledDelay-lifo}
 * (the same plus {@code adaptiveLifo(true)}), {@code warmpool-maxWait250} ({@code maxWaitInLine(250 ms)},
 * longer than the callers wait: served work may be late) and {@code warmpool-maxWait250-lifo} (the
 * same plus {@code adaptiveLifo(true)}), {@code warmpool-blocking}
 * (blocking mode, default {@code maxWaiting} 100,000, no deadline, {@code enqueue}),
 * {@code warmpool-nonblocking} ({@code enqueue} throws when every seat is taken), {@code tpe-fixed}
 * (fixed {@code ThreadPoolExecutor(20)} + unbounded {@code LinkedBlockingQueue}), {@code tpe-abq}
 * ({@code ThreadPoolExecutor(20)} + {@code ArrayBlockingQueue(1000)} + {@code AbortPolicy}) and
 * {@code elastic-direct} ({@code Schedulers.newBoundedElastic(20, 100000, ..)}, direct
 * {@code schedule(task)}; a refusal is its {@code RejectedExecutionException}). Rounds interleave
 * them: round r runs the overload phase for every peer, then the Poisson phase, then the bursts,
 * each for every peer, the peer order rotated by one each round. Figures are medians over the rounds.
 *
 * <p>Refused = rejected at the call + expired in line. <em>Refusal wait</em> is how long the caller
 * waited to learn of it: the call's own duration for a rejection, submission to
 * {@code onExpired} for an expiry. Also reported, to judge a run: the producer's p99 lag behind its
 * schedule and how long a task's 10 ms sleep really took. Both grow with the machine's load (a
 * parked thread wakes late when the cores are busy), which cuts true capacity below 2,000/s and
 * delays warmpool's expiry signal: record the load beside the figures.
 *
 * <p>Options ({@code key=value}): {@code seconds=10} per phase, {@code rounds=3} measured,
 * {@code warmup=1} discarded rounds of 1 s phases, {@code peers=} a comma list of ids,
 * {@code out=} a markdown file to write (also printed). Prints {@code @result} lines per round for
 * {@link ChildProcess}. From the repository root, after building:
 * <pre>
 * ./mvnw -q -B -pl pool-benchmarks -am package -DskipTests dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * java -Xmx1g -cp pool-benchmarks/target/classes:$(cat pool-benchmarks/target/cp.txt) \
 *     dev.warmpool.benchmarks.OverloadGoodput seconds=10 rounds=3 out=docs/benchmarks/goodput.md
 * </pre>
 * A smoke run ({@code seconds=1 rounds=1 warmup=0}) takes about 30 s; a full one (10 s, 3 rounds,
 * ten peers) about 17 minutes, much of it draining the queues of the queueing peers.
 */
public final class OverloadGoodput {
  static final String TABLE_OVERLOAD = "goodput-overload";
  static final String TABLE_POISSON = "goodput-poisson";
  static final String TABLE_BURSTS = "goodput-bursts";
  static final int CAPACITY = 20;
  static final long TASK_MS = 10;
  static final long DEADLINE_MS = 100;
  static final long MAX_WAIT_IN_LINE_MS = 50;
  static final double CAPACITY_PER_SECOND = CAPACITY * 1000.0 / TASK_MS;
  static final int ABQ_SIZE = 1000;
  static final int ELASTIC_QUEUE = 100_000;

  static final String WP_DEADLINE = "warmpool-maxWaitInLine";
  static final String WP_CODEL = "warmpool-controlledDelay";
  static final String WP_CODEL_LIFO = "warmpool-controlledDelay-lifo";
  static final long CODEL_TARGET_MS = 5;
  static final long CODEL_INTERVAL_MS = 100;
  /** A line bound longer than the callers' deadline: what adaptive LIFO is for. */
  static final String WP_LONG = "warmpool-maxWait250";
  static final String WP_LONG_LIFO = "warmpool-maxWait250-lifo";
  static final long LONG_WAIT_MS = 250;
  static final String WP_BLOCKING = "warmpool-blocking";
  static final String WP_NONBLOCKING = "warmpool-nonblocking";
  static final String TPE_LBQ = Peers.TPE_FIXED;
  static final String TPE_ABQ = "tpe-abq";
  static final String ELASTIC = "elastic-direct";
  static final List<String> PEERS =
      List.of(WP_DEADLINE, WP_CODEL, WP_CODEL_LIFO, WP_LONG, WP_LONG_LIFO, WP_BLOCKING, WP_NONBLOCKING,
          TPE_LBQ, TPE_ABQ, ELASTIC);

  /** The figures, in table order; per phase and peer, one value per round. */
  static final String GOODPUT = "goodput";
  static final String GOODPUT_MEASURED = "goodput of measured capacity";
  static final String LATE = "completed late";
  static final String REFUSED = "refused";
  static final String REFUSED_PCT = "refused %";
  static final String START_P50 = "start delay p50 ms";
  static final String START_P99 = "start delay p99 ms";
  /** Over tasks submitted from the window's second second on: a line that has stood a while. */
  static final String START_P99_LATER = "start delay p99 ms after 1 s";
  static final String WAIT_P50 = "refusal wait p50 ms";
  static final String WAIT_P99 = "refusal wait p99 ms";
  static final String DRAIN = "drain s";
  static final String LAG = "producer lag p99 ms";
  static final String TASK_TIME = "task ms (mean)";
  static final List<String> FIGURES = List.of(GOODPUT, GOODPUT_MEASURED, LATE, REFUSED, REFUSED_PCT, START_P50,
      START_P99, START_P99_LATER, WAIT_P50, WAIT_P99, DRAIN, LAG, TASK_TIME);

  /** The phases: offered load as a multiple of capacity, and how arrivals are spaced. */
  enum Phase {
    OVERLOAD(TABLE_OVERLOAD, 2.0, false, false, "2x capacity (4,000 tasks/s, evenly spaced)"),
    POISSON(TABLE_POISSON, 0.8, true, false,
        "Poisson arrivals at 0.8x capacity (1,600 tasks/s on average)"),
    /**
     * A standing line that forms and drains (issue 34): each second, 3x capacity for the first
     * {@value #BURST_MS} ms, then {@code load} for the rest, evenly spaced.
     */
    BURSTS(TABLE_BURSTS, 0.5, false, true, "bursts of 3x capacity for 200 ms each second,"
        + " 0.5x between them (1x on average), evenly spaced");

    static final long BURST_MS = 200;
    static final double BURST_LOAD = 3.0;

    final String table;
    final double load;
    final boolean poisson;
    final boolean bursts;
    final String title;

    Phase(String table, double load, boolean poisson, boolean bursts, String title) {
      this.table = table;
      this.load = load;
      this.poisson = poisson;
      this.bursts = bursts;
      this.title = title;
    }

    /** Arrival offsets from the start, in nanoseconds, all before {@code windowNanos}. */
    long[] arrivals(long windowNanos, long seed) {
      if (bursts) {
        return burstArrivals(windowNanos);
      }
      double meanGap = 1e9 / (load * CAPACITY_PER_SECOND);
      SplittableRandom random = new SplittableRandom(seed);
      long[] out = new long[(int) (windowNanos / meanGap * 1.5) + 16];
      int n = 0;
      double t = 0;
      while (true) {
        long at = Math.round(t);
        if (at >= windowNanos) {
          return Arrays.copyOf(out, n);
        }
        if (n == out.length) {
          out = Arrays.copyOf(out, n * 2);
        }
        out[n++] = at;
        t += poisson ? -Math.log(1 - random.nextDouble()) * meanGap : meanGap;
      }
    }

    private long[] burstArrivals(long windowNanos) {
      double burstGap = 1e9 / (BURST_LOAD * CAPACITY_PER_SECOND);
      double calmGap = 1e9 / (load * CAPACITY_PER_SECOND);
      long burstNanos = TimeUnit.MILLISECONDS.toNanos(BURST_MS);
      long[] out = new long[64];
      int n = 0;
      double t = 0;
      while (true) {
        long at = Math.round(t);
        if (at >= windowNanos) {
          return Arrays.copyOf(out, n);
        }
        if (n == out.length) {
          out = Arrays.copyOf(out, n * 2);
        }
        out[n++] = at;
        t += at % 1_000_000_000L < burstNanos ? burstGap : calmGap;
      }
    }
  }

  private OverloadGoodput() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> o = Harness.options(args, 0);
    double seconds = Double.parseDouble(o.getOrDefault("seconds", "10"));
    int rounds = Harness.intOption(o, "rounds", 3);
    int warmup = Harness.intOption(o, "warmup", 1);
    List<String> peers = o.containsKey("peers") ? List.of(o.get("peers").split(",")) : PEERS;
    String loadStart = uptime();
    long t0 = System.nanoTime();

    // phase -> peer -> figure -> one value per measured round
    Map<Phase, Map<String, Map<String, List<Double>>>> figures = new LinkedHashMap<>();
    double worstLagMs = 0;
    for (int r = 0; r < warmup + rounds; r++) {
      boolean measured = r >= warmup;
      double s = measured ? seconds : Math.min(1, seconds);
      long window = (long) (s * 1e9);
      for (Phase phase : Phase.values()) {
        long[] arrivals = phase.arrivals(window, 23_000 + r);
        for (int i = 0; i < peers.size(); i++) {
          String peer = peers.get((i + r) % peers.size());
          Trial trial = Trial.run(peer, arrivals, window);
          Map<String, Double> f = trial.figures();
          System.out.printf(Locale.ROOT, "%s %d %s %s: %s%n", measured ? "round" : "warm-up",
              measured ? r - warmup + 1 : r + 1, phase, peer, f);
          if (!measured) {
            continue;
          }
          worstLagMs = Math.max(worstLagMs, trial.lagP99Ms);
          Map<String, List<Double>> byFigure = figures.computeIfAbsent(phase, k -> new LinkedHashMap<>())
              .computeIfAbsent(peer, k -> new LinkedHashMap<>());
          for (String figure : FIGURES) {
            byFigure.computeIfAbsent(figure, k -> new ArrayList<>()).add(f.get(figure));
          }
        }
      }
    }
    // every round's figures for ChildProcess (which takes their medians), peers in table order
    figures.forEach((phase, byPeer) -> {
      for (String peer : peers) {
        byPeer.getOrDefault(peer, Map.of()).forEach((figure, values) -> {
          for (double v : values) {
            if (!Double.isNaN(v)) {
              Harness.result(phase.table, figure, peer, v);
            }
          }
        });
      }
    });
    String md = markdown(figures, peers, seconds, rounds, warmup, loadStart, uptime(), worstLagMs,
        (System.nanoTime() - t0) / 1e9);
    System.out.println(md);
    if (o.containsKey("out")) {
      Files.writeString(Path.of(o.get("out")), md, StandardCharsets.UTF_8);
    }
  }

  // ---------------------------------------------------------------- one phase on one peer

  /** Where a task ended. */
  enum Outcome { NONE, COMPLETED, REJECTED, EXPIRED, CANCELLED }

  /** The peer under test, behind a call that never blocks the producer. */
  interface Target {
    /** Offers the task; a refusal at the call throws {@link RejectedExecutionException}. */
    void offer(Runnable task);

    /** Shuts the (drained) peer down and waits until its threads have ended. */
    void close() throws InterruptedException;

    /** The peer's own count of completed and expired tasks, or null if it keeps none. */
    default long[] completedAndExpired() {
      return null;
    }
  }

  static Target open(String peer) {
    switch (peer) {
      case WP_DEADLINE:
        return warmpool(WorkerPool.builder().name("gp-deadline").capacity(CAPACITY)
            .maxWaitInLine(Duration.ofMillis(MAX_WAIT_IN_LINE_MS)).build());
      case WP_CODEL:
        return warmpool(WorkerPool.builder().name("gp-codel").capacity(CAPACITY)
            .controlledDelay(Duration.ofMillis(CODEL_TARGET_MS), Duration.ofMillis(CODEL_INTERVAL_MS))
            .build());
      case WP_CODEL_LIFO:
        return warmpool(WorkerPool.builder().name("gp-codel-lifo").capacity(CAPACITY)
            .controlledDelay(Duration.ofMillis(CODEL_TARGET_MS), Duration.ofMillis(CODEL_INTERVAL_MS))
            .adaptiveLifo(true).build());
      case WP_LONG:
        return warmpool(WorkerPool.builder().name("gp-long").capacity(CAPACITY)
            .maxWaitInLine(Duration.ofMillis(LONG_WAIT_MS)).build());
      case WP_LONG_LIFO:
        return warmpool(WorkerPool.builder().name("gp-long-lifo").capacity(CAPACITY)
            .maxWaitInLine(Duration.ofMillis(LONG_WAIT_MS)).adaptiveLifo(true).build());
      case WP_BLOCKING:
        return warmpool(WorkerPool.builder().name("gp-blocking").capacity(CAPACITY).build());
      case WP_NONBLOCKING:
        return warmpool(WorkerPool.builder().name("gp-nonblocking").capacity(CAPACITY)
            .nonblocking(true).build());
      case TPE_LBQ:
        return tpe(new ThreadPoolExecutor(CAPACITY, CAPACITY, 0, TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(), Peers.named("gp-lbq")));
      case TPE_ABQ:
        return tpe(new ThreadPoolExecutor(CAPACITY, CAPACITY, 0, TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(ABQ_SIZE), Peers.named("gp-abq"),
            new ThreadPoolExecutor.AbortPolicy()));
      case ELASTIC: {
        Scheduler s = Schedulers.newBoundedElastic(CAPACITY, ELASTIC_QUEUE, Peers.named("gp-elastic"), 60);
        return new Target() {
          @Override
          public void offer(Runnable task) {
            s.schedule(task);
          }

          @Override
          public void close() {
            s.dispose();
          }
        };
      }
      default:
        throw new IllegalArgumentException("unknown peer " + peer + "; peers: " + PEERS);
    }
  }

  private static Target warmpool(WorkerPool pool) {
    return new Target() {
      @Override
      public void offer(Runnable task) {
        pool.enqueue(task);
      }

      @Override
      public void close() throws InterruptedException {
        pool.shutdown();
        if (!pool.awaitTermination(60, TimeUnit.SECONDS)) {
          throw new IllegalStateException(pool + " did not terminate: " + pool.stats());
        }
      }

      @Override
      public long[] completedAndExpired() {
        PoolStats stats = pool.stats();
        return new long[] {stats.completed(), stats.expired()};
      }
    };
  }

  private static Target tpe(ThreadPoolExecutor tpe) {
    return new Target() {
      @Override
      public void offer(Runnable task) {
        tpe.execute(task);
      }

      @Override
      public void close() throws InterruptedException {
        tpe.shutdown();
        if (!tpe.awaitTermination(60, TimeUnit.SECONDS)) {
          throw new IllegalStateException(tpe + " did not terminate");
        }
      }
    };
  }

  /**
   * One phase on one peer: the open-loop producer, then the drain. Each task writes its own slot of
   * the arrays before it counts itself in {@link #finished}; the producer reads them after seeing
   * every accepted task finished, so the counter's volatile write and read order the plain writes.
   */
  static final class Trial {
    final String peer;
    final long windowNanos;
    final long[] submitted;
    final long[] started;
    final long[] ended;
    /** When the caller learned of the refusal: the call's return, or {@code onExpired}. */
    final long[] refused;
    final Outcome[] outcome;
    final AtomicInteger finished = new AtomicInteger();
    int accepted;
    long drainNanos;
    long startNanos;
    long[] peerCounts;
    double lagP99Ms;

    private Trial(String peer, int tasks, long windowNanos) {
      this.peer = peer;
      this.windowNanos = windowNanos;
      submitted = new long[tasks];
      started = new long[tasks];
      ended = new long[tasks];
      refused = new long[tasks];
      outcome = new Outcome[tasks];
      Arrays.fill(outcome, Outcome.NONE);
    }

    static Trial run(String peer, long[] arrivals, long windowNanos) throws InterruptedException {
      Trial t = new Trial(peer, arrivals.length, windowNanos);
      Target target = open(peer);
      long[] lag = new long[arrivals.length];
      long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(5);
      t.startNanos = start;
      for (int i = 0; i < arrivals.length; i++) {
        long due = start + arrivals[i];
        long now;
        // parking overshoots by up to ~0.1 ms; the next call catches up, so the rate holds
        while ((now = System.nanoTime()) < due) {
          LockSupport.parkNanos(due - now);
        }
        lag[i] = now - due;
        Task task = new Task(t, i);
        t.submitted[i] = System.nanoTime();
        try {
          target.offer(task);
          t.accepted++;
        } catch (RejectedExecutionException e) {
          t.refused[i] = System.nanoTime();
          t.outcome[i] = Outcome.REJECTED;
        }
      }
      long windowEnd = start + windowNanos;
      for (long now; (now = System.nanoTime()) < windowEnd; ) {
        LockSupport.parkNanos(windowEnd - now);
      }
      long drainLimit = windowEnd
          + TimeUnit.SECONDS.toNanos(Math.max(120, 3 * TimeUnit.NANOSECONDS.toSeconds(windowNanos)));
      while (t.finished.get() < t.accepted) {
        if (System.nanoTime() > drainLimit) {
          throw new IllegalStateException(peer + ": " + (t.accepted - t.finished.get())
              + " accepted tasks neither ran nor expired within the drain limit");
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
      }
      t.drainNanos = Math.max(0, System.nanoTime() - windowEnd);
      target.close();
      // read after termination: a task counts itself before its worker counts it as completed
      t.peerCounts = target.completedAndExpired();
      Arrays.sort(lag);
      t.lagP99Ms = percentile(lag, 0.99) / 1e6;
      return t;
    }

    Map<String, Double> figures() {
      long deadline = TimeUnit.MILLISECONDS.toNanos(DEADLINE_MS);
      int useful = 0;
      int late = 0;
      int refusedCount = 0;
      int completed = 0;
      long busyNanos = 0;
      int expired = 0;
      long[] startDelays = new long[submitted.length];
      long[] laterDelays = new long[submitted.length];
      int nLater = 0;
      long later = startNanos + TimeUnit.SECONDS.toNanos(1);
      long[] refusalWaits = new long[submitted.length];
      int nStart = 0;
      int nRefused = 0;
      for (int i = 0; i < submitted.length; i++) {
        switch (outcome[i]) {
          case COMPLETED:
            completed++;
            busyNanos += ended[i] - started[i];
            long delay = started[i] - submitted[i];
            startDelays[nStart++] = delay;
            if (submitted[i] >= later) {
              laterDelays[nLater++] = delay;
            }
            if (delay <= deadline) {
              useful++;
            } else {
              late++;
            }
            break;
          case EXPIRED:
            expired++;
            // fall through: an expiry is a refusal
          case REJECTED:
            refusedCount++;
            refusalWaits[nRefused++] = refused[i] - submitted[i];
            break;
          default:
            throw new IllegalStateException(peer + ": task " + i + " ended " + outcome[i]);
        }
      }
      // the pool's own counters must agree with what the tasks saw (guarantee 13)
      if (peerCounts != null && (peerCounts[0] != completed || peerCounts[1] != expired)) {
        throw new IllegalStateException(peer + ": stats() counted " + peerCounts[0] + " completed and "
            + peerCounts[1] + " expired, but " + completed + " tasks ran and " + expired
            + " heard onExpired");
      }
      long[] s = Arrays.copyOf(startDelays, nStart);
      long[] w = Arrays.copyOf(refusalWaits, nRefused);
      long[] l = Arrays.copyOf(laterDelays, nLater);
      Arrays.sort(l);
      Arrays.sort(s);
      Arrays.sort(w);
      Map<String, Double> f = new LinkedHashMap<>();
      f.put(GOODPUT, useful / (windowNanos / 1e9) / CAPACITY_PER_SECOND);
      // against what the pool could really do here: CAPACITY tasks per mean run time
      f.put(GOODPUT_MEASURED, completed == 0 ? Double.NaN
          : useful / (windowNanos / 1e9) / (CAPACITY / (busyNanos / 1e9 / completed)));
      f.put(LATE, (double) late);
      f.put(REFUSED, (double) refusedCount);
      f.put(REFUSED_PCT, 100.0 * refusedCount / submitted.length);
      f.put(START_P50, percentile(s, 0.50) / 1e6);
      f.put(START_P99, percentile(s, 0.99) / 1e6);
      f.put(START_P99_LATER, percentile(l, 0.99) / 1e6);
      f.put(WAIT_P50, percentile(w, 0.50) / 1e6);
      f.put(WAIT_P99, percentile(w, 0.99) / 1e6);
      f.put(DRAIN, drainNanos / 1e9);
      f.put(LAG, lagP99Ms);
      f.put(TASK_TIME, completed == 0 ? Double.NaN : busyNanos / 1e6 / completed);
      return f;
    }
  }

  /** One arrival; it hears of its own expiry (warmpool tells {@link CancellationAware} tasks). */
  static final class Task implements CancellationAware {
    private final Trial trial;
    private final int id;

    Task(Trial trial, int id) {
      this.trial = trial;
      this.id = id;
    }

    @Override
    public void run() {
      trial.started[id] = System.nanoTime();
      try {
        Thread.sleep(TASK_MS); // blocking I/O; a late task still costs its caller's pool 10 ms
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      trial.ended[id] = System.nanoTime();
      trial.outcome[id] = Outcome.COMPLETED;
      trial.finished.incrementAndGet();
    }


    /** warmpool's signal that the task outlived its line deadline: the caller's refusal. */
    @Override
    public void onExpired(PoolOverloadedException cause) {
      end(Outcome.EXPIRED);
    }

    /** Nobody cancels these tasks; if a peer ever does, the trial fails rather than miscount. */
    @Override
    public void onCancel() {
      end(Outcome.CANCELLED);
    }

    private void end(Outcome how) {
      trial.refused[id] = System.nanoTime();
      trial.outcome[id] = how;
      trial.finished.incrementAndGet();
    }
  }

  /** Nearest rank of sorted values; NaN when there are none. */
  static double percentile(long[] sorted, double p) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    int rank = (int) Math.ceil(p * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }

  // ---------------------------------------------------------------- the report

  /** The median of the rounds that have the figure (a peer that refused nothing has no refusal wait). */
  static double median(List<Double> values) {
    if (values == null) {
      return Double.NaN;
    }
    return Harness.median(values.stream().filter(v -> !Double.isNaN(v)).mapToDouble(Double::doubleValue)
        .toArray());
  }

  private static String markdown(Map<Phase, Map<String, Map<String, List<Double>>>> figures,
      List<String> peers, double seconds, int rounds, int warmup, String loadStart, String loadEnd,
      double worstLagMs, double wallSeconds) {
    StringBuilder sb = new StringBuilder();
    sb.append("# Goodput under overload\n\n");
    sb.append(String.format(Locale.ROOT, "Generated by `pool-benchmarks` `OverloadGoodput seconds=%s"
        + " rounds=%d warmup=%d`, %s, in %.0f s.\n\n", fmt(seconds), rounds, warmup,
        ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME), wallSeconds));
    sb.append(BenchmarkReport.Machine.describe());
    sb.append("- `uptime` at start: ").append(loadStart).append('\n');
    sb.append("- `uptime` at end: ").append(loadEnd).append("\n\n");
    sb.append(String.format(Locale.ROOT, "Capacity %d, tasks of %d ms (`Thread.sleep`: blocking I/O),"
        + " so capacity is %,.0f tasks/s. Each task's caller gives up if it has not **started** within"
        + " %d ms of its submission; such a task still runs (the pool cannot know) and counts as"
        + " *completed late*. **Goodput** = tasks that started within the deadline and completed, per"
        + " second of the %s s window, as a fraction of capacity. An open-loop producer offers tasks"
        + " on a schedule by `System.nanoTime()` with calls that never block (warmpool `enqueue`, TPE"
        + " `execute` on its queue, Reactor direct `schedule`), so a slow pool never slows arrivals"
        + " (its worst p99 lag behind the schedule in this run: %.2f ms). At the end of the window the"
        + " producer stops and each peer is drained: what was queued still runs (or expires) and"
        + " counts like the rest (useful only if it started within its deadline, which only tasks of"
        + " the window's last ~100 ms can: the ceiling is 1 + (100 + 10) ms / window, %.3f here);"
        + " *drain s* is how long that took; *producer lag* is how late the producer made its calls"
        + " against the schedule (it parks between arrivals; a loaded machine wakes it late, and it"
        + " then offers every due task at once); *task ms* is how long a task's 10 ms sleep really"
        + " took (on a loaded machine a sleeping thread wakes late, so true capacity is"
        + " 20 / task ms, below 2,000/s, and 0.8x offered load is more than 0.8x of it);"
        + " *goodput of measured capacity* divides by that true capacity instead. Then the peer is"
        + " shut down and awaited; every trial builds a fresh peer."
        + " %d measured rounds (after %d discarded warm-up rounds of 1 s phases); in each round every"
        + " peer runs the overload phase, then every peer the Poisson phase, then the bursts (the same arrival times for"
        + " every peer of a round), the peer order rotated each round. Figures are medians over the"
        + " rounds.\n\n", CAPACITY, TASK_MS, CAPACITY_PER_SECOND, DEADLINE_MS, fmt(seconds), worstLagMs,
        1 + (DEADLINE_MS + TASK_MS) / 1000.0 / seconds, rounds, warmup));
    sb.append("*Refused* = rejected at the call + expired in line (share of all offered tasks)."
        + " *Refusal wait* = how long the caller waited to learn of the refusal: the rejecting call's own"
        + " duration, or submission to `CancellationAware.onExpired` for an expiry. *Start delay* is"
        + " over every completed task, late ones included; *p99 after 1 s* only over tasks submitted"
        + " from the window's second second on, once a line that formed has stood a while (controlled"
        + " delay lets entries that join in a line's first interval wait up to the interval).\n\n");
    sb.append("Peers: ");
    List<String> labels = new ArrayList<>();
    for (String p : peers) {
      labels.add("*" + label(p) + "*");
    }
    sb.append(String.join("; ", labels)).append(".\n\n");
    for (Phase phase : Phase.values()) {
      sb.append("## Phase ").append(phase.ordinal() + 1).append(": ").append(phase.title)
          .append(" for ").append(fmt(seconds)).append(" s\n\n");
      sb.append("| peer | goodput (of capacity) | goodput of measured capacity | completed late | refused"
          + " | refused % | start delay p50 ms"
          + " | start delay p99 ms | p99 after 1 s | refusal wait p50 ms | refusal wait p99 ms | drain s"
          + " | producer lag p99 ms | task ms (mean) |\n");
      sb.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
      Map<String, Map<String, List<Double>>> byPeer = figures.getOrDefault(phase, Map.of());
      for (String peer : peers) {
        Map<String, List<Double>> f = byPeer.getOrDefault(peer, Map.of());
        sb.append("| ").append(peer.equals(WP_DEADLINE) ? "**" + label(peer) + "**" : label(peer));
        for (String figure : FIGURES) {
          double v = median(f.get(figure));
          sb.append(" | ").append(Double.isNaN(v) ? "–" : figure.startsWith(GOODPUT)
              ? String.format(Locale.ROOT, "%.3f", v) : Table.number(v)).append(partly(f.get(figure)));
        }
        sb.append(" |\n");
      }
      sb.append('\n');
    }
    goals(sb, figures);
    sb.append("## Every round\n\n");
    for (Map.Entry<Phase, Map<String, Map<String, List<Double>>>> p : figures.entrySet()) {
      for (Map.Entry<String, Map<String, List<Double>>> peer : p.getValue().entrySet()) {
        StringBuilder line = new StringBuilder("- " + p.getKey().name().toLowerCase(Locale.ROOT) + ", "
            + label(peer.getKey()) + ":");
        for (Map.Entry<String, List<Double>> f : peer.getValue().entrySet()) {
          line.append(' ').append(f.getKey()).append(' ');
          List<String> vs = new ArrayList<>();
          for (double v : f.getValue()) {
            vs.add(Double.isNaN(v) ? "–" : f.getKey().startsWith(GOODPUT)
                ? String.format(Locale.ROOT, "%.3f", v) : Table.number(v));
          }
          line.append(String.join("/", vs)).append(';');
        }
        sb.append(line).append('\n');
      }
    }
    return sb.toString();
  }

  /** The goals for warmpool with {@code maxWaitInLine(50 ms)}, measured, met or not. */
  private static void goals(StringBuilder sb, Map<Phase, Map<String, Map<String, List<Double>>>> figures) {
    Map<String, List<Double>> over = figures.getOrDefault(Phase.OVERLOAD, Map.of())
        .getOrDefault(WP_DEADLINE, Map.of());
    Map<String, List<Double>> poisson = figures.getOrDefault(Phase.POISSON, Map.of())
        .getOrDefault(WP_DEADLINE, Map.of());
    if (over.isEmpty() && poisson.isEmpty()) {
      return;
    }
    double limit = DEADLINE_MS * 1.1;
    sb.append("## Goals (warmpool with `maxWaitInLine(50 ms)`)\n\n");
    sb.append("| goal | measured | met |\n|---|---:|---|\n");
    goal(sb, "overload: goodput >= 0.9 of capacity", median(over.get(GOODPUT)), 0.9, true, "%.3f");
    goal(sb, "overload: p99 start delay of completed tasks <= 2x the deadline (200 ms)",
        median(over.get(START_P99)), 2.0 * DEADLINE_MS, false, "%.1f ms");
    goal(sb, "Poisson 0.8x: <= 1% refused", median(poisson.get(REFUSED_PCT)), 1.0, false, "%.2f %%");
    goal(sb, "overload: refusal wait p99 <= deadline + 10% (110 ms)" + partly(over.get(WAIT_P99)),
        median(over.get(WAIT_P99)),
        limit, false, "%.1f ms");
    goal(sb, "Poisson 0.8x: refusal wait p99 <= deadline + 10% (110 ms)"
        + partly(poisson.get(WAIT_P99)),
        median(poisson.get(WAIT_P99)), limit, false, "%.1f ms");
    sb.append('\n');
    codelGoals(sb, figures);
    double overTask = median(over.get(TASK_TIME));
    double poissonTask = median(poisson.get(TASK_TIME));
    sb.append(String.format(Locale.ROOT, "For context, not goals: a 10 ms task took %.2f ms (overload)"
        + " and %.2f ms (Poisson) on average in this run, so the true capacity was %,.0f and %,.0f"
        + " tasks/s; against it, goodput under overload was %.3f and the Poisson phase offered %.2fx"
        + " of it. warmpool's own bound on an expiry's lateness is maxWaitInLine + 10%% + 10 ms ="
        + " %.0f ms (refusal wait above).%n%n", overTask, poissonTask, CAPACITY * 1000 / overTask,
        CAPACITY * 1000 / poissonTask, median(over.get(GOODPUT_MEASURED)),
        Phase.POISSON.load * CAPACITY_PER_SECOND / (CAPACITY * 1000 / poissonTask),
        MAX_WAIT_IN_LINE_MS * 1.1 + 10));
  }

  /** Issue 34's goals for warmpool with {@code controlledDelay(5 ms, 100 ms)}, measured, met or not. */
  private static void codelGoals(StringBuilder sb,
      Map<Phase, Map<String, Map<String, List<Double>>>> figures) {
    Map<String, List<Double>> over = figures.getOrDefault(Phase.OVERLOAD, Map.of())
        .getOrDefault(WP_CODEL, Map.of());
    Map<String, List<Double>> poisson = figures.getOrDefault(Phase.POISSON, Map.of())
        .getOrDefault(WP_CODEL, Map.of());
    if (over.isEmpty() && poisson.isEmpty()) {
      return;
    }
    sb.append("## Goals (warmpool with `controlledDelay(5 ms, 100 ms)`)\n\n");
    sb.append("| goal | measured | met |\n|---|---:|---|\n");
    goal(sb, "overload: goodput >= 0.95 of capacity", median(over.get(GOODPUT)), 0.95, true, "%.3f");
    goal(sb, "overload: p50 start delay of served work <= 10 ms", median(over.get(START_P50)), 10.0,
        false, "%.1f ms");
    goal(sb, "overload: p99 start delay <= 2x the target plus one task (20 ms)",
        median(over.get(START_P99)), 2.0 * CODEL_TARGET_MS + TASK_MS, false, "%.1f ms");
    goal(sb, "the same, over tasks submitted after the first second",
        median(over.get(START_P99_LATER)), 2.0 * CODEL_TARGET_MS + TASK_MS, false, "%.1f ms");
    goal(sb, "Poisson 0.8x: <= 1% refused", median(poisson.get(REFUSED_PCT)), 1.0, false, "%.2f %%");
    Map<String, List<Double>> burstsFifo = figures.getOrDefault(Phase.BURSTS, Map.of())
        .getOrDefault(WP_CODEL, Map.of());
    Map<String, List<Double>> burstsLifo = figures.getOrDefault(Phase.BURSTS, Map.of())
        .getOrDefault(WP_CODEL_LIFO, Map.of());
    lifoGoal(sb, figures, WP_CODEL, WP_CODEL_LIFO, "controlledDelay(5 ms, 100 ms)");
    lifoGoal(sb, figures, WP_LONG, WP_LONG_LIFO, "maxWaitInLine(250 ms), longer than the callers wait");
    sb.append('\n');
  }

  /** Bursts: adaptive LIFO against FIFO with the same line settings, by goodput. */
  private static void lifoGoal(StringBuilder sb,
      Map<Phase, Map<String, Map<String, List<Double>>>> figures, String fifoPeer, String lifoPeer,
      String settings) {
    Map<String, Map<String, List<Double>>> bursts = figures.getOrDefault(Phase.BURSTS, Map.of());
    Map<String, List<Double>> fifo = bursts.getOrDefault(fifoPeer, Map.of());
    Map<String, List<Double>> lifo = bursts.getOrDefault(lifoPeer, Map.of());
    if (!fifo.isEmpty() && !lifo.isEmpty()) {
      double f = median(fifo.get(GOODPUT));
      goal(sb, String.format(Locale.ROOT, "bursts, %s: adaptiveLifo serves more within the deadline"
          + " than FIFO (goodput %.3f)", settings, f), median(lifo.get(GOODPUT)), Math.nextUp(f),
          true, "%.3f");
    }
  }

  /**
   * " (k of n rounds)" when only some rounds have the figure (a refusal wait exists only in a round
   * that refused something), so a median of one loaded round does not pass for all of them.
   */
  private static String partly(List<Double> values) {
    if (values == null) {
      return "";
    }
    long k = values.stream().filter(v -> !Double.isNaN(v)).count();
    return k == 0 || k == values.size() ? "" : " (" + k + " of " + values.size() + " rounds)";
  }

  private static void goal(StringBuilder sb, String what, double v, double bound, boolean atLeast,
      String format) {
    String met = Double.isNaN(v) ? "– (nothing refused)" : (atLeast ? v >= bound : v <= bound) ? "yes" : "**no**";
    sb.append("| ").append(what).append(" | ")
        .append(Double.isNaN(v) ? "–" : String.format(Locale.ROOT, format, v)).append(" | ").append(met)
        .append(" |\n");
  }

  private static String label(String peer) {
    return peer.equals(TPE_LBQ) ? "TPE fixed(20) + LinkedBlockingQueue" : Peers.label(peer);
  }

  private static String fmt(double v) {
    return v == Math.rint(v) ? String.valueOf((long) v) : String.valueOf(v);
  }

  /** The output of {@code uptime} (its load averages), or {@code /proc/loadavg} without it. */
  static String uptime() {
    try {
      Process p = new ProcessBuilder("uptime").redirectErrorStream(true).start();
      String s = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
      if (p.waitFor() == 0 && !s.isEmpty()) {
        return "`" + s + "`";
      }
    } catch (IOException | RuntimeException e) {
      // fall back to /proc
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return "load average " + BenchmarkReport.Machine.loadAverage();
  }
}
