package dev.warmpool.reactor;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.concurrent.ThreadFactory;
import java.util.function.Supplier;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The {@link Schedulers.Factory} behind {@link PoolSchedulers#factory()}: every bounded-elastic
 * scheduler Reactor creates becomes a warmpool scheduler that owns a pool of its own. Reactor's
 * parameters map one to one: {@code threadCap} to the capacity, {@code queuedTaskCap} to
 * {@code maxWaiting}, the TTL to {@code maxIdle}, and Reactor's thread factory (its names, daemon
 * flag, and virtual threads for the thread-per-task variant) to the pool's. The other scheduler
 * kinds keep Reactor's defaults.
 */
final class PoolSchedulerFactory implements Schedulers.Factory {
  /** warmpool's default idle time where Reactor gives none (the thread-per-task variant). */
  private static final Duration NO_TTL_GIVEN = Duration.ofSeconds(60);

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

  private static Scheduler owned(int threadCap, int queuedTaskCap, ThreadFactory threadFactory,
      Duration ttl) {
    return PoolSchedulers.fromOwned(WorkerPool.builder()
        .name(nameOf(threadFactory))
        .capacity(threadCap)
        .maxWaiting(queuedTaskCap)
        .maxIdle(ttl)
        .threadFactory(threadFactory)
        .build());
  }

  /** Reactor's thread factories supply their name prefix ("boundedElastic" or the user's). */
  private static String nameOf(ThreadFactory threadFactory) {
    return threadFactory instanceof Supplier<?> named ? String.valueOf(named.get())
        : "boundedElastic";
  }

  @Override
  public String toString() {
    return "PoolSchedulers.factory()";
  }
}
