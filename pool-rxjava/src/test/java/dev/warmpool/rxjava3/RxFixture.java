package dev.warmpool.rxjava3;

import static org.awaitility.Awaitility.await;

import org.awaitility.Awaitility;

import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.plugins.RxJavaPlugins;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What the adapter tests share, as a JUnit extension: before each test it captures {@code
 * RxJavaPlugins.onError} into {@link #errors}; after each test it releases every hold, resets the
 * plugins and stops every pool it built, so a failing test leaves nothing behind.
 */
final class RxFixture implements BeforeEachCallback, AfterEachCallback {
  private static final AtomicInteger POOL_IDS = new AtomicInteger();

  /** Everything that reached {@code RxJavaPlugins.onError} during the test. */
  final List<Throwable> errors = new CopyOnWriteArrayList<>();
  private final List<WorkerPool> pools = new CopyOnWriteArrayList<>();
  private final List<CountDownLatch> holds = new CopyOnWriteArrayList<>();

  @Override
  public void beforeEach(ExtensionContext context) {
    RxJavaPlugins.reset();
    RxJavaPlugins.setErrorHandler(errors::add);
    Awaitility.setDefaultPollInterval(Duration.ofMillis(5));
  }

  @Override
  public void afterEach(ExtensionContext context) throws InterruptedException {
    holds.forEach(CountDownLatch::countDown);
    RxJavaPlugins.reset();
    for (WorkerPool p : pools) {
      p.shutdownNow();
    }
    for (WorkerPool p : pools) {
      p.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  /** A pool with a unique name, stopped after the test. */
  WorkerPool pool(UnaryOperator<WorkerPool.Builder> config) {
    WorkerPool p = config.apply(WorkerPool.builder().name("rx" + POOL_IDS.incrementAndGet()))
        .build();
    pools.add(p);
    return p;
  }

  /** A nonblocking pool of the given capacity. */
  WorkerPool nonblocking(int capacity) {
    return pool(b -> b.capacity(capacity).nonblocking(true));
  }

  /**
   * Makes every worker of the pool busy until the returned latch is counted down (or the test ends):
   * submits {@code capacity} tasks that wait on it and waits until they all run.
   */
  CountDownLatch saturate(WorkerPool pool) {
    CountDownLatch hold = hold();
    int n = pool.capacity();
    List<CountDownLatch> started = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      CountDownLatch s = new CountDownLatch(1);
      started.add(s);
      pool.execute(() -> {
        s.countDown();
        awaitQuietly(hold);
      });
    }
    await().until(() -> started.stream().allMatch(l -> l.getCount() == 0)
        && pool.stats().busy() == n);
    return hold;
  }

  /** Releases every hold made so far. */
  void holdsRelease() {
    holds.forEach(CountDownLatch::countDown);
  }

  /** A latch that is released at the latest when the test ends. */
  CountDownLatch hold() {
    CountDownLatch l = new CountDownLatch(1);
    holds.add(l);
    return l;
  }

  /** Waits until the pool runs nothing and nothing waits in its line. */
  static void awaitQuiet(WorkerPool pool) {
    await().until(() -> pool.stats().busy() == 0 && pool.stats().waiting() == 0);
  }

  static void awaitQuietly(CountDownLatch latch) {
    try {
      if (!latch.await(30, TimeUnit.SECONDS)) {
        throw new AssertionError("hold not released within 30 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static Duration millis(long ms) {
    return Duration.ofMillis(ms);
  }
}
