package dev.warmpool.benchmarks;

import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * One producer's batch of tiny tasks: the same instance is submitted {@code n} times, each run counts
 * down, and the last run wakes the producer. Submitting allocates nothing on the producer's side, so
 * what a benchmark measures is the executor.
 */
final class Batch implements Runnable {
  private final AtomicInteger pending = new AtomicInteger();
  private volatile Thread owner;

  @Override
  public void run() {
    if (pending.decrementAndGet() == 0) {
      LockSupport.unpark(owner);
    }
  }

  /** Submits this task {@code n} times and parks until every run has finished. */
  void submitAndAwait(Executor executor, int n) {
    owner = Thread.currentThread();
    pending.set(n);
    for (int i = 0; i < n; i++) {
      executor.execute(this);
    }
    while (pending.get() != 0) {
      LockSupport.park(this); // a stale permit from the previous batch only costs one more check
    }
  }
}
