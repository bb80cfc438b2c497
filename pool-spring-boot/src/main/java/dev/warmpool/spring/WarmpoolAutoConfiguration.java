package dev.warmpool.spring;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;

/**
 * warmpool's Spring Boot auto-configuration (see {@link WarmpoolProperties} for the keys):
 * <ul>
 *   <li>one {@link dev.warmpool.WorkerPool} bean per {@code warmpool.pools.<name>} entry, named
 *       {@code <name>}, with the context's {@code TaskDecorator} beans as its task decorator, closed
 *       gracefully with the context ({@link PoolBeanRegistrar}, {@link WorkerPoolFactoryBean});</li>
 *   <li>{@code warmpool.spring.task-executor=<pool>} and {@code warmpool.spring.task-scheduler=<pool>}:
 *       Boot's {@code applicationTaskExecutor} and {@code taskScheduler} beans on that pool
 *       ({@link SpringTaskAdoption});</li>
 *   <li>{@code warmpool.reactor.bounded-elastic=true}: Reactor's bounded-elastic schedulers on
 *       warmpool (with warmpool-reactor on the class path; {@link ReactorBoundedElastic});</li>
 *   <li>{@code warmpool.rxjava.io=<pool>}: RxJava's {@code Schedulers.io()} on that pool (with
 *       warmpool-rxjava; {@link RxJavaIo});</li>
 *   <li>with warmpool-micrometer and a {@code MeterRegistry} bean: every pool's meters, the
 *       {@code executor}/{@code executor.idle} task timers unless
 *       {@code warmpool.metrics.task-timers=false} ({@link PoolMetricsBinder}).</li>
 * </ul>
 * Each optional part switches on only when its classes are on the class path; with warmpool-core
 * alone the pools still work.
 *
 * <p><b>Boot's own executors stay.</b> A {@code WorkerPool} bean is an {@code Executor} and a
 * {@code ScheduledExecutorService}, the types on which Boot's {@code TaskExecutionAutoConfiguration}
 * ({@code applicationTaskExecutor}) and {@code TaskSchedulingAutoConfiguration} ({@code taskScheduler})
 * back off. Their conditions are evaluated when their configuration classes are loaded, in
 * auto-configuration order, and the pool beans are registered when this class is loaded; so this
 * auto-configuration comes after both, and Boot decides as if warmpool were not there. The
 * application's own {@code Executor} beans are registered before any auto-configuration and still make
 * Boot back off, as Boot documents.
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration",
    "org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration"})
@EnableConfigurationProperties(WarmpoolProperties.class)
@Import(PoolBeanRegistrar.class)
public class WarmpoolAutoConfiguration {

  /** Boot's {@code applicationTaskExecutor} and {@code taskScheduler} on a pool, on request. */
  @Configuration(proxyBeanMethods = false)
  static class AdoptionConfiguration {
    @Bean
    @ConditionalOnProperty(SpringTaskAdoption.EXECUTOR_KEY)
    static SpringTaskAdoption warmpoolTaskExecutorAdoption(Environment environment) {
      return SpringTaskAdoption.taskExecutor(
          Binder.get(environment).bind(SpringTaskAdoption.EXECUTOR_KEY, String.class).orElse(""));
    }

    @Bean
    @ConditionalOnProperty(SpringTaskAdoption.SCHEDULER_KEY)
    static SpringTaskAdoption warmpoolTaskSchedulerAdoption(Environment environment) {
      return SpringTaskAdoption.taskScheduler(
          Binder.get(environment).bind(SpringTaskAdoption.SCHEDULER_KEY, String.class).orElse(""));
    }
  }

  /** Reactor's bounded-elastic schedulers on warmpool. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"dev.warmpool.reactor.PoolSchedulers",
      "reactor.core.scheduler.Schedulers"})
  @ConditionalOnProperty(name = "warmpool.reactor.bounded-elastic", havingValue = "true")
  static class ReactorConfiguration {
    @Bean
    static ReactorBoundedElastic warmpoolReactorBoundedElastic(Environment environment) {
      // a bad value is refused, naming the key, when the pool beans are registered, before this
      return new ReactorBoundedElastic(Binder.get(environment)
          .bind("warmpool", WarmpoolProperties.class).orElseGet(WarmpoolProperties::new)
          .getShutdown().getAwaitTermination());
    }
  }

  /** RxJava's {@code Schedulers.io()} on a pool. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"dev.warmpool.rxjava3.PoolSchedulers",
      "io.reactivex.rxjava3.plugins.RxJavaPlugins"})
  @ConditionalOnProperty(name = RxJavaIo.KEY)
  static class RxJavaConfiguration {
    @Bean
    static RxJavaIo warmpoolRxJavaIo(Environment environment) {
      return new RxJavaIo(Binder.get(environment).bind(RxJavaIo.KEY, String.class).get());
    }
  }

  /** Meters for every pool, when there is a registry. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"dev.warmpool.micrometer.WorkerPoolMetrics",
      "io.micrometer.core.instrument.MeterRegistry"})
  static class MetricsConfiguration {
    @Bean
    static PoolMetricsBinder warmpoolMetricsBinder(ListableBeanFactory beanFactory,
        ObjectProvider<MeterRegistry> registries, ObjectProvider<FactoryPools> factoryPools,
        Environment environment) {
      return new PoolMetricsBinder(beanFactory, registries, factoryPools,
          Binder.get(environment).bind(PoolMetricsBinder.TASK_TIMERS_KEY, Boolean.class).orElse(true));
    }
  }
}
