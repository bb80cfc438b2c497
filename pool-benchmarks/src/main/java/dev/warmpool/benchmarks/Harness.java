package dev.warmpool.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * What the timed harness mains share: their output protocol, read by {@link ChildProcess}, and
 * readings of the process from {@code /proc} and the thread MXBean.
 *
 * <p>A harness main runs one peer in a fresh JVM, so that peak threads and peak RSS are that peer's
 * alone, and prints one line per figure: {@code @result <table> <case> <peer> <value>} or
 * {@code @series <chart> <peer> <x> <y>}, tab-separated. Anything else it prints is progress.
 */
final class Harness {
  static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private Harness() {}

  static void result(String table, String kase, String peer, double value) {
    System.out.println(String.join("\t", "@result", table, kase, peer, format(value)));
  }

  static void series(String chart, String peer, double x, double y) {
    System.out.println(String.join("\t", "@series", chart, peer, format(x), format(y)));
  }

  private static String format(double v) {
    return String.format(Locale.ROOT, "%.6g", v);
  }

  /** {@code key=value} arguments after the peer id. */
  static Map<String, String> options(String[] args, int from) {
    Map<String, String> out = new HashMap<>();
    for (String a : Arrays.copyOfRange(args, from, args.length)) {
      int eq = a.indexOf('=');
      if (eq < 0) {
        throw new IllegalArgumentException("expected key=value, was " + a);
      }
      out.put(a.substring(0, eq), a.substring(eq + 1));
    }
    return out;
  }

  static int intOption(Map<String, String> o, String key, int dflt) {
    String v = o.get(key);
    return v == null ? dflt : Integer.parseInt(v);
  }

  /** A field of {@code /proc/self/status} in kB (VmHWM, VmRSS), or -1 where there is no /proc. */
  static long statusKb(String field) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith(field + ":")) {
          return Long.parseLong(line.substring(field.length() + 1).replace("kB", "").trim());
        }
      }
    } catch (IOException | RuntimeException unavailable) {
      // not Linux
    }
    return -1;
  }

  /**
   * Voluntary context switches, by thread id, of the threads whose OS name starts with
   * {@code prefix} (Linux truncates thread names to 15 characters). A thread switches out
   * voluntarily when it blocks, so each one is followed by a wake-up; preemptions on a busy machine
   * are not counted.
   */
  static Map<String, Long> wakeUps(String prefix) {
    Map<String, Long> out = new HashMap<>();
    try (var tasks = Files.list(Path.of("/proc/self/task"))) {
      for (Path task : (Iterable<Path>) tasks::iterator) {
        try {
          if (!Files.readString(task.resolve("comm")).trim().startsWith(prefix)) {
            continue;
          }
          for (String line : Files.readAllLines(task.resolve("status"))) {
            if (line.startsWith("voluntary_ctxt_switches:")) {
              out.put(task.getFileName().toString(),
                  Long.parseLong(line.substring(line.indexOf(':') + 1).trim()));
            }
          }
        } catch (IOException | RuntimeException exited) {
          // the thread exited while we looked
        }
      }
    } catch (IOException | RuntimeException unavailable) {
      // not Linux
    }
    return out;
  }

  /** Live threads whose Java name starts with {@code prefix}. */
  static int threadsNamed(String prefix) {
    int n = 0;
    for (var info : THREADS.getThreadInfo(THREADS.getAllThreadIds(), 0)) {
      if (info != null && info.getThreadName().startsWith(prefix)) {
        n++;
      }
    }
    return n;
  }

  static void spinNanos(long nanos) {
    long end = System.nanoTime() + nanos;
    while (System.nanoTime() < end) {
      Thread.onSpinWait();
    }
  }

  static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    int n = v.length;
    return n == 0 ? Double.NaN : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
}
