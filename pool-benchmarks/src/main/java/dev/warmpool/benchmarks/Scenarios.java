package dev.warmpool.benchmarks;

import dev.warmpool.benchmarks.BenchmarkReport.Profile;
import dev.warmpool.benchmarks.BenchmarkReport.Section;
import dev.warmpool.benchmarks.Table.Better;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.runner.RunnerException;

/** The nine scenarios of the comparison, each run and turned into a report section. */
final class Scenarios {
  private static final List<String> HARNESS_JVM = List.of("-Xms256m", "-Xmx2g");

  private final Profile profile;
  private final Path out;
  private final Log log;
  private final JmhRun jmh;

  Scenarios(Profile profile, Path out, Log log) {
    this.profile = profile;
    this.out = out;
    this.log = log;
    this.jmh = new JmhRun(profile, out, log);
  }

  private List<String> blockingPeers() {
    return Peers.availableOf(Peers.BLOCKING);
  }

  private String virtualNote() {
    return Peers.available(Peers.VIRTUAL) ? ""
        : " The virtual-thread peer needs Java 21+ and is left out on this JVM ("
            + Runtime.version().feature() + ").";
  }

  // 1 -------------------------------------------------------------------------------------------

  Section handOffLatency() throws IOException, InterruptedException {
    Section s = new Section("1. Hand-off latency").say("Closed loop, one task outstanding, 2 workers"
        + " (capacity 2): the producer waits a gap (0 and 20 us by spinning, 1 ms by sleeping so that"
        + " an idle worker has parked), then submits; the task records submit-to-run time in an"
        + " HdrHistogram. " + profile.latencyReps + " repetitions of " + profile.latencySamples
        + " samples at gap 0 (a quarter at 20 us, a twentieth but at least 1000 at 1 ms) after a"
        + " warm-up pass; figures are medians over the repetitions, in microseconds. Each peer runs"
        + " in a fresh JVM." + virtualNote());
    ChildProcess runs = new ChildProcess();
    for (String peer : blockingPeers()) {
      String failed = runs.run(log, HARNESS_JVM, HandOffLatency.class, List.of(peer,
          "samples=" + profile.latencySamples, "reps=" + profile.latencyReps), 300);
      note(s, peer, failed);
    }
    Table p50 = new Table("latency p50", "p50 by gap (us)", Peers.WARMPOOL);
    Table p99 = new Table("latency p99", "p99 by gap (us)", Peers.WARMPOOL);
    for (String gap : HandOffLatency.GAP_NAMES) {
      Table t = new Table("latency gap " + gap, "Gap " + gap + ": submit-to-run latency (us)",
          Peers.WARMPOOL).column("p50 us", Better.LOWER).column("p99 us", Better.LOWER)
          .column("p99.9 us", Better.LOWER);
      runs.fill(t, t.key);
      s.tables.add(t);
      p50.column("gap " + gap, Better.LOWER);
      p99.column("gap " + gap, Better.LOWER);
      for (String peer : t.rows.keySet()) {
        p50.put(peer, "gap " + gap, t.get(peer, "p50 us"));
        p99.put(peer, "gap " + gap, t.get(peer, "p99 us"));
      }
    }
    chart(s, () -> Charts.bars(out, "latency-p50.png", "Hand-off latency p50 by gap (us)",
        "microseconds", p50, columnNames(p50)));
    chart(s, () -> Charts.bars(out, "latency-p99.png", "Hand-off latency p99 by gap (us)",
        "microseconds", p99, columnNames(p99)));
    return s;
  }

  // 2 -------------------------------------------------------------------------------------------

