package dev.warmpool.spring;

import dev.warmpool.WorkerPool;
import dev.warmpool.micrometer.WorkerPoolMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * With a {@link MeterRegistry} bean, binds every {@link WorkerPool} bean and every pool Reactor's
 * factory makes ({@code warmpool.reactor.bounded-elastic}) with {@link WorkerPoolMetrics}, tagged
 * {@code name} = the pool's name. It binds once all singletons exist, so whichever configuration
 * makes the registry (Spring Boot's metrics or the application's own bean), it is there; factory
 * pools made later are bound as they are made. {@code warmpool.metrics.task-timers=false} binds them
 * without the {@code executor} and {@code executor.idle} timers, so no task pays for timing.
 */
final class PoolMetricsBinder implements SmartInitializingSingleton {
  static final String TASK_TIMERS_KEY = "warmpool.metrics.task-timers";

  private final ListableBeanFactory beanFactory;
  private final ObjectProvider<MeterRegistry> registries;
  private final ObjectProvider<FactoryPools> factoryPools;
  private final boolean taskTimers;

  PoolMetricsBinder(ListableBeanFactory beanFactory, ObjectProvider<MeterRegistry> registries,
      ObjectProvider<FactoryPools> factoryPools, boolean taskTimers) {
    this.beanFactory = beanFactory;
    this.registries = registries;
    this.factoryPools = factoryPools;
    this.taskTimers = taskTimers;
  }

  @Override
  public void afterSingletonsInstantiated() {
    MeterRegistry registry = registries.getIfUnique();
    if (registry == null) {
      return;
    }
    beanFactory.getBeansOfType(WorkerPool.class).values().forEach(pool -> bind(pool, registry));
    factoryPools.ifAvailable(pools -> pools.forEachNowAndLater(pool -> bind(pool, registry)));
  }

  private void bind(WorkerPool pool, MeterRegistry registry) {
    new WorkerPoolMetrics(pool, Tags.empty(), taskTimers).bindTo(registry);
  }
}
