package dev.warmpool.rxjava3;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.core.Single;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Issue 14 for RxJava: {@code PoolSchedulers.from(subpool)} works as on a pool, within both bounds. */
class SubpoolSchedulerTest {
  private WorkerPool pool;

  @AfterEach
  void close() {
    if (pool != null) {
      pool.shutdownNow();
      pool.close();
    }
  }

  @Test
  void observeOnAndSubscribeOnASubpoolStayWithinItsCapacityOnTheParentsThreads() {
    pool = WorkerPool.builder().name("rx").capacity(4).build();
    WorkerPool db = pool.newSubpool("db", 2);
    Scheduler s = PoolSchedulers.from(db);
    AtomicInteger now = new AtomicInteger();
    AtomicInteger max = new AtomicInteger();
    long count = Flowable.range(0, 200)
        .flatMapSingle(i -> Single.fromCallable(() -> {
          max.accumulateAndGet(now.incrementAndGet(), Math::max);
          assertThat(Thread.currentThread().getName()).startsWith("rx-");
          Thread.sleep(0, 100_000);
          now.decrementAndGet();
          return i;
        }).subscribeOn(s), false, 16)
        .observeOn(s)
        .count()
        .blockingGet();
    assertThat(count).isEqualTo(200);
    assertThat(max.get()).isBetween(1, 2);
    assertThat(db.stats().workersStarted()).isZero();
  }

  @Test
  void aSaturatedNonblockingSubpoolSignalsItsRejectionWhileAnotherAccepts() throws Exception {
    pool = WorkerPool.builder().name("rx-nb").capacity(4).nonblocking(true).build();
    WorkerPool db = pool.newSubpool("db", 1);
    WorkerPool api = pool.newSubpool("api", 2);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch started = new CountDownLatch(1);
    db.execute(() -> {
      started.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    try {
      // the conventional scheduler reports a rejection to RxJavaPlugins.onError, as RxJava's own;
      // PoolTransformers deliver it to the subscriber
      Single.fromCallable(() -> 1).compose(PoolTransformers.subscribeOn(db)).test()
          .awaitDone(10, TimeUnit.SECONDS)
          .assertError(e -> e instanceof PoolOverloadedException
              && e.getMessage().contains("subpool \"db\""));
      Single.fromCallable(() -> 2).subscribeOn(PoolSchedulers.from(api)).test()
          .awaitDone(10, TimeUnit.SECONDS).assertValue(2);
    } finally {
      release.countDown();
    }
    assertThat(db.stats().rejected()).isEqualTo(1);
  }
}
