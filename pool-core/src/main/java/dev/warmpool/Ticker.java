package dev.warmpool;

/**
 * A source of monotonic nanosecond time, used to measure how long workers have been idle. The
 * default is {@link System#nanoTime()}; tests inject a manual ticker to drive expiry without
 * sleeping (see {@link WorkerPool.Builder#ticker(Ticker)}).
 */
@FunctionalInterface
public interface Ticker {
  /** Returns the current time in nanoseconds; successive reads never decrease. */
  long read();

  /** The ticker backed by {@link System#nanoTime()}. */
  static Ticker system() {
    return System::nanoTime;
  }
}
