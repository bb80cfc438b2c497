package dev.warmpool.samples;

import dev.warmpool.WorkerPool;
import dev.warmpool.rxjava3.PoolSchedulers;
import dev.warmpool.rxjava3.PoolTransformers;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.core.Single;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * RxJava 3 on a warmpool: blocking calls moved onto the pool with {@code subscribeOn}, results
 * delivered on it with {@code observeOn}, and what a subscriber sees when a nonblocking pool is full.
 */
public final class RxJavaSample {
  private RxJavaSample() {}

  /** Runs the sample and prints what happens; returns when every pool it made is closed. */
  public static void run() throws Exception {
    System.out.println("== RxJava 3 ==");
    try (WorkerPool pool = WorkerPool.builder().name("rx").capacity(4).build()) {
      Scheduler scheduler = PoolSchedulers.from(pool);
      List<String> lines = Flowable.range(1, 4)
          .flatMap(i -> Flowable.fromCallable(() -> lookup(i)).subscribeOn(scheduler), 4)
          .observeOn(scheduler)
          .map(s -> s + ", observed on " + Thread.currentThread().getName())
          .toList()
          .blockingGet();
      lines.forEach(line -> System.out.println("  " + line));
      System.out.println("  " + pool.stats());
    }

    // A nonblocking pool whose only worker is busy rejects at once. A plain observeOn/subscribeOn
    // could only report that to RxJavaPlugins.onError; PoolTransformers give it to the subscriber.
    try (WorkerPool tiny = WorkerPool.builder().name("tiny").capacity(1).nonblocking(true).build()) {
      CountDownLatch release = new CountDownLatch(1);
      tiny.execute(() -> awaitQuietly(release));
      Single.fromCallable(() -> lookup(5))
          .compose(PoolTransformers.<String>subscribeOn(tiny))
          .subscribe(
              v -> System.out.println("  onSuccess: " + v),
              e -> System.out.println("  onError: " + e));
      release.countDown();
    }
  }

  /** Stands for a blocking call (JDBC, HTTP, file IO). */
  private static String lookup(int id) throws InterruptedException {
    TimeUnit.MILLISECONDS.sleep(20);
    return "item " + id + " looked up on " + Thread.currentThread().getName();
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