  Section tinyTaskThroughput() throws IOException, RunnerException {
    Section s = new Section("2. Tiny-task throughput (blocking mode)").say("JMH: each producer submits"
        + " a batch of " + TinyTaskThroughput.BATCH + " empty tasks and waits for all of them, so the"
        + " figure is tasks *completed* per second (millions). N = workers; blocking mode: warmpool's"
        + " `execute`, the hand-off TPE's caller-blocks handler and the Semaphore make the producer"
        + " wait; the fixed TPE, ForkJoinPool and jboss queue without bound (at most one batch per"
        + " producer here); the cached TPE has no bound on threads. *warmpool enqueue* is warmpool's"
        + " `enqueue`, which never blocks the producer: the task waits in line instead, like a queue."
        + virtualNote());
    Map<String, List<String>> params = new LinkedHashMap<>();
    List<String> peers = new ArrayList<>(blockingPeers());
    peers.add(1, TinyTaskThroughput.WARMPOOL_ENQUEUE);
    params.put("peer", peers);
    params.put("workers", List.of("2", "64"));
    Table t = new Table("throughput", "Tiny tasks, M tasks/s", Peers.WARMPOOL);
    for (String n : List.of("2", "64")) {
      t.column("1 producer, N=" + n, Better.HIGHER).column("2 producers, N=" + n, Better.HIGHER);
    }
    for (JmhRun.Figures f : jmh.run(TinyTaskThroughput.class, "oneProducer|twoProducers", params, false)) {
      String producers = f.method.equals("oneProducer") ? "1 producer" : "2 producers";
      t.put(f.params.get("peer"), producers + ", N=" + f.params.get("workers"), f.score / 1e6);
    }
    s.tables.add(t);
    chart(s, () -> Charts.bars(out, "throughput.png", "Tiny-task throughput (M tasks/s, higher is better)",
        "M tasks/s", t, columnNames(t)));
    return s;
  }

  // 3 -------------------------------------------------------------------------------------------

  Section saturatedNonblocking() throws IOException, RunnerException {
    Section s = new Section("3. Saturated nonblocking mode").say("JMH, " + SaturatedNonblocking.WORKERS
        + " workers, no queue. *Accepted*: one producer offers tasks of about a microsecond"
        + " (Blackhole tokens " + SaturatedNonblocking.TASK_TOKENS + ") as fast as it can; the"
        + " figures are accepted and refused submissions per second (millions). *Rejection*: every"
        + " worker is held busy for the whole trial and each call is refused; time per refusal (ns)"
        + " and bytes allocated per refusal (`-prof gc`, `gc.alloc.rate.norm`). warmpool refuses"
        + " three ways: `tryExecute` (false), `FuncPool.tryInvoke` (false) and `execute`"
        + " (`PoolOverloadedException`); the peers throw `RejectedExecutionException` (TPE with"
        + " `AbortPolicy`, jboss with a zero-length queue, virtual threads on `Semaphore.tryAcquire`"
        + " failure)." + virtualNote());
    List<String> accepting = Peers.availableOf(
        List.of("warmpool-tryExecute", Peers.TPE_HANDOFF, Peers.JBOSS, Peers.VIRTUAL));
    Table a = new Table("saturated", "Saturated: submissions per second (M/s)", "warmpool-tryExecute")
        .column("accepted M/s", Better.HIGHER).column("refused M/s", Better.NEITHER);
    for (JmhRun.Figures f : jmh.run(SaturatedNonblocking.class, "offer",
        Map.of("variant", accepting), false)) {
      a.put(f.params.get("variant"), "accepted M/s", f.secondary.getOrDefault("accepted", Double.NaN) / 1e6);
      a.put(f.params.get("variant"), "refused M/s", f.secondary.getOrDefault("rejected", Double.NaN) / 1e6);
    }
    s.tables.add(a);
    List<String> refusing = Peers.availableOf(List.of("warmpool-tryExecute",
        "warmpool-FuncPool.tryInvoke", "warmpool-execute", Peers.TPE_HANDOFF, Peers.JBOSS, Peers.VIRTUAL));
    Table r = new Table("rejection", "Cost of one rejection", "warmpool-tryExecute")
        .column("ns", Better.LOWER).column("bytes", Better.LOWER);
    for (JmhRun.Figures f : jmh.run(SaturatedNonblocking.class, "reject",
        Map.of("variant", refusing), true)) {
      r.put(f.params.get("variant"), "ns", f.score);
      r.put(f.params.get("variant"), "bytes", f.secondary.getOrDefault("B/op", Double.NaN));
    }
    s.tables.add(r);
    chart(s, () -> Charts.bars(out, "saturated-accepted.png", "Saturated nonblocking: accepted tasks"
        + " (M/s, higher is better)", "M tasks/s", a, List.of("accepted M/s")));
    chart(s, () -> Charts.bars(out, "rejection-cost.png", "Cost of one rejection (ns, lower is better)",
        "ns", r, List.of("ns")));
    return s;
  }

