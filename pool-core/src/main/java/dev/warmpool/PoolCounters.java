package dev.warmpool;

import java.util.concurrent.atomic.LongAdder;

/**
 * The pool's cumulative counters; {@link #snapshot} pairs them with the gauges into a
 * {@link PoolStats}. Each counter moves exactly when {@link PoolStats} says it does.
 */
final class PoolCounters {
  final LongAdder submitted = new LongAdder();
  final LongAdder completed = new LongAdder();
  final LongAdder failed = new LongAdder();
  final LongAdder rejected = new LongAdder();
  final LongAdder expired = new LongAdder();
  final LongAdder workersStarted = new LongAdder();
  final LongAdder workersExpired = new LongAdder();
  final LongAdder workersStopped = new LongAdder();

  PoolStats snapshot(int capacity, int workers, int busy, int idle, int waiting) {
    return new PoolStats(capacity, workers, busy, idle, waiting, submitted.sum(), completed.sum(),
        failed.sum(), rejected.sum(), expired.sum(), workersStarted.sum(), workersExpired.sum(),
        workersStopped.sum());
  }
}
