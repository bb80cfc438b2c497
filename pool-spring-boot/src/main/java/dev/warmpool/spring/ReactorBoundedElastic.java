package dev.warmpool.spring;

import dev.warmpool.reactor.PoolSchedulers;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.Ordered;
import reactor.core.scheduler.Schedulers;

/**
 * {@code warmpool.reactor.bounded-elastic=true}: makes Reactor's bounded-elastic schedulers
 * warmpool-backed with {@code Schedulers.setFactory(PoolSchedulers.factory(..))}.
 *
 * <p>It runs as a bean factory post-processor, so before any ordinary bean is created: a bean that
 * takes {@code Schedulers.boundedElastic()} in its constructor already gets a warmpool one.
 * ({@code setFactory} also disposes the schedulers Reactor had cached, so none made before stays in
 * use.) Every pool the factory makes goes to {@link FactoryPools}, for the metrics. When the context
 * closes, {@code Schedulers.resetFactory()} restores Reactor's own schedulers and disposes the
 * warmpool ones, closing their pools. Reactor's factory is global to the JVM: with two such contexts
 * in one JVM, the last started wins and the first closed resets it.
 */
final class ReactorBoundedElastic implements BeanFactoryPostProcessor, DisposableBean, Ordered {
  @Override
  public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
    FactoryPools pools = new FactoryPools();
    beanFactory.registerSingleton(FactoryPools.BEAN_NAME, pools);
    Schedulers.setFactory(PoolSchedulers.factory(pools));
  }

  @Override
  public void destroy() {
    Schedulers.resetFactory();
  }

  @Override
  public int getOrder() {
    return Ordered.HIGHEST_PRECEDENCE;
  }
}
