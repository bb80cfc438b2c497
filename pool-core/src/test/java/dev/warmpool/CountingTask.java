package dev.warmpool;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test's task that counts each way it can end: it ran, heard its expiry (with the cause and the
 * thread it heard it on), or heard a cancel. Tests that need more (a label, a latch) extend it.
 */
class CountingTask implements CancellationAware {
  final AtomicInteger ran = new AtomicInteger();
  final AtomicInteger expired = new AtomicInteger();
  final AtomicInteger cancels = new AtomicInteger();
  volatile Thread heardOn;
  volatile PoolOverloadedException cause;

  @Override
  public void run() {
    ran.incrementAndGet();
  }

  @Override
  public void onCancel() {
    cancels.incrementAndGet();
  }

  @Override
  public void onExpired(PoolOverloadedException c) {
    heardOn = Thread.currentThread();
    cause = c;
    expired.incrementAndGet();
  }

  /** How many times it ended, all ways together: 1 for a task that ended once. */
  int ways() {
    return ran.get() + expired.get() + cancels.get();
  }
}
