package dev.warmpool.spring;

import dev.warmpool.WorkerPool;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The pools that Reactor's factory makes ({@code Schedulers.boundedElastic()} and the like): they
 * are no beans, so this hands them to whoever looks after pools (the metrics binding). Pools made
 * before that one subscribes are kept until it does; afterwards each is handed on at once, on the
 * thread that made it, before it runs a task.
 */
final class FactoryPools implements Consumer<WorkerPool> {
  static final String BEAN_NAME = "warmpoolFactoryPools";

  /** Guarded by {@code this}: pools made while nobody listened; none once {@code listener} is set. */
  private final List<WorkerPool> pending = new ArrayList<>();
  private @Nullable Consumer<WorkerPool> listener;

  /** Reactor's factory calls this with every pool it makes. */
  @Override
  public void accept(WorkerPool pool) {
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
}
