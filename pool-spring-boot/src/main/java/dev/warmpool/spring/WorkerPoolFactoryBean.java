package dev.warmpool.spring;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.core.task.TaskDecorator;
import org.springframework.core.task.support.CompositeTaskDecorator;

/**
 * Makes one configured pool and closes it gracefully with the context: {@code shutdown()} (no new
 * tasks; running and waiting tasks go on), then up to {@code warmpool.shutdown.await-termination} for
 * them to finish, then {@code shutdownNow()}, which interrupts the running ones and drops the rest.
 *
 * <p>The context's {@link TaskDecorator} beans become the pool's task decorator as Spring Boot does
 * for its own executors: one bean is used as it is, several are applied in their
 * {@link org.springframework.core.annotation.Order order} through a {@link CompositeTaskDecorator}.
 */
final class WorkerPoolFactoryBean implements FactoryBean<WorkerPool>, InitializingBean,
    DisposableBean {
  private static final Log log = LogFactory.getLog(WorkerPoolFactoryBean.class);

  private final String key;
  private final WorkerPool.Builder builder;
  private final boolean virtualThreads;
  private final Duration awaitTermination;
  private final ObjectProvider<TaskDecorator> decorators;
  private @Nullable WorkerPool pool;

  WorkerPoolFactoryBean(String key, WorkerPool.Builder builder, boolean virtualThreads,
      Duration awaitTermination, ObjectProvider<TaskDecorator> decorators) {
    this.key = key;
    this.builder = builder;
    this.virtualThreads = virtualThreads;
    this.awaitTermination = awaitTermination;
    this.decorators = decorators;
  }

  @Override
  public void afterPropertiesSet() {
    TaskDecorator decorator = combined(decorators.orderedStream().toList());
    if (decorator != null) {
      builder.taskDecorator(decorator::decorate);
    }
    try {
      pool = builder.build();
    } catch (UnsupportedOperationException | IllegalStateException e) {
      // what build() alone can tell: virtual threads on a JVM that has none
      throw new InvalidConfigurationPropertyValueException(
          virtualThreads ? key + ".virtual-threads" : key, virtualThreads ? true : null,
          e.getMessage());
    }
  }

  private static @Nullable TaskDecorator combined(List<TaskDecorator> decorators) {
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
    if (pool == null) {
      return;
    }
    pool.shutdown();
    try {
      if (pool.awaitTermination(awaitTermination.toNanos(), TimeUnit.NANOSECONDS)) {
        return;
      }
      log.warn("Pool '" + pool.name() + "' did not finish its tasks within " + awaitTermination
          + " (warmpool.shutdown.await-termination); interrupting them with shutdownNow()");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    List<Runnable> dropped = pool.shutdownNow();
    if (!dropped.isEmpty()) {
      log.warn("Pool '" + pool.name() + "' closed with " + dropped.size() + " task(s) not run");
    }
  }

  @Override
  public String toString() {
    return "WorkerPoolFactoryBean(" + key + ")";
  }
}
