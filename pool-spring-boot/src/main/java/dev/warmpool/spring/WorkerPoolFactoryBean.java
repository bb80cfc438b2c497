package dev.warmpool.spring;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.task.TaskDecorator;
import org.springframework.core.task.support.CompositeTaskDecorator;

/**
 * Makes one configured pool (or subpool) and closes it gracefully with the context, as
 * {@link GracefulClose} says.
 *
 * <p>The context's {@link TaskDecorator} beans become the pool's task decorator as Spring Boot does
 * for its own executors: one bean is used as it is, several are applied in their
 * {@link org.springframework.core.annotation.Order order} through a {@link CompositeTaskDecorator}.
 * A subpool ignores them: it uses its parent's decorator, so a task is decorated once.
 */
final class WorkerPoolFactoryBean implements FactoryBean<WorkerPool>, InitializingBean,
    DisposableBean {
  private final String key;
  private final Function<@Nullable TaskDecorator, WorkerPool> make;
  private final Duration awaitTermination;
  private final ObjectProvider<TaskDecorator> decorators;
  private @Nullable WorkerPool pool;

  /**
   * @param key the entry's key, {@code warmpool.pools.<name>}
   * @param make builds the pool with the given decorator (null: none)
   */
  WorkerPoolFactoryBean(String key, Function<@Nullable TaskDecorator, WorkerPool> make,
      Duration awaitTermination, ObjectProvider<TaskDecorator> decorators) {
    this.key = key;
    this.make = make;
    this.awaitTermination = awaitTermination;
    this.decorators = decorators;
  }

  @Override
  public void afterPropertiesSet() {
    pool = make.apply(combined(decorators.orderedStream().toList()));
  }

  /** One decorator as it is, several composed in their order, none as null (as Boot does). */
  static @Nullable TaskDecorator combined(List<TaskDecorator> decorators) {
    if (decorators.isEmpty()) {
      return null;
    }
    return decorators.size() == 1 ? decorators.get(0) : new CompositeTaskDecorator(decorators);
  }

  @Override
  public @Nullable WorkerPool getObject() {
    return pool;
  }

  @Override
  public Class<?> getObjectType() {
    return WorkerPool.class;
  }

  @Override
  public void destroy() {
    if (pool != null) {
      GracefulClose.close(List.of(pool), awaitTermination);
    }
  }

  @Override
  public String toString() {
    return "WorkerPoolFactoryBean(" + key + ")";
  }
}
