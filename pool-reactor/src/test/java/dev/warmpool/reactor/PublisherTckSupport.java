package dev.warmpool.reactor;

import dev.warmpool.WorkerPool;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterClass;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;

/**
 * Contract 6: the Reactive Streams TCK {@link PublisherVerification} (TestNG, run by the JUnit
 * Platform's TestNG engine in the same surefire run) for a publisher that crosses the pool.
 */
abstract class PublisherTckSupport extends PublisherVerification<Integer> {
  /** Generous for a loaded 2-core machine; the no-signal wait bounds the suite's run time. */
  private static final long TIMEOUT_MILLIS = 2_000;
  private static final long NO_SIGNALS_TIMEOUT_MILLIS = 100;

  final WorkerPool pool = WorkerPool.builder().name("tck").capacity(4).build();
  final Scheduler scheduler = PoolSchedulers.from(pool);

  PublisherTckSupport() {
    super(new TestEnvironment(TIMEOUT_MILLIS, NO_SIGNALS_TIMEOUT_MILLIS));
  }

  /** Applies the operator under test. */
  abstract Flux<Integer> crossThePool(Flux<Integer> source);

  @Override
  public Publisher<Integer> createPublisher(long elements) {
    return crossThePool(Flux.range(1, (int) elements).hide());
  }

  @Override
  public Publisher<Integer> createFailedPublisher() {
    return crossThePool(Flux.error(new IllegalStateException("failed publisher")));
  }

  @Override
  public long maxElementsFromPublisher() {
    return Integer.MAX_VALUE;
  }

  @AfterClass
  public void closePool() {
    scheduler.dispose();
    pool.shutdownNow();
    pool.close();
  }
}
