package dev.warmpool.samples;

import dev.warmpool.WorkerPool;
import dev.warmpool.reactor.PoolSchedulers;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Reactor on a warmpool: a {@code flatMap} over a blocking call moved onto the pool with
 * {@code publishOn(poolScheduler)}, and what a subscriber sees when a nonblocking pool is full.
 */
public final class ReactorSample {
  private ReactorSample() {}

  /** Runs the sample and prints what happens; returns when every pool it made is closed. */
  public static void run() throws Exception {
    System.out.println("== Reactor ==");
    try (WorkerPool pool = WorkerPool.builder().name("reactor").capacity(4).build()) {
      Scheduler scheduler = PoolSchedulers.from(pool);
      List<String> lines = Flux.range(1, 8)
          .flatMap(i -> Mono.just(i)
              .publishOn(scheduler) // the blocking call below runs on a pool worker
              .map(ReactorSample::lookup), 4)
          .collectList()
          .block(Duration.ofSeconds(10));
      lines.forEach(line -> System.out.println("  " + line));
      System.out.println("  " + scheduler + " " + pool.stats());
      scheduler.dispose(); // stops this scheduler only; the pool is closed by try-with-resources
    }

    // A nonblocking pool whose only worker is busy rejects at once: the scheduler throws, and
    // Reactor hands that to the subscriber as its onError (wrapped; the cause is the pool's).
    try (WorkerPool tiny = WorkerPool.builder().name("tiny").capacity(1).nonblocking(true).build()) {
      CountDownLatch release = new CountDownLatch(1);
      tiny.execute(() -> awaitQuietly(release));
      Mono.fromCallable(() -> lookup(9))
          .subscribeOn(PoolSchedulers.from(tiny))
          .subscribe(
              v -> System.out.println("  onNext: " + v),
              e -> System.out.println("  onError: " + e
                  + (e.getCause() != null ? "\n    caused by " + e.getCause() : "")));
      release.countDown();
    }
  }

  /** Stands for a blocking call (JDBC, HTTP, file IO). */
  private static String lookup(int id) {
    try {
      TimeUnit.MILLISECONDS.sleep(20);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
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