  // 4 -------------------------------------------------------------------------------------------

  Section antsBurst() throws IOException, InterruptedException {
    int capacity = 10_000;
    Section s = new Section("4. The ants burst").say(String.format(Locale.ROOT,
        "One submitter hands %,d tasks that each sleep 10 ms to a pool of capacity %,d (the cached TPE"
        + " has no bound and gets %,d tasks: compare its tasks/s, not its wall time, where the counts"
        + " differ). Wall time from first submission to last completion; peak live threads (the JVM's"
        + " own peak count, JVM threads included; virtual threads count only their carriers); threads"
        + " started; peak RSS (`VmHWM`, the JVM itself included). Each figure is the median of %d"
        + " fresh JVM(s) per peer, heap -Xmx2g. The ideal wall time is tasks / capacity x 10 ms = %.2f s."
        + " Scale: %s profile. ForkJoinPool(10,000) is left out: like the fixed TPE it starts all"
        + " 10,000 threads, and takes over a minute for it on 2 cores.", profile.burstTasks, capacity,
        profile.burstTasksThreadPerTask, profile.burstReps,
        profile.burstTasks / (double) capacity * 0.010, profile.name) + virtualNote());
    ChildProcess runs = new ChildProcess();
    // ForkJoinPool(10,000) is left out: it starts all 10,000 threads like the fixed TPE and takes
    // over a minute to do so on 2 cores, which the quick profile cannot afford.
    List<String> peers = Peers.availableOf(List.of(Peers.WARMPOOL, Peers.TPE_FIXED, Peers.TPE_HANDOFF,
        Peers.JBOSS, Peers.VIRTUAL, Peers.WARMPOOL_VIRTUAL, Peers.TPE_CACHED));
    for (String peer : peers) {
      int tasks = peer.equals(Peers.TPE_CACHED) ? profile.burstTasksThreadPerTask : profile.burstTasks;
      for (int rep = 0; rep < profile.burstReps; rep++) {
        String failed = runs.run(log, HARNESS_JVM, AntsBurst.class,
            List.of(peer, "tasks=" + tasks, "capacity=" + capacity), 300);
        note(s, peer, failed);
      }
    }
    Table t = new Table(AntsBurst.TABLE, "Ants burst", Peers.WARMPOOL)
        .column("wall s", Better.LOWER).column("tasks/s", Better.HIGHER)
        .column("peak threads", Better.LOWER).column("threads started", Better.LOWER)
        .column("peak RSS MiB", Better.LOWER);
    runs.fill(t, AntsBurst.TABLE);
    for (String peer : peers) {
      Double failed = t.get(peer, "failed");
      if (failed != null) {
        t.rows.remove(peer);
        t.notes.put(peer, "failed (see run.log)");
      }
    }
    s.tables.add(t);
    chart(s, () -> Charts.bars(out, "burst-throughput.png", "Ants burst: tasks/s (higher is better)",
        "tasks/s", t, List.of("tasks/s")));
    chart(s, () -> Charts.bars(out, "burst-rss.png", "Ants burst: peak RSS (MiB, lower is better)", "MiB",
        t, List.of("peak RSS MiB")));
    return s;
  }

  // 5 -------------------------------------------------------------------------------------------

