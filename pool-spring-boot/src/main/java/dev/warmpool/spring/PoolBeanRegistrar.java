package dev.warmpool.spring;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.task.TaskDecorator;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Registers one {@link WorkerPool} bean per {@code warmpool.pools.<name>} entry, named {@code <name>},
 * while the configuration is read, so that the pools are ordinary beans: injectable by name or, for
 * the primary one, by type, and closed after the beans that use them.
 *
 * <p>Every setting is checked here, before any bean is created, by handing it to the pool's builder
 * (which validates each setter at once); a refused value fails the start-up with an
 * {@link InvalidConfigurationPropertyValueException} that names the key, its value and the builder's
 * reason. Only what the builder can tell at {@code build()} (virtual threads on an old JVM) is
 * reported when the bean is created, named the same way.
 */
final class PoolBeanRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware,
    BeanFactoryAware {
  static final String PREFIX = "warmpool.pools.";

  private Environment environment;
  private ListableBeanFactory beanFactory;

  @Override
  public void setEnvironment(Environment environment) {
    this.environment = environment;
  }

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    this.beanFactory = (ListableBeanFactory) beanFactory;
  }

  @Override
  public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
    WarmpoolProperties properties = Binder.get(environment)
        .bind("warmpool", WarmpoolProperties.class).orElseGet(WarmpoolProperties::new);
    Duration awaitTermination = awaitTermination(properties.getShutdown());
    String primary = null;
    for (Map.Entry<String, WarmpoolProperties.Pool> entry : properties.getPools().entrySet()) {
      String name = entry.getKey();
      WarmpoolProperties.Pool settings = entry.getValue();
      WorkerPool.Builder builder = builder(name, settings);
      if (settings.isPrimary()) {
        if (primary != null) {
          throw new InvalidConfigurationPropertyValueException(PREFIX + name + ".primary", true,
              "Pool '" + primary + "' is primary already; at most one pool may be primary.");
        }
        primary = name;
      }
      if (registry.containsBeanDefinition(name)) {
        throw new InvalidConfigurationPropertyValueException(PREFIX + name, name,
            "A bean named '" + name + "' exists already; a pool's bean takes its name.");
      }
      RootBeanDefinition definition = new RootBeanDefinition(WorkerPoolFactoryBean.class);
      definition.setInstanceSupplier(() -> new WorkerPoolFactoryBean(PREFIX + name, builder,
          settings.isVirtualThreads(), awaitTermination,
          beanFactory.getBeanProvider(TaskDecorator.class)));
      definition.setAttribute(FactoryBean.OBJECT_TYPE_ATTRIBUTE, WorkerPool.class);
      definition.setPrimary(settings.isPrimary());
      definition.setDescription("warmpool pool from " + PREFIX + name);
      registry.registerBeanDefinition(name, definition);
    }
  }

  private static Duration awaitTermination(WarmpoolProperties.Shutdown shutdown) {
    Duration await = shutdown.getAwaitTermination();
    if (await == null || await.isNegative()) {
      throw new InvalidConfigurationPropertyValueException("warmpool.shutdown.await-termination",
          await, "Must be zero or positive.");
    }
    return await;
  }

  /** A builder with every setting of the entry applied; each refusal names its key. */
  static WorkerPool.Builder builder(String name, WarmpoolProperties.Pool settings) {
    String prefix = PREFIX + name + ".";
    WorkerPool.Builder builder = WorkerPool.builder();
    builder.name(name);
    apply(prefix + "capacity", settings.getCapacity(), builder::capacity);
    apply(prefix + "max-idle", settings.getMaxIdle(), builder::maxIdle);
    builder.nonblocking(settings.isNonblocking());
    apply(prefix + "max-waiting", settings.getMaxWaiting(), builder::maxWaiting);
    apply(prefix + "max-wait-in-line", settings.getMaxWaitInLine(), builder::maxWaitInLine);
    builder.virtualThreads(settings.isVirtualThreads());
    return builder;
  }

  /** Hands a set value to the builder's setter; a value left out keeps the builder's default. */
  private static <T> void apply(String key, @Nullable T value, Consumer<T> setter) {
    if (value == null) {
      return;
    }
    try {
      setter.accept(value);
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigurationPropertyValueException(key, value, e.getMessage());
    }
  }
}
