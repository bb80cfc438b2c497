package dev.warmpool.micrometer;

import dev.warmpool.PoolStats;
import dev.warmpool.WorkerPool;
import java.util.function.LongSupplier;

/**
 * Hands every meter of one binding the same {@link PoolStats} snapshot for a short window, so that
 * a scrape, which reads the meters one after another within microseconds, takes one snapshot
 * instead of one per meter and sees figures that belong together.
 *
 * <p>Holds no reference to the pool: the meters hold it weakly (Micrometer's rule), and a sampler
 * that kept it would keep a dropped pool alive through the registry.
 */
final class StatsSampler {
  /** Shorter than any sensible scrape interval, longer than one scrape of a dozen meters. */
  static final long WINDOW_NANOS = 100_000_000L;

  private final LongSupplier nanoClock;
  private PoolStats last;
  private long takenAt;

  StatsSampler(LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
  }

  /**
   * The snapshot taken within the window, or a new one. Synchronized because two registries (or a
   * registry and a user) may read at once; {@code pool.stats()} itself never blocks the pool.
   */
  synchronized PoolStats read(WorkerPool pool) {
    long now = nanoClock.getAsLong();
    if (last == null || now - takenAt >= WINDOW_NANOS) {
      last = pool.stats();
      takenAt = now;
    }
    return last;
  }
}
