package dev.warmpool.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Runs every scenario of the peer comparison and writes {@code report.md} with one table per
 * scenario (each peer's figure and the ratio warmpool/peer), the machine, JDK and date, and PNG
 * charts beside it.
 *
 * <p>Usage: {@code BenchmarkReport [--profile quick|full] [--out dir] [--only 1,2,...]}. The quick
 * profile fits in 10 minutes on 2 cores; the full one takes more forks, iterations, samples and
 * the ants burst at full scale.
 */
public final class BenchmarkReport {

  /** How long and how often each scenario runs. */
  static final class Profile {
    final String name;
    int forks;
    int warmupIterations;
    int measurementIterations;
    int iterationMillis;
    int latencySamples;
    int latencyReps;
    int burstTasks;
    int burstTasksThreadPerTask;
    int burstReps;
    int expiryBursts;
    int expiryGapMs;
    int adapterItems;
    int sparseItems;
    int adapterReps;
    int goodputSeconds;
    int goodputRounds;
    /** Rounds of section 9's goal-table shapes. */
    int goalRounds;

    private Profile(String name) {
      this.name = name;
    }

    static Profile of(String name) {
      Profile p = new Profile(name);
      switch (name) {
        case "quick":
          p.forks = 1;
          p.warmupIterations = 2;
          p.measurementIterations = 5;
          p.iterationMillis = 300;
          p.latencySamples = 20_000;
          p.latencyReps = 3;
          p.burstTasks = 100_000;
          p.burstTasksThreadPerTask = 100_000;
          p.burstReps = 1;
          p.expiryBursts = 5;
          p.expiryGapMs = 2_500;
          p.adapterItems = 200_000;
          p.sparseItems = 10_000;
          p.adapterReps = 3;
          p.goodputSeconds = 5;
          p.goodputRounds = 1;
          p.goalRounds = 3;
          return p;
        case "full":
          p.forks = 3;
          p.warmupIterations = 5;
          p.measurementIterations = 10;
          p.iterationMillis = 1_000;
          p.latencySamples = 100_000;
          p.latencyReps = 5;
          p.burstTasks = 1_000_000;
          p.burstTasksThreadPerTask = 100_000;
          p.burstReps = 3;
          p.expiryBursts = 7;
          p.expiryGapMs = 3_000;
          p.adapterItems = 200_000;
          p.sparseItems = 50_000;
          p.adapterReps = 5;
          p.goodputSeconds = 10;
          p.goodputRounds = 3;
          p.goalRounds = 5;
          return p;
        default:
          throw new IllegalArgumentException("profile must be quick or full, was " + name);
      }
    }

    String describe() {
      return String.format(Locale.ROOT, "JMH %d fork(s), %d warm-up + %d measured iterations of %d ms"
          + " (figure = median iteration); latency %,d samples at gap 0, %d repetitions (median);"
          + " ants burst %,d tasks (%,d for thread-per-task peers), %d fresh JVM(s) per peer;"
          + " expiry %d bursts, %,d ms apart; adapters %,d items, %,d sparse items, %d repetitions;"
          + " goodput %d s phases, %d round(s); goal-table shapes %d rounds",
          forks, warmupIterations, measurementIterations,
          iterationMillis, latencySamples, latencyReps, burstTasks, burstTasksThreadPerTask, burstReps,
          expiryBursts, expiryGapMs, adapterItems, sparseItems, adapterReps, goodputSeconds,
          goodputRounds, goalRounds);
    }
  }

  /** A scenario's part of the report. */
  static final class Section {
    final String title;
    final StringBuilder text = new StringBuilder();
    final List<Table> tables = new ArrayList<>();
    final List<String> charts = new ArrayList<>();

    Section(String title) {
      this.title = title;
    }

    Section say(String paragraph) {
      text.append(paragraph).append("\n\n");
      return this;
    }
  }

  private final Profile profile;
  private final Path out;
  private final Log log;
  private final List<Section> sections = new ArrayList<>();
  private final String machine;
  private final String loadBefore;

  private BenchmarkReport(Profile profile, Path out, Log log) {
    this.profile = profile;
    this.out = out;
    this.log = log;
    this.machine = Machine.describe();
    this.loadBefore = Machine.loadAverage();
  }

  public static void main(String[] args) throws Exception {
    String profile = "quick";
    Path out = Path.of("target", "report");
    String only = "1,2,3,4,5,6,7,8,9";
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--profile": profile = args[++i]; break;
        case "--out": out = Path.of(args[++i]); break;
        case "--only": only = args[++i]; break;
        default: throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    System.setProperty("java.awt.headless", "true");
    Files.createDirectories(out);
    try (Log log = new Log(out.resolve("run.log"))) {
      BenchmarkReport report = new BenchmarkReport(Profile.of(profile), out, log);
      log.line("profile " + profile + " -> " + out.toAbsolutePath().resolve("report.md"));
      log.line(report.machine.replace('\n', ' '));
      List<String> wanted = List.of(only.split(","));
      Scenarios s = new Scenarios(report.profile, out, log);
      if (wanted.contains("1")) report.add(s.handOffLatency());
      if (wanted.contains("2")) report.add(s.tinyTaskThroughput());
      if (wanted.contains("3")) report.add(s.saturatedNonblocking());
      if (wanted.contains("4")) report.add(s.antsBurst());
      if (wanted.contains("5")) report.add(s.idleExpiry());
      if (wanted.contains("6")) report.add(s.allocation());
      if (wanted.contains("7")) report.add(s.adapters());
      if (wanted.contains("8")) report.add(s.overloadGoodput());
      if (wanted.contains("9")) report.add(s.waitsAndMemory());
      log.line("done in " + Math.round(log.seconds()) + " s");
    }
  }

  /** Adds a finished section and rewrites the report, so that a failed run keeps what it had. */
  private void add(Section section) throws IOException {
    sections.add(section);
    String md = markdown();
    Files.writeString(out.resolve("report.md"), md, StandardCharsets.UTF_8);
  }

  private String markdown() {
    StringBuilder sb = new StringBuilder();
    sb.append("# warmpool against its peers\n\n");
    sb.append("Generated by `pool-benchmarks` (`BenchmarkReport`), profile **").append(profile.name)
        .append("**, ").append(ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME))
        .append(", in ").append(Math.round(log.seconds())).append(" s.\n\n");
    sb.append(machine).append('\n');
    sb.append("- load average (1/5/15 min) at start: ").append(loadBefore).append(", at end: ")
        .append(Machine.loadAverage()).append('\n');
    sb.append("- profile: ").append(profile.describe()).append("\n\n");
    sb.append("Every ratio is **warmpool/peer**. For a higher-is-better figure a ratio above 1 means"
        + " warmpool is ahead; for a lower-is-better figure (times, latencies, bytes, threads) a ratio"
        + " below 1 means warmpool is ahead. Each figure is a median of repetitions, but on a 2-core"
        + " machine shared with other work (see the load average above) figures can move far more"
        + " than 10-30 % between runs: compare several runs before concluding.\n\n");
    sb.append("## Summary: warmpool against the best peer\n\n");
    sb.append("| scenario | figure | warmpool | best peer | its figure | warmpool/best | warmpool is |\n");
    sb.append("|---|---|---:|---|---:|---:|---|\n");
    for (Section s : sections) {
      for (Table t : s.tables) {
        for (Table.Column c : t.columns) {
          if (c.better == Table.Better.NEITHER) {
            continue;
          }
          String best = t.bestPeer(c);
          Double w = t.get(t.reference, c.name);
          if (best == null || w == null) {
            continue;
          }
          double r = t.ratio(best, c.name);
          boolean ahead = c.better == Table.Better.HIGHER ? r >= 1 : r <= 1;
          sb.append("| ").append(t.title).append(" | ").append(c.name).append(" | ")
              .append(Table.number(w)).append(" | ").append(Table.label(best)).append(" | ")
              .append(Table.number(t.get(best, c.name))).append(" | ").append(Table.ratioText(r))
              .append(" | ").append(ahead ? "ahead" : "**behind**").append(" |\n");
        }
      }
    }
    sb.append('\n');
    for (Section s : sections) {
      sb.append("## ").append(s.title).append("\n\n").append(s.text);
      for (Table t : s.tables) {
        sb.append("**").append(t.title).append("**\n\n").append(t.markdown()).append('\n');
      }
      for (String chart : s.charts) {
        sb.append("![").append(chart).append("](").append(chart).append(")\n\n");
      }
    }
    return sb.toString();
  }

  /** The machine as the report states it. */
  static final class Machine {
    private Machine() {}

    static String describe() {
      Runtime rt = Runtime.getRuntime();
      Map<String, String> m = new LinkedHashMap<>();
      m.put("CPUs (nproc)", String.valueOf(rt.availableProcessors()));
      m.put("CPU model", procField("/proc/cpuinfo", "model name"));
      m.put("memory", procField("/proc/meminfo", "MemTotal"));
      m.put("JDK", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version")
          + " (" + System.getProperty("java.vendor") + ")");
      m.put("OS", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
          + System.getProperty("os.arch"));
      m.put("warmpool", gitRevision());
      StringBuilder sb = new StringBuilder();
      m.forEach((k, v) -> sb.append("- ").append(k).append(": ").append(v).append('\n'));
      return sb.toString();
    }

    /** The commit the benchmarked code was built from, and whether the core had local changes. */
    static String gitRevision() {
      String head = git("rev-parse", "--short", "HEAD");
      if (head == null) {
        return "n/a (not a git work tree)";
      }
      String dirty = git("status", "--porcelain", "--", "../pool-core/src/main");
      return "commit " + head + (dirty == null || dirty.isEmpty() ? ""
          : " with uncommitted changes in pool-core/src/main");
    }

    private static String git(String... args) {
      try {
        List<String> cmd = new ArrayList<>(List.of("git"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        return p.waitFor() == 0 ? out : null;
      } catch (IOException | InterruptedException | RuntimeException unavailable) {
        return null;
      }
    }

    static String loadAverage() {
      try {
        String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
        return f[0] + " / " + f[1] + " / " + f[2];
      } catch (IOException | RuntimeException unavailable) {
        return "n/a";
      }
    }

    private static String procField(String file, String field) {
      try {
        for (String line : Files.readAllLines(Path.of(file))) {
          if (line.startsWith(field)) {
            return line.substring(line.indexOf(':') + 1).trim();
          }
        }
      } catch (IOException | RuntimeException unavailable) {
        // not Linux
      }
      return "n/a";
    }
  }
}
