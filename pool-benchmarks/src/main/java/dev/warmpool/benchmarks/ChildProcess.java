package dev.warmpool.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs a harness main in a fresh JVM (same JVM binary and class path as this one) and collects the
 * {@code @result} and {@code @series} lines it prints (see {@link Harness}); other lines go to the
 * log.
 */
final class ChildProcess {
  /** Figures by table key. */
  final Map<String, List<String[]>> results = new LinkedHashMap<>();
  /** Series points by chart name, then peer. */
  final Map<String, Map<String, List<double[]>>> series = new LinkedHashMap<>();

  /**
   * Runs {@code main} with {@code args}; returns null on success, or why it failed.
   */
  String run(Log log, List<String> jvmArgs, Class<?> main, List<String> args, long timeoutSeconds)
      throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvmArgs);
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(main.getName());
    cmd.addAll(args);
    log.line("$ " + main.getSimpleName() + " " + String.join(" ", args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(
          new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          accept(log, line);
        }
      } catch (IOException e) {
        log.line("reading child output failed: " + e);
      }
    });
    reader.start();
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      reader.join();
      return "timed out after " + timeoutSeconds + " s";
    }
    reader.join();
    return p.exitValue() == 0 ? null : "exit code " + p.exitValue();
  }

  private synchronized void accept(Log log, String line) {
    String[] f = line.split("\t");
    if (f[0].equals("@result") && f.length == 5) {
      results.computeIfAbsent(f[1], k -> new ArrayList<>()).add(new String[] {f[2], f[3], f[4]});
    } else if (f[0].equals("@series") && f.length == 5) {
      series.computeIfAbsent(f[1], k -> new LinkedHashMap<>())
          .computeIfAbsent(f[2], k -> new ArrayList<>())
          .add(new double[] {Double.parseDouble(f[3]), Double.parseDouble(f[4])});
    } else {
      log.detail(line);
    }
  }

  /**
   * Copies the figures of {@code tableKey} into the table; a figure reported by several runs (one
   * peer repeated in fresh JVMs) becomes their median.
   */
  void fill(Table table, String tableKey) {
    Map<String, Map<String, List<Double>>> byPeer = new LinkedHashMap<>();
    for (String[] r : results.getOrDefault(tableKey, List.of())) {
      byPeer.computeIfAbsent(r[1], k -> new LinkedHashMap<>())
          .computeIfAbsent(r[0], k -> new ArrayList<>()).add(Double.parseDouble(r[2]));
    }
    byPeer.forEach((peer, cases) -> cases.forEach((kase, values) -> table.put(peer, kase,
        Harness.median(values.stream().mapToDouble(Double::doubleValue).toArray()))));
  }
}
