package dev.warmpool.benchmarks;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Progress on the console, and everything (harness chatter too) in {@code run.log}. */
final class Log implements AutoCloseable {
  private final PrintWriter file;
  private final long start = System.nanoTime();

  Log(Path path) throws IOException {
    file = new PrintWriter(Files.newBufferedWriter(path, StandardCharsets.UTF_8), true);
  }

  /** A progress line, on the console and in the log. */
  synchronized void line(String s) {
    String stamped = String.format("[%5.0f s] %s", seconds(), s);
    System.out.println(stamped);
    file.println(stamped);
  }

  /** A detail line, in the log only. */
  synchronized void detail(String s) {
    file.println("    " + s);
  }

  double seconds() {
    return (System.nanoTime() - start) / 1e9;
  }

  @Override
  public void close() {
    file.close();
  }
}