  Section idleExpiry() throws IOException, InterruptedException {
    Section s = new Section("5. Expiry across bursts").say(String.format(Locale.ROOT,
        "%d bursts of 256 tasks (each sleeping 20 ms) on at most 64 workers (the cached TPE has no"
        + " bound), %,d ms apart; maxIdle = keep-alive = TTL = 1 s. A sampler counts worker threads"
        + " every 10 ms. *Idle life*: from the burst's last completion until no worker is left (the"
        + " design's bound is maxIdle + 1/16 + timer latency; Reactor's evictor runs every TTL, so up"
        + " to 2x). *Threads started per burst* and *first task after idle* (submit to run of a"
        + " burst's first task) are medians over the bursts after the first. *Housekeeping wake-ups*:"
        + " voluntary context switches (each one a sleep, then a wake-up) of warmpool's shared timer"
        + " thread or Reactor's evictor thread during an"
        + " idle gap (the cached TPE has none: each worker times out on its own).",
        profile.expiryBursts, profile.expiryGapMs));
    ChildProcess runs = new ChildProcess();
    List<String> peers = List.of(Peers.WARMPOOL, Peers.TPE_CACHED, IdleExpiry.BOUNDED_ELASTIC);
    for (String peer : peers) {
      String failed = runs.run(log, HARNESS_JVM, IdleExpiry.class, List.of(peer,
          "bursts=" + profile.expiryBursts, "gapMs=" + profile.expiryGapMs), 300);
      note(s, peer, failed);
    }
    Table t = new Table(IdleExpiry.TABLE, "Expiry", Peers.WARMPOOL)
        .column("idle life s", Better.LOWER).column("idle life / maxIdle", Better.NEITHER)
        .column("threads started per burst", Better.LOWER)
        .column("first task after idle us", Better.LOWER)
        .column("housekeeping wake-ups per gap", Better.LOWER)
        .column("peak workers", Better.NEITHER);
    runs.fill(t, IdleExpiry.TABLE);
    s.tables.add(t);
    chart(s, () -> Charts.lines(out, "expiry-threads.png", "Worker threads over time across bursts",
        "seconds", "worker threads", runs.series.getOrDefault("expiry-threads", Map.of())));
    return s;
  }

  // 6 -------------------------------------------------------------------------------------------

  Section allocation() throws IOException, RunnerException {
    Section s = new Section("6. Allocation per call").say("JMH with `-prof gc`: bytes allocated per"
        + " submission (`gc.alloc.rate.norm`, all threads, so the worker's side counts too) in a closed"
        + " loop with one task outstanding on 2 workers, so that every call takes the hot path to an"
        + " idle worker. The target is 0 B/op for warmpool's `execute`, `tryExecute` and"
        + " `FuncPool.invoke`. The round trip (submit, run, see it done) is the primary score."
        + virtualNote());
    List<String> variants = Peers.availableOf(List.of("warmpool-execute", "warmpool-tryExecute",
        "warmpool-FuncPool.invoke", "warmpool-enqueue", Peers.TPE_HANDOFF, Peers.TPE_FIXED,
        Peers.TPE_CACHED, Peers.FORK_JOIN, Peers.JBOSS, Peers.VIRTUAL));
    Table t = new Table("allocation", "Allocation per call", "warmpool-execute")
        .column("B/op", Better.LOWER).column("round trip ns", Better.LOWER);
    for (JmhRun.Figures f : jmh.run(AllocationPerCall.class, "submitAndRun",
        Map.of("variant", variants), true)) {
      t.put(f.params.get("variant"), "B/op", f.secondary.getOrDefault("B/op", Double.NaN));
      t.put(f.params.get("variant"), "round trip ns", f.score);
    }
    s.tables.add(t);
    chart(s, () -> Charts.bars(out, "allocation.png", "Bytes allocated per submission (lower is better)",
        "B/op", t, List.of("B/op")));
    return s;
  }

  // 7 -------------------------------------------------------------------------------------------

