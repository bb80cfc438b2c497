package dev.warmpool.spring;

import dev.warmpool.reactor.PoolSchedulers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.Ordered;
import org.springframework.core.task.TaskDecorator;
import reactor.core.scheduler.Schedulers;

/**
 * {@code warmpool.reactor.bounded-elastic=true}: Reactor's bounded-elastic schedulers are
 * warmpool-backed ({@link #factory}) while the context lives.
 *
 * <p>It installs the factory as a bean factory post-processor, so before any ordinary bean is
 * created: a bean that takes {@code Schedulers.boundedElastic()} in its constructor already gets a
 * warmpool one. It installs it with {@code Schedulers.setFactoryWithSnapshot}, which sets aside the
 * schedulers Reactor had cached instead of disposing them, and on close puts them back with
 * {@code Schedulers.resetFrom(snapshot)}: a {@code parallel()} or {@code single()} made before the
 * context started keeps running across its start and close (schedulers first cached while it lived
 * are disposed with it, as a Reactor snapshot does). Before that, the pools the factory made close
 * like the pool beans ({@code warmpool.shutdown.await-termination}, {@link GracefulClose}). Once every
 * singleton exists, they decorate their tasks with the context's {@code TaskDecorator} beans.
 *
 * <p>Reactor's factory is global to the JVM, and several contexts may install it (cached test
 * contexts): the last one started is in effect. Contexts may close in any order: the one in effect
 * puts back what it set aside; one that closes while a later one is in effect hands what it set aside
 * to that later one, whose snapshot held this one's schedulers (disposed then, as they would have
 * been). When the last closes, Reactor is as before the first started.
 */
final class ReactorBoundedElastic implements BeanFactoryPostProcessor, SmartInitializingSingleton,
    DisposableBean, Ordered {
  /** Guarded by the class: the installed ones, in start order; the last is in effect. */
  private static final List<ReactorBoundedElastic> INSTALLED = new ArrayList<>();

  private final Duration awaitTermination;
  private final FactoryPools pools = new FactoryPools();
  private ConfigurableListableBeanFactory beanFactory;
  /** Guarded by the class: Reactor's state that this one's installation set aside. */
  private Schedulers.Snapshot setAside;

  ReactorBoundedElastic(Duration awaitTermination) {
    this.awaitTermination = awaitTermination;
  }

  @Override
  public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
    this.beanFactory = beanFactory;
    beanFactory.registerSingleton(FactoryPools.BEAN_NAME, pools);
    install(this);
  }

  @Override
  public void afterSingletonsInstantiated() {
    pools.useDecorator(WorkerPoolFactoryBean.combined(
        beanFactory.getBeanProvider(TaskDecorator.class).orderedStream().toList()));
  }

  @Override
  public void destroy() {
    // first the grace: resetFrom would dispose the cached scheduler, shutting its pool down now
    pools.close(awaitTermination);
    uninstall(this);
  }

  /**
   * pool-reactor's factory (Reactor's parameters, a thread cap above core's maximum capped, so
   * {@code newBoundedElastic(Integer.MAX_VALUE, ..)} works), with the context's task decorator on
   * every pool's builder, and every pool handed to {@code pools} (grace on close, metrics).
   */
  static Schedulers.Factory factory(FactoryPools pools) {
    return PoolSchedulers.factory(builder -> builder.taskDecorator(pools::decorate), pools);
  }

  private static synchronized void install(ReactorBoundedElastic context) {
    context.setAside = Schedulers.setFactoryWithSnapshot(factory(context.pools));
    INSTALLED.add(context);
  }

  private static synchronized void uninstall(ReactorBoundedElastic context) {
    int at = INSTALLED.indexOf(context);
    if (at < 0) {
      return;
    }
    INSTALLED.remove(at);
    if (at == INSTALLED.size()) {
      Schedulers.resetFrom(context.setAside);
    } else {
      ReactorBoundedElastic later = INSTALLED.get(at);
      later.setAside.dispose();
      later.setAside = context.setAside;
    }
  }

  @Override
  public int getOrder() {
    return Ordered.HIGHEST_PRECEDENCE;
  }
}
