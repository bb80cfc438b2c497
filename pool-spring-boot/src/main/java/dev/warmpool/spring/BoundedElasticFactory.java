package dev.warmpool.spring;

import dev.warmpool.WorkerPool;
import dev.warmpool.reactor.PoolSchedulers;
import java.time.Duration;
import java.util.concurrent.ThreadFactory;
import java.util.function.Supplier;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The {@link Schedulers.Factory} that {@code warmpool.reactor.bounded-elastic} installs: as
 * {@code PoolSchedulers.factory(onNewPool)} does, each bounded-elastic scheduler owns a pool of its
 * own built from Reactor's parameters (thread cap as capacity, queued task cap as max-waiting, TTL as
 * max-idle) and thread factory; in addition each pool gets the context's task decorator
 * ({@link FactoryPools#decorate}), which only a builder can take, and a thread cap above core's
 * maximum capacity is capped to it, so {@code newBoundedElastic(Integer.MAX_VALUE, ..)} works.
 */
final class BoundedElasticFactory implements Schedulers.Factory {
  /** Core's maximum capacity ({@code WorkerPool.Builder#capacity}). */
  static final int MAX_CAPACITY = 131_072;

  /** warmpool's default idle time where Reactor gives none (the thread-per-task variant). */
  private static final Duration NO_TTL_GIVEN = Duration.ofSeconds(60);

  private final FactoryPools pools;

  BoundedElasticFactory(FactoryPools pools) {
    this.pools = pools;
  }

  @Override
  public Scheduler newBoundedElastic(int threadCap, int queuedTaskCap, ThreadFactory threadFactory,
      int ttlSeconds) {
    return owned(threadCap, queuedTaskCap, threadFactory, Duration.ofSeconds(ttlSeconds));
  }

  @Override
  public Scheduler newThreadPerTaskBoundedElastic(int threadCap, int queuedTaskCap,
      ThreadFactory threadFactory) {
    return owned(threadCap, queuedTaskCap, threadFactory, NO_TTL_GIVEN);
  }

  private Scheduler owned(int threadCap, int queuedTaskCap, ThreadFactory threadFactory,
      Duration ttl) {
    WorkerPool pool = WorkerPool.builder()
        .name(threadFactory instanceof Supplier<?> named ? String.valueOf(named.get())
            : "boundedElastic")
        .capacity(Math.min(threadCap, MAX_CAPACITY))
        .maxWaiting(queuedTaskCap)
        .maxIdle(ttl)
        .threadFactory(threadFactory)
        .taskDecorator(pools::decorate)
        .build();
    try {
      pools.accept(pool);
    } catch (RuntimeException | Error e) {
      // the pool has run nothing and started no thread: close it rather than leak it
      pool.shutdownNow();
      throw e;
    }
    return PoolSchedulers.fromOwned(pool);
  }

  @Override
  public String toString() {
    return "warmpool bounded-elastic factory (warmpool.reactor.bounded-elastic)";
  }
}