  Section adapters() throws IOException, InterruptedException {
    Section s = new Section("7. Adapters (Reactor, RxJava, Kotlin)").say(String.format(
        Locale.ROOT, "Every scheduler or dispatcher has %d threads (10 x nproc, the size of"
        + " Reactor's default `boundedElastic()`; RxJava's `io()` has no bound). *subscribeOn*: %,d"
        + " `Mono.fromCallable(..).subscribeOn(s)` (RxJava: `Single`) merged by `flatMap(.., 64)`,"
        + " items per second. *Sparse publishOn/observeOn*: one item every 50 us from a producer thread"
        + " through `publishOn(s)` (`observeOn(s)`), emission to `onNext` latency; %,d items."
        + " *Kotlin*: %,d `withContext(d) {}` round trips from 64 coroutines of a `runBlocking` loop."
        + " Medians of %d runs after a warm-up, each scheduler in a fresh JVM.", AdapterShapes.THREADS,
        profile.adapterItems, profile.sparseItems, profile.adapterItems, profile.adapterReps));
    ChildProcess runs = new ChildProcess();
    Map<String, List<String>> schedulers = new LinkedHashMap<>();
    schedulers.put("reactor", List.of(Peers.WARMPOOL, IdleExpiry.BOUNDED_ELASTIC, "from-fixed"));
    schedulers.put("rxjava", List.of(Peers.WARMPOOL, "rx-io", "rx-from-fixed"));
    String sizes = "reps=" + profile.adapterReps;
    for (Map.Entry<String, List<String>> e : schedulers.entrySet()) {
      for (String peer : e.getValue()) {
        note(s, peer, runs.run(log, HARNESS_JVM, AdapterShapes.class, List.of(e.getKey(), peer,
            "items=" + profile.adapterItems, "sparse=" + profile.sparseItems, sizes), 300));
      }
    }
    for (String peer : List.of(Peers.WARMPOOL, "io-limited", "fixed-dispatcher")) {
      note(s, peer, runs.run(log, HARNESS_JVM, CoroutineShapes.class, List.of(peer,
          "items=" + profile.adapterItems, sizes), 300));
    }
    Table reactor = new Table("reactor", "Reactor", Peers.WARMPOOL)
        .column("subscribeOn items/s", Better.HIGHER).column("publishOn p50 us", Better.LOWER)
        .column("publishOn p99 us", Better.LOWER);
    Table rx = new Table("rxjava", "RxJava", Peers.WARMPOOL)
        .column("subscribeOn items/s", Better.HIGHER).column("observeOn p50 us", Better.LOWER)
        .column("observeOn p99 us", Better.LOWER);
    Table kotlin = new Table("kotlin", "Kotlin coroutines", Peers.WARMPOOL)
        .column("withContext round trips/s", Better.HIGHER);
    for (Table t : List.of(reactor, rx, kotlin)) {
      runs.fill(t, t.key);
      s.tables.add(t);
    }
    Table chart = new Table("adapters", "subscribeOn / withContext, items per second", "")
        .column("items/s", Better.HIGHER);
    for (Table t : List.of(reactor, rx, kotlin)) {
      String column = t.columns.get(0).name;
      for (String row : t.rows.keySet()) {
        String label = row.equals(Peers.WARMPOOL) ? "warmpool (" + t.title + ")" : Table.label(row);
        chart.put(label, "items/s", t.get(row, column));
      }
    }
    chart(s, () -> Charts.bars(out, "adapters.png", "Adapters: subscribeOn (Reactor, RxJava) and"
        + " withContext (Kotlin) per second, higher is better", "items/s", chart, List.of("items/s")));
    return s;
  }

  // 8 -------------------------------------------------------------------------------------------

  Section overloadGoodput() throws IOException, InterruptedException {
    Section s = new Section("8. Goodput under overload").say(String.format(Locale.ROOT,
        "Capacity %d, tasks sleeping %d ms (capacity %,.0f tasks/s), each with a caller deadline of"
        + " %d ms on its *start*. An open-loop producer offers 2x capacity evenly spaced, then (phase 2)"
        + " Poisson arrivals at 0.8x, for %d s each, with calls that never block. *Goodput*: tasks that"
        + " started within the deadline and completed, per second, as a fraction of capacity; a late"
        + " task still runs and counts in *completed late*. *Refused*: rejected at the call or expired"
        + " in line; *refusal wait*: how long its caller waited to learn of it. Peers interleaved in one"
        + " JVM (a fresh one for the scenario), %d round(s), medians; every peer drained and shut down"
        + " between trials. The reference row is warmpool with `maxWaitInLine(%d ms)`; its goals:"
        + " goodput >= 0.9 and p99 start delay <= %d ms under overload, <= 1%% refused in phase 2."
        + " *task ms* (how long a 10 ms sleep really took) and the producer's lag behind its schedule"
        + " show how much the machine's load bent the run."
        + " Details: `OverloadGoodput`'s Javadoc and docs/benchmarks/goodput.md.",
        OverloadGoodput.CAPACITY, OverloadGoodput.TASK_MS, OverloadGoodput.CAPACITY_PER_SECOND,
        OverloadGoodput.DEADLINE_MS, profile.goodputSeconds, profile.goodputRounds,
        OverloadGoodput.MAX_WAIT_IN_LINE_MS, 2 * OverloadGoodput.DEADLINE_MS));
    ChildProcess runs = new ChildProcess();
    long timeout = 120 + 30L * profile.goodputSeconds * (profile.goodputRounds + 1);
    note(s, OverloadGoodput.WP_DEADLINE, runs.run(log, HARNESS_JVM, OverloadGoodput.class,
        List.of("seconds=" + profile.goodputSeconds, "rounds=" + profile.goodputRounds), timeout));
    for (OverloadGoodput.Phase phase : OverloadGoodput.Phase.values()) {
      Table t = new Table(phase.table, "Phase " + (phase.ordinal() + 1) + ": " + phase.title,
          OverloadGoodput.WP_DEADLINE)
          .column(OverloadGoodput.GOODPUT, Better.HIGHER)
          .column(OverloadGoodput.LATE, Better.LOWER)
          .column(OverloadGoodput.REFUSED_PCT,
              phase == OverloadGoodput.Phase.POISSON ? Better.LOWER : Better.NEITHER)
          .column(OverloadGoodput.START_P50, Better.LOWER)
          .column(OverloadGoodput.START_P99, Better.LOWER)
          .column(OverloadGoodput.WAIT_P99, Better.NEITHER)
          .column(OverloadGoodput.TASK_TIME, Better.NEITHER)
          .column(OverloadGoodput.LAG, Better.NEITHER);
      runs.fill(t, phase.table);
      s.tables.add(t);
    }
    return s;
  }

