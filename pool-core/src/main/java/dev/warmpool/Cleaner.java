package dev.warmpool;

import java.util.concurrent.atomic.LongAdder;

/**
 * Retires workers idle longer than {@code maxIdle}: a {@link SharedTimer} task that is scheduled
 * only while the pool has workers.
 *
 * <p>The idle stack is ordered by last use, so the stale workers are its bottom; one run removes
 * them in a batch (binary search) and gives their slots back at once, before their threads even
 * wake, so an idle pool never rejects because a worker is expiring. Each run reschedules itself at
 * the oldest remaining worker's expiry, but no sooner than {@code maxIdle/16} later, so a wind-down
 * costs at most 16 runs per {@code maxIdle} and a worker is retired within
 * {@code maxIdle + maxIdle/16} plus timer latency. Runs on the timer thread: it only unparks.
 */
final class Cleaner extends SharedTimer.Task {
  /** What the cleaner looks at and acts on: the engine's idle workers. */
  interface Workers {
    /** Whether the cleaner should be scheduled: the pool runs and has workers. */
    boolean wantsCleaner();

    /** The last-use time of the oldest idle worker, or {@code Long.MAX_VALUE} if none is idle. */
    long oldestLastUsed();

    /** Now, on the pool's ticker. */
    long now();

    /** Retires the idle workers last used at or before {@code cutoff}. */
    void retireIdleSince(long cutoff);
  }

  private final Workers workers;
  private final long maxIdleNanos;
  /** Accessed only under synchronized(this). */
  private boolean scheduled;
  /** Runs so far; for tests that check the cleaner stays quiet. */
  final LongAdder runs = new LongAdder();

  private final SharedTimer timer;

  Cleaner(Workers workers, long maxIdleNanos, SharedTimer timer) {
    this.workers = workers;
    this.maxIdleNanos = maxIdleNanos;
    this.timer = timer;
  }

  @Override
  void fire() {
    synchronized (this) {
      scheduled = false;
    }
    runs.increment();
    workers.retireIdleSince(workers.now() - maxIdleNanos);
    update();
  }

  /**
   * Makes the schedule match the pool: scheduled iff it is running and has workers. Every decision
   * re-reads the pool under this monitor, so the last caller's view wins.
   */
  void update() {
    synchronized (this) {
      boolean wanted = workers.wantsCleaner();
      if (wanted && !scheduled) {
        long oldest = workers.oldestLastUsed();
        long delay = oldest == Long.MAX_VALUE
            ? maxIdleNanos : oldest + maxIdleNanos - workers.now();
        try {
          timer.schedule(this, System.nanoTime() + Math.max(delay, maxIdleNanos / 16));
        } catch (Throwable noTimerThread) {
          // The timer could not start its thread (no native thread left). Our caller has just
          // started a worker for an accepted task and must not report a failure: the workers run
          // on, and the next update (the next start, or shutdown) schedules the cleaner again.
          return;
        }
        scheduled = true; // only once the timer holds it
      } else if (!wanted && scheduled) {
        scheduled = false;
        timer.cancel(this);
      }
    }
  }
}
