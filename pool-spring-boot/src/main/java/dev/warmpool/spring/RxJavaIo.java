package dev.warmpool.spring;

import dev.warmpool.WorkerPool;
import dev.warmpool.rxjava3.PoolSchedulers;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.plugins.RxJavaPlugins;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanNameAware;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.core.Ordered;

/**
 * {@code warmpool.rxjava.io=<pool>}: RxJava's {@code Schedulers.io()} runs on the {@link WorkerPool}
 * bean of that name, as {@link PoolSchedulers#installAsIo} does, from before any ordinary bean is
 * created until the pool closes.
 *
 * <p>It runs as a bean factory post-processor: it checks that the bean exists (else the start-up
 * fails naming {@code warmpool.rxjava.io}) and installs an io handler that takes the pool bean the
 * first time {@code io()} is asked for, so a bean that uses {@code io()} while the context starts
 * already gets the pool. It is registered as depending on the pool bean, so the handler is removed
 * ({@link PoolSchedulers#resetIo()}) before the pool closes.
 */
final class RxJavaIo implements BeanFactoryPostProcessor, BeanNameAware, DisposableBean, Ordered {
  static final String KEY = "warmpool.rxjava.io";

  private final String poolName;
  private String beanName;

  RxJavaIo(String poolName) {
    this.poolName = poolName;
  }

  @Override
  public void setBeanName(String name) {
    this.beanName = name;
  }

  @Override
  public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
    if (!beanFactory.containsBean(poolName) || !beanFactory.isTypeMatch(poolName, WorkerPool.class)) {
      throw new InvalidConfigurationPropertyValueException(KEY, poolName,
          "There is no WorkerPool bean named '" + poolName + "'; WorkerPool beans: "
              + Arrays.toString(beanFactory.getBeanNamesForType(WorkerPool.class, true, false)));
    }
    beanFactory.registerDependentBean(poolName, beanName);
    RxJavaPlugins.setIoSchedulerHandler(new Handler(beanFactory, poolName));
  }

  @Override
  public void destroy() {
    PoolSchedulers.resetIo();
  }

  @Override
  public int getOrder() {
    return Ordered.HIGHEST_PRECEDENCE;
  }

  /** The io handler: a scheduler over the pool bean, made on first use. */
  private static final class Handler implements io.reactivex.rxjava3.functions.Function<Scheduler, Scheduler> {
    private final ConfigurableListableBeanFactory beanFactory;
    private final String poolName;
    private volatile @Nullable Scheduler scheduler;

    Handler(ConfigurableListableBeanFactory beanFactory, String poolName) {
      this.beanFactory = beanFactory;
      this.poolName = poolName;
    }

    @Override
    public Scheduler apply(Scheduler rxJavasOwn) {
      Scheduler s = scheduler;
      if (s == null) {
        synchronized (this) {
          s = scheduler;
          if (s == null) {
            s = PoolSchedulers.from(beanFactory.getBean(poolName, WorkerPool.class));
            scheduler = s;
          }
        }
      }
      return s;
    }
  }
}
