package dev.warmpool.benchmarks;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs JMH benchmarks in-process (each in its own forked JVM, as JMH does) and reduces every
 * benchmark to medians over all measurement iterations of all forks: on a noisy machine the median
 * iteration is a steadier figure than the mean.
 */
final class JmhRun {
  /** A benchmark's medians: the primary score and the named secondary figures. */
  static final class Figures {
    final String method;
    final Map<String, String> params;
    final double score;
    final Map<String, Double> secondary;

    Figures(String method, Map<String, String> params, double score, Map<String, Double> secondary) {
      this.method = method;
      this.params = params;
      this.score = score;
      this.secondary = secondary;
    }
  }

  private final BenchmarkReport.Profile profile;
  private final Path logDir;
  private final Log log;

  JmhRun(BenchmarkReport.Profile profile, Path logDir, Log log) {
    this.profile = profile;
    this.logDir = logDir;
    this.log = log;
  }

  /**
   * Runs the named methods of {@code benchmark} over every combination of {@code params}.
   *
   * @param gc whether to add {@code -prof gc} (its {@code gc.alloc.rate.norm} becomes the secondary
   *     figure {@code B/op})
   */
  List<Figures> run(Class<?> benchmark, String methods, Map<String, List<String>> params, boolean gc)
      throws RunnerException {
    String name = benchmark.getSimpleName() + "." + methods.replace('|', '+');
    ChainedOptionsBuilder o = new OptionsBuilder()
        .include(Pattern.quote(benchmark.getName()) + "\\.(" + methods + ")$")
        .forks(profile.forks)
        .warmupIterations(profile.warmupIterations)
        .warmupTime(TimeValue.milliseconds(profile.iterationMillis))
        .measurementIterations(profile.measurementIterations)
        .measurementTime(TimeValue.milliseconds(profile.iterationMillis))
        .jvmArgs("-Xms1g", "-Xmx1g")
        .shouldFailOnError(false)
        .verbosity(VerboseMode.NORMAL)
        .output(logDir.resolve("jmh-" + name + ".log").toString());
    for (Map.Entry<String, List<String>> p : params.entrySet()) {
      o.param(p.getKey(), p.getValue().toArray(new String[0]));
    }
    if (gc) {
      o.addProfiler(GCProfiler.class);
    }
    log.line("JMH " + name + " " + params + (gc ? " -prof gc" : ""));
    Collection<RunResult> results = new Runner(o.build()).run();
    List<Figures> out = new ArrayList<>();
    for (RunResult r : results) {
      List<Double> scores = new ArrayList<>();
      Map<String, List<Double>> secondary = new TreeMap<>();
      for (BenchmarkResult b : r.getBenchmarkResults()) {
        for (IterationResult i : b.getIterationResults()) {
          scores.add(i.getPrimaryResult().getScore());
          for (String label : i.getSecondaryResults().keySet()) {
            String key = label.endsWith("gc.alloc.rate.norm") ? "B/op" : label;
            secondary.computeIfAbsent(key, k -> new ArrayList<>())
                .add(i.getSecondaryResults().get(label).getScore());
          }
        }
      }
      Map<String, Double> medians = new TreeMap<>();
      secondary.forEach((k, v) -> medians.put(k, median(v)));
      Map<String, String> ps = new TreeMap<>();
      for (String k : r.getParams().getParamsKeys()) {
        ps.put(k, r.getParams().getParam(k));
      }
      String method = r.getParams().getBenchmark();
      out.add(new Figures(method.substring(method.lastIndexOf('.') + 1), ps, median(scores), medians));
    }
    log.line("  " + out.size() + " results");
    return out;
  }

  private static double median(List<Double> v) {
    return Harness.median(v.stream().mapToDouble(Double::doubleValue).toArray());
  }
}
