package dev.warmpool;

import java.util.concurrent.TimeUnit;

/**
 * How a pool's line sheds and orders work beyond its deadlines, as configured: controlled delay
 * ({@link WorkerPool.Builder#controlledDelay}; both 0: off) and adaptive LIFO
 * ({@link WorkerPool.Builder#adaptiveLifo}). A subpool takes its parent's.
 */
record LinePolicy(long targetNanos, long intervalNanos, boolean lifo) {
  /** Neither: a FIFO line that keeps no time. */
  static final LinePolicy NONE = new LinePolicy(0L, 0L, false);

  /** How long a line must stand before adaptive LIFO serves newest first, without controlled delay. */
  static final long LIFO_STANDING_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
}
