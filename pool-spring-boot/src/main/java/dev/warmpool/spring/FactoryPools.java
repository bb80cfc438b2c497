package dev.warmpool.spring;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.springframework.core.task.TaskDecorator;

/**
 * The pools that Reactor's factory makes ({@code Schedulers.boundedElastic()} and the like): they
 * are no beans, so this looks after them as the context looks after pool beans. It hands them to
 * whoever binds meters (pools made before that one subscribes are kept until it does; afterwards each
 * is handed on at once, on the thread that made it, before it runs a task), decorates their tasks
 * with the context's {@code TaskDecorator} beans once those exist, and closes the ones still open
 * with the context, with the same grace as the pool beans.
 */
final class FactoryPools implements Consumer<WorkerPool> {
  static final String BEAN_NAME = "warmpoolFactoryPools";

  /** Guarded by {@code this}: pools made while nobody listened; none once {@code listener} is set. */
  private final List<WorkerPool> pending = new ArrayList<>();
  private @Nullable Consumer<WorkerPool> listener;

  /** Pools made and not terminated: a pool leaves when it terminates (its scheduler disposed). */
  private final Set<WorkerPool> open = ConcurrentHashMap.newKeySet();

  /** The context's decorators; none until every singleton exists (no bean may be made earlier). */
  private volatile @Nullable TaskDecorator decorator;

  /** Reactor's factory calls this with every pool it makes. */
  @Override
  public void accept(WorkerPool pool) {
    open.add(pool);
    pool.whenTerminated().thenRun(() -> open.remove(pool));
    Consumer<WorkerPool> to;
    synchronized (this) {
      if (listener == null) {
        pending.add(pool);
        return;
      }
      to = listener;
    }
    to.accept(pool);
  }

  /** Hands {@code listener} the pools made so far, and every pool made from now on. */
  void forEachNowAndLater(Consumer<WorkerPool> listener) {
    List<WorkerPool> made;
    synchronized (this) {
      this.listener = listener;
      made = new ArrayList<>(pending);
      pending.clear();
    }
    made.forEach(listener);
  }

  /**
   * The task decorator of every pool made here: the context's decorator once it is known. A task
   * submitted while the context starts, before then, runs as submitted.
   */
  Runnable decorate(Runnable task) {
    TaskDecorator d = decorator;
    return d == null ? task : d.decorate(task);
  }

  void useDecorator(@Nullable TaskDecorator decorator) {
    this.decorator = decorator;
  }

  /** Closes the pools still open, as the pool beans close ({@link GracefulClose}). */
  void close(Duration awaitTermination) {
    GracefulClose.close(List.copyOf(open), awaitTermination);
  }
}