  // 9 -------------------------------------------------------------------------------------------

  Section waitsAndMemory() throws IOException, InterruptedException {
    Section s = new Section("9. A nested join, a service, memory per unit").say(String.format(
        Locale.ROOT, "`GoalTable`'s shapes 11, 13 and 14 (issue 33), run in a fresh JVM with peers"
        + " interleaved round by round, median of %d rounds after a warm-up round (the goal tables in"
        + " docs/benchmarks hold the other shapes and every round's value). *Nested join*: capacity 2,"
        + " one call every 2 ms, each a task that queues a subtask on its own pool and waits for it"
        + " with `CompletableFuture.join` (outside the library, so only the 1 ms hold watch frees what"
        + " it holds: Engine, \"Held tasks\"); round trip in microseconds. *Service*: Poisson 2,000"
        + " requests/s, each `Mono.fromCallable(..).subscribeOn(s)` around a 1 ms blocking call,"
        + " capacity 20, latency from the intended arrival. *Memory*: heap after GC per unit"
        + " (`MemoryPerUnit`), 100k idle workers each with a pending 1-hour timer, or 1M tasks waiting"
        + " behind one busy seat.", profile.goalRounds));
    ChildProcess runs = new ChildProcess();
    long timeout = 120 + 40L * (profile.goalRounds + 1);
    note(s, Peers.WARMPOOL, runs.run(log, HARNESS_JVM, GoalTable.class, List.of("only=11,13,14",
        "rounds=" + profile.goalRounds, "results=true"), timeout));
    for (String shape : List.of(GoalTable.NESTED, GoalTable.SERVICE)) {
      Table t = new Table(shape, shape, Peers.WARMPOOL)
          .column("p50 us", Better.LOWER).column("p99 us", Better.LOWER);
      runs.fill(t, shape);
      s.tables.add(t);
    }
    for (String unit : List.of(GoalTable.Memory.REACTOR, GoalTable.Memory.RX,
        GoalTable.Memory.LINE)) {
      Table t = new Table(unit, "Memory: " + unit, Peers.WARMPOOL)
          .column("bytes per unit", Better.LOWER);
      runs.fill(t, unit);
      s.tables.add(t);
    }
    return s;
  }

  // ---------------------------------------------------------------------------------------------

  private void note(Section s, String peer, String failed) {
    if (failed != null) {
      log.line("  " + peer + " failed: " + failed);
      s.say("*" + Table.label(peer) + ": " + failed + ".*");
    }
  }

  /** Adds a chart the section drew; a chart that failed to draw costs the chart, not the run. */
  private void chart(Section s, ChartDrawing drawing) {
    try {
      String file = drawing.draw();
      if (file != null) {
        s.charts.add(file);
      }
    } catch (IOException | RuntimeException e) {
      log.line("  chart failed: " + e);
    }
  }

  private interface ChartDrawing {
    String draw() throws IOException;
  }

  private static List<String> columnNames(Table t) {
    List<String> names = new ArrayList<>();
    for (Table.Column c : t.columns) {
      names.add(c.name);
    }
    return names;
  }
}
