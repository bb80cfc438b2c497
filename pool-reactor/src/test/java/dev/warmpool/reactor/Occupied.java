package dev.warmpool.reactor;

import dev.warmpool.WorkerPool;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Keeps every worker of a pool busy until closed, so that tests can fill a pool deterministically. */
final class Occupied implements AutoCloseable {
  private final CountDownLatch release = new CountDownLatch(1);

  private Occupied(WorkerPool pool) throws InterruptedException {
    int n = pool.capacity();
    CountDownLatch started = new CountDownLatch(n);
    for (int i = 0; i < n; i++) {
      pool.execute(() -> {
        started.countDown();
        awaitQuietly(release);
      });
    }
    if (!started.await(10, TimeUnit.SECONDS)) {
      throw new AssertionError("pool workers did not start: " + pool.stats());
    }
  }

  /** Occupies all {@code capacity} workers of the pool; returns once each of them runs a blocker. */
  static Occupied all(WorkerPool pool) throws InterruptedException {
    return new Occupied(pool);
  }

  @Override
  public void close() {
    release.countDown();
  }

  static void awaitQuietly(CountDownLatch latch) {
    boolean interrupted = false;
    for (;;) {
      try {
        latch.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
