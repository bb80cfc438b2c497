package dev.warmpool.reactor;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.concurrent.ThreadFactory;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The {@link Schedulers.Factory} behind {@link PoolSchedulers#factory()} and its overloads (their
 * contract is there): every bounded-elastic scheduler becomes a scheduler that owns a pool of its
 * own, built from Reactor's parameters and thread factory (its names, daemon flag, and virtual
 * threads for the thread-per-task variant), then the caller's own builder settings, and handed to
 * {@code onNewPool} before it can run a task.
 */
final class PoolSchedulerFactory implements Schedulers.Factory {
  /**
   * Core's largest capacity ({@link WorkerPool.Builder#capacity}): Reactor accepts any positive
   * {@code threadCap}, and {@code Integer.MAX_VALUE} is its usual "no cap", so a larger one is
   * capped here rather than refused. FactoryTest checks that core accepts it and nothing above.
   */
  static final int MAX_CAPACITY = 131_072;
  /** warmpool's default idle time where Reactor gives none (the thread-per-task variant). */
  private static final Duration NO_TTL_GIVEN = Duration.ofSeconds(60);

  /** Called with every builder after Reactor's parameters are set; null if none was given. */
  private final @Nullable Consumer<WorkerPool.Builder> configure;
  /** Called with every pool this factory builds; null for {@link PoolSchedulers#factory()}. */
  private final @Nullable Consumer<WorkerPool> onNewPool;

  PoolSchedulerFactory(@Nullable Consumer<WorkerPool.Builder> configure,
      @Nullable Consumer<WorkerPool> onNewPool) {
    this.configure = configure;
    this.onNewPool = onNewPool;
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
    WorkerPool.Builder builder = WorkerPool.builder()
        .name(nameOf(threadFactory))
        .capacity(Math.min(threadCap, MAX_CAPACITY))
        .maxWaiting(queuedTaskCap)
        .maxIdle(ttl)
        .threadFactory(threadFactory);
    if (configure != null) {
      configure.accept(builder); // nothing is built yet: a throw leaves nothing to close
    }
    WorkerPool pool = builder.build();
    if (onNewPool != null) {
      try {
        onNewPool.accept(pool);
      } catch (Throwable t) {
        // the pool has run nothing and started no thread: close it rather than leak it
        try {
          pool.shutdownNow();
        } catch (Throwable suppressed) {
          t.addSuppressed(suppressed);
        }
        throw t;
      }
    }
    return new PoolScheduler(pool, true);
  }

  /** Reactor's thread factories supply their name prefix ("boundedElastic" or the user's). */
  private static String nameOf(ThreadFactory threadFactory) {
    return threadFactory instanceof Supplier<?> named ? String.valueOf(named.get())
        : "boundedElastic";
  }

  @Override
  public String toString() {
    return onNewPool == null ? "PoolSchedulers.factory()"
        : configure == null ? "PoolSchedulers.factory(onNewPool)"
        : "PoolSchedulers.factory(configure, onNewPool)";
  }
}
