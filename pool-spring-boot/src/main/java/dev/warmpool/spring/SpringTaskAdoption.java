package dev.warmpool.spring;

import dev.warmpool.WorkerPool;
import java.util.Arrays;
import java.util.function.Function;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.core.task.AsyncTaskExecutor;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.concurrent.ConcurrentTaskScheduler;

/**
 * Adoption on request: {@code warmpool.spring.task-executor=<pool>} makes the
 * {@code applicationTaskExecutor} bean a {@link PoolTaskExecutor} on that pool, and
 * {@code warmpool.spring.task-scheduler=<pool>} makes the {@code taskScheduler} bean a
 * {@link TaskScheduler} on it (Spring's {@link ConcurrentTaskScheduler} over the pool, so
 * {@code @Scheduled} runs on the pool's timers and workers).
 *
 * <p>It replaces the bean definition that Boot's task auto-configuration registered under that name
 * rather than making Boot back off, so everything Boot wires to the name stays wired (its
 * {@code AsyncConfigurer} for {@code @Async}, the bootstrap executor alias, MVC's async support);
 * where Boot registered none (no {@code @EnableScheduling}, or the application's own {@code Executor}
 * made Boot back off) it registers the bean. It runs after the configuration classes are read, when
 * every definition is known. A name that is no {@code WorkerPool} bean, or an application bean of
 * its own under the adopted name, stops the start-up naming the key and value.
 */
final class SpringTaskAdoption implements BeanDefinitionRegistryPostProcessor {
  static final String EXECUTOR_KEY = "warmpool.spring.task-executor";
  static final String SCHEDULER_KEY = "warmpool.spring.task-scheduler";

  private final String key;
  private final String beanName;
  private final Class<?> beanType;
  private final Function<WorkerPool, Object> adapt;
  private final String poolName;

  private SpringTaskAdoption(String key, String beanName, Class<?> beanType,
      Function<WorkerPool, Object> adapt, String poolName) {
    this.key = key;
    this.beanName = beanName;
    this.beanType = beanType;
    this.adapt = adapt;
    this.poolName = poolName;
  }

  static SpringTaskAdoption taskExecutor(String poolName) {
    return new SpringTaskAdoption(EXECUTOR_KEY, "applicationTaskExecutor", AsyncTaskExecutor.class,
        PoolTaskExecutor::new, poolName);
  }

  static SpringTaskAdoption taskScheduler(String poolName) {
    // execute() enqueues, never blocking the caller; schedule(..) uses the pool's timers
    return new SpringTaskAdoption(SCHEDULER_KEY, "taskScheduler", TaskScheduler.class,
        pool -> new ConcurrentTaskScheduler(new PoolTaskExecutor(pool), pool), poolName);
  }

  @Override
  public void postProcessBeanDefinitionRegistry(BeanDefinitionRegistry registry) {
    ConfigurableListableBeanFactory beanFactory = (ConfigurableListableBeanFactory) registry;
    if (!beanFactory.containsBean(poolName) || !beanFactory.isTypeMatch(poolName, WorkerPool.class)) {
      throw new InvalidConfigurationPropertyValueException(key, poolName,
          "There is no WorkerPool bean named '" + poolName + "'; WorkerPool beans: "
              + Arrays.toString(beanFactory.getBeanNamesForType(WorkerPool.class, true, false)));
    }
    if (registry.containsBeanDefinition(beanName)) {
      if (!isBoots(registry, registry.getBeanDefinition(beanName))) {
        throw new InvalidConfigurationPropertyValueException(key, poolName, "The application defines"
            + " a bean named '" + beanName + "' of its own; remove it or this key.");
      }
      registry.removeBeanDefinition(beanName);
    }
    String pool = poolName;
    RootBeanDefinition definition = new RootBeanDefinition(beanType);
    definition.setInstanceSupplier(() -> adapt.apply(beanFactory.getBean(pool, WorkerPool.class)));
    // made after the pool, gone before it closes
    definition.setDependsOn(pool);
    definition.setDescription(beanName + " on the pool '" + pool + "' (" + key + ")");
    registry.registerBeanDefinition(beanName, definition);
  }

  /** Registered by Boot's task auto-configuration (a factory method of one of its classes). */
  private static boolean isBoots(BeanDefinitionRegistry registry, BeanDefinition definition) {
    String factory = definition.getFactoryBeanName();
    if (factory == null || !registry.containsBeanDefinition(factory)) {
      return false;
    }
    String type = registry.getBeanDefinition(factory).getBeanClassName();
    return type != null && type.startsWith("org.springframework.boot.autoconfigure.task.");
  }

  @Override
  public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {}
}
