package dev.warmpool.spring;

import dev.warmpool.WorkerPool;
import dev.warmpool.spring.WarmpoolProperties.Pool;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.task.TaskDecorator;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Registers one {@link WorkerPool} bean per {@code warmpool.pools.<name>} entry, named {@code <name>},
 * while the configuration is read, so that the pools are ordinary beans: injectable by name or, for
 * the primary one, by type, and closed after the beans that use them. An entry with a
 * {@code parent} is a subpool of that entry's pool ({@link WorkerPool#newSubpool}), made after it and
 * closed before it.
 *
 * <p>Binding is strict, and checked here, before any bean is created: an unknown key inside an entry,
 * a setting that cannot apply (a line setting on a nonblocking pool, a thread or deadline setting on
 * a subpool), a {@code parent} that names no entry (or a cycle of them) and every value the pool's
 * builder refuses (each setter validates at once) fail the start-up with an
 * {@link InvalidConfigurationPropertyValueException} that names the key, its value and the reason.
 * Only what the builder can tell at {@code build()} (virtual threads on an old JVM) is reported when
 * the bean is created, named the same way.
 */
final class PoolBeanRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware,
    BeanFactoryAware {
  static final String PREFIX = "warmpool.pools.";

  /** The keys of an entry, as the refusal of an unknown one lists them. */
  static final String ENTRY_KEYS = "capacity, max-idle, nonblocking, max-waiting, max-wait-in-line,"
      + " controlled-delay.target, controlled-delay.interval, adaptive-lifo, virtual-threads,"
      + " primary, parent";

  /** Core's default line bound ({@code WorkerPool.Builder}), for a blocking subpool of a nonblocking pool. */
  private static final int CORE_DEFAULT_MAX_WAITING = 100_000;

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
    Binder binder = Binder.get(environment);
    Map<String, Pool> pools = strictlyBound(binder);
    WarmpoolProperties properties = binder.bind("warmpool", WarmpoolProperties.class)
        .orElseGet(WarmpoolProperties::new);
    Duration awaitTermination = awaitTermination(properties.getShutdown());
    String primary = null;
    for (Map.Entry<String, Pool> entry : pools.entrySet()) {
      String name = entry.getKey();
      Pool settings = entry.getValue();
      Function<@Nullable TaskDecorator, WorkerPool> make = settings.getParent() == null
          ? pool(name, settings) : subpool(name, settings, pools);
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
      definition.setInstanceSupplier(() -> new WorkerPoolFactoryBean(PREFIX + name, make,
          awaitTermination, beanFactory.getBeanProvider(TaskDecorator.class)));
      definition.setAttribute(FactoryBean.OBJECT_TYPE_ATTRIBUTE, WorkerPool.class);
      definition.setPrimary(settings.isPrimary());
      if (settings.getParent() != null) {
        // made after its parent, closed before it
        definition.setDependsOn(settings.getParent());
      }
      definition.setDescription("warmpool pool from " + PREFIX + name);
      registry.registerBeanDefinition(name, definition);
    }
  }

  /**
   * {@code warmpool.pools} bound so that a key no entry has (a typo such as {@code capasity}) stops
   * the start-up instead of being ignored, as Boot's binder would by default.
   */
  static Map<String, Pool> strictlyBound(Binder binder) {
    try {
      return binder.bind(PREFIX.substring(0, PREFIX.length() - 1),
              Bindable.mapOf(String.class, Pool.class),
              new NoUnboundElementsBindHandler(BindHandler.DEFAULT))
          .orElseGet(Map::of);
    } catch (BindException e) {
      if (e.getCause() instanceof UnboundConfigurationPropertiesException unbound
          && !unbound.getUnboundProperties().isEmpty()) {
        ConfigurationProperty first = unbound.getUnboundProperties().iterator().next();
        String key = first.getName().toString();
        throw new InvalidConfigurationPropertyValueException(key, first.getValue(),
            "Unknown key; an entry of warmpool.pools takes " + ENTRY_KEYS + ".");
      }
      throw e;
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

  /** A pool of its own: every setting goes to the builder now; the decorator when it is built. */
  private Function<@Nullable TaskDecorator, WorkerPool> pool(String name, Pool settings) {
    String prefix = PREFIX + name + ".";
    if (Boolean.TRUE.equals(settings.getNonblocking())) {
      String why = "Cannot apply: pool '" + name + "' is nonblocking, so it has no waiting line"
          + " (it rejects at once when every seat is taken).";
      refuseIfSet(prefix + "max-waiting", settings.getMaxWaiting(), why);
      refuseIfSet(prefix + "max-wait-in-line", settings.getMaxWaitInLine(), why);
      refuseIfSet(prefix + "controlled-delay.target", settings.getControlledDelay().getTarget(),
          why);
      refuseIfSet(prefix + "controlled-delay.interval",
          settings.getControlledDelay().getInterval(), why);
      refuseIfSet(prefix + "adaptive-lifo", settings.getAdaptiveLifo(), why);
    }
    WorkerPool.Builder builder = WorkerPool.builder();
    builder.name(name);
    apply(prefix + "capacity", settings.getCapacity(), builder::capacity);
    apply(prefix + "max-idle", settings.getMaxIdle(), builder::maxIdle);
    apply(prefix + "nonblocking", settings.getNonblocking(), builder::nonblocking);
    apply(prefix + "max-waiting", settings.getMaxWaiting(), builder::maxWaiting);
    apply(prefix + "max-wait-in-line", settings.getMaxWaitInLine(), builder::maxWaitInLine);
    controlledDelay(prefix, settings.getControlledDelay(), builder);
    apply(prefix + "adaptive-lifo", settings.getAdaptiveLifo(), builder::adaptiveLifo);
    builder.virtualThreads(settings.isVirtualThreads());
    return decorator -> {
      if (decorator != null) {
        builder.taskDecorator(decorator::decorate);
      }
      try {
        return builder.build();
      } catch (UnsupportedOperationException | IllegalStateException e) {
        // what build() alone can tell: virtual threads on a JVM that has none
        throw new InvalidConfigurationPropertyValueException(settings.isVirtualThreads()
            ? prefix + "virtual-threads" : PREFIX + name,
            settings.isVirtualThreads() ? true : null, e.getMessage());
      }
    };
  }

  /** Both keys or neither; the builder's check ({@code 0 < target < interval}) names the target. */
  private void controlledDelay(String prefix, WarmpoolProperties.ControlledDelay settings,
      WorkerPool.Builder builder) {
    Duration target = settings.getTarget();
    Duration interval = settings.getInterval();
    if (target == null && interval == null) {
      return;
    }
    if (target == null || interval == null) {
      String missing = prefix + "controlled-delay." + (target == null ? "target" : "interval");
      String set = prefix + "controlled-delay." + (target == null ? "interval" : "target");
      throw new InvalidConfigurationPropertyValueException(set,
          written(set, target == null ? interval : target),
          "Controlled delay needs both a target and an interval: " + missing + " is not set.");
    }
    apply(prefix + "controlled-delay.target", target, t -> builder.controlledDelay(t, interval));
  }

  /**
   * A subpool of the entry {@code parent}, checked now; made from the parent's bean. It takes no
   * decorator: its parent's decorates its tasks, once.
   */
  private Function<@Nullable TaskDecorator, WorkerPool> subpool(String name, Pool settings,
      Map<String, Pool> pools) {
    String prefix = PREFIX + name + ".";
    String parent = settings.getParent();
    checkParents(name, pools);
    String threads = "Cannot apply to a subpool: it starts no threads, its parent's workers run its"
        + " tasks.";
    refuseIfSet(prefix + "max-idle", settings.getMaxIdle(), threads);
    refuseIfSet(prefix + "virtual-threads", settings.isVirtualThreads() ? true : null, threads);
    String line = "Cannot apply to a subpool: it takes its parent's line deadline, controlled"
        + " delay and adaptive LIFO.";
    refuseIfSet(prefix + "max-wait-in-line", settings.getMaxWaitInLine(), line);
    refuseIfSet(prefix + "controlled-delay.target", settings.getControlledDelay().getTarget(),
        line);
    refuseIfSet(prefix + "controlled-delay.interval", settings.getControlledDelay().getInterval(),
        line);
    refuseIfSet(prefix + "adaptive-lifo", settings.getAdaptiveLifo(), line);
    Integer capacity = settings.getCapacity();
    if (capacity == null) {
      throw new InvalidConfigurationPropertyValueException(prefix + "capacity", null,
          "A subpool needs a capacity: it is the bulkhead's bound.");
    }
    // the builder's checks, at once, so a bad value names its key before any bean exists
    apply(prefix + "capacity", capacity, WorkerPool.builder()::capacity);
    apply(prefix + "max-waiting", settings.getMaxWaiting(), WorkerPool.builder()::maxWaiting);
    boolean nonblocking = nonblocking(name, pools);
    if (nonblocking) {
      refuseIfSet(prefix + "max-waiting", settings.getMaxWaiting(), "Cannot apply: subpool '" + name
          + "' is nonblocking, so it has no waiting line.");
    }
    if (settings.getNonblocking() == null && settings.getMaxWaiting() == null) {
      return decorator -> parentBean(parent).newSubpool(name, capacity);
    }
    int maxWaiting = nonblocking ? 0 : maxWaiting(name, pools);
    return decorator -> parentBean(parent).newSubpool(name, capacity, nonblocking, maxWaiting);
  }

  private WorkerPool parentBean(String parent) {
    return beanFactory.getBean(parent, WorkerPool.class);
  }

  /** Each {@code parent} on the way up from {@code name} is an entry, and none comes twice. */
  private static void checkParents(String name, Map<String, Pool> pools) {
    Set<String> path = new LinkedHashSet<>();
    for (String at = name; pools.get(at).getParent() != null; at = pools.get(at).getParent()) {
      path.add(at);
      String parent = pools.get(at).getParent();
      if (!pools.containsKey(parent)) {
        throw new InvalidConfigurationPropertyValueException(PREFIX + at + ".parent", parent,
            "There is no pool '" + parent + "' in warmpool.pools; a parent must be one of "
                + pools.keySet() + ".");
      }
      if (path.contains(parent)) {
        throw new InvalidConfigurationPropertyValueException(PREFIX + at + ".parent", parent,
            "The parents form a cycle: " + String.join(" -> ", path) + " -> " + parent + ".");
      }
    }
  }

  /** The entry's mode: its own setting, else its parent's, else blocking (core's default). */
  private static boolean nonblocking(String name, Map<String, Pool> pools) {
    Pool settings = pools.get(name);
    if (settings.getNonblocking() != null) {
      return settings.getNonblocking();
    }
    return settings.getParent() != null && nonblocking(settings.getParent(), pools);
  }

  /** The entry's line bound: its own setting, else its parent's, else core's default. */
  private static int maxWaiting(String name, Pool settings, Map<String, Pool> pools) {
    if (settings.getMaxWaiting() != null) {
      return settings.getMaxWaiting();
    }
    String parent = settings.getParent();
    return parent == null ? CORE_DEFAULT_MAX_WAITING : maxWaiting(parent, pools.get(parent), pools);
  }

  private static int maxWaiting(String name, Map<String, Pool> pools) {
    return maxWaiting(name, pools.get(name), pools);
  }

  private void refuseIfSet(String key, @Nullable Object value, String reason) {
    if (value != null) {
      throw new InvalidConfigurationPropertyValueException(key, written(key, value), reason);
    }
  }

  /** Hands a set value to the builder's setter; a value left out keeps the builder's default. */
  private <T> void apply(String key, @Nullable T value, Consumer<T> setter) {
    if (value == null) {
      return;
    }
    try {
      setter.accept(value);
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigurationPropertyValueException(key, written(key, value), e.getMessage());
    }
  }

  /** The value as the user wrote it ({@code 50ms}, not the bound {@code PT0.05S}), for messages. */
  private Object written(String key, Object bound) {
    ConfigurationPropertyName name = ConfigurationPropertyName.of(key);
    for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
      ConfigurationProperty property = source.getConfigurationProperty(name);
      if (property != null && property.getValue() != null) {
        return property.getValue();
      }
    }
    return bound;
  }
}
