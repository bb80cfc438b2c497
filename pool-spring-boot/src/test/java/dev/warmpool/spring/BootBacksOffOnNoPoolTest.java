package dev.warmpool.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionEvaluationReport;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.AbstractApplicationContextRunner;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * DESIGN section 6, "Boot's own executors stay", for every auto-configuration on the class path:
 * the same application (all of Boot's auto-configuration, {@code @EnableAsync},
 * {@code @EnableScheduling}, Actuator and Micrometer), started without pools and with pools of
 * every kind (blocking, nonblocking, primary, a subpool), decides every condition of every
 * auto-configuration that is not warmpool's the same way, and has the same beans apart from the
 * pools. The auto-configurations that back off on an {@code Executor}, {@code ExecutorService},
 * {@code ScheduledExecutorService}, {@code TaskExecutor} or {@code TaskScheduler} bean (Boot 4.0.x
 * and 3.5.x: {@code TaskExecutionAutoConfiguration} and {@code TaskSchedulingAutoConfiguration};
 * the rest take Boot's executors by name, see the README) are among them. Checked for a plain, a
 * servlet and a reactive web application context.
 */
class BootBacksOffOnNoPoolTest {
  private static final String[] POOLS = {"warmpool.pools.db.capacity=4",
      "warmpool.pools.http.capacity=2", "warmpool.pools.http.nonblocking=true",
      "warmpool.pools.http.primary=true", "warmpool.pools.pay.parent=db",
      "warmpool.pools.pay.capacity=2"};
  private static final Set<String> POOL_NAMES = Set.of("db", "http", "pay");

  @Test
  void bootsExecutorsStay_noAutoConfigurationDecidesOtherwiseWithPools() {
    assertSameDecisions(new ApplicationContextRunner());
  }

  @Test
  void bootsExecutorsStay_noServletAutoConfigurationDecidesOtherwiseWithPools() {
    assertSameDecisions(new WebApplicationContextRunner());
  }

  @Test
  void bootsExecutorsStay_noReactiveAutoConfigurationDecidesOtherwiseWithPools() {
    assertSameDecisions(new ReactiveWebApplicationContextRunner()
        .withClassLoader(new FilteredClassLoader("org.apache.catalina", "org.apache.tomcat")));
  }

  private static <R extends AbstractApplicationContextRunner<R, ?, ?>> void assertSameDecisions(
      R runner) {
    R app = runner.withUserConfiguration(App.class);
    Decisions without = decisions(app);
    Decisions with = decisions(app.withPropertyValues(POOLS));
    assertThat(with.beans).containsAll(POOL_NAMES).contains("warmpoolHealthContributor");
    assertThat(with.beans).contains("applicationTaskExecutor", "taskScheduler");
    assertThat(with.outcomes).isEqualTo(without.outcomes);
    Set<String> beansWithoutPools = new TreeSet<>(with.beans);
    beansWithoutPools.removeAll(POOL_NAMES);
    beansWithoutPools.remove("warmpoolHealthContributor");
    assertThat(beansWithoutPools).isEqualTo(without.beans);
  }

  /**
   * Whether each condition source matched, and the bean names (warmpool's configuration classes
   * left out of both: their own conditions, health's, decide otherwise with pools).
   */
  private record Decisions(Map<String, Boolean> outcomes, Set<String> beans) {}

  private static <R extends AbstractApplicationContextRunner<R, ?, ?>> Decisions decisions(
      R runner) {
    AtomicReference<Decisions> decisions = new AtomicReference<>();
    runner.run(context -> {
      assertThat(context).hasNotFailed();
      ConfigurableApplicationContext started = (ConfigurableApplicationContext) context;
      Map<String, Boolean> outcomes = new TreeMap<>();
      ConditionEvaluationReport.get(started.getBeanFactory()).getConditionAndOutcomesBySource()
          .forEach((source, conditions) -> {
            if (!source.startsWith("dev.warmpool.")) {
              outcomes.put(source, conditions.isFullMatch());
            }
          });
      Set<String> beans = new TreeSet<>(Set.of(started.getBeanDefinitionNames()));
      beans.removeIf(name -> name.startsWith("dev.warmpool."));
      decisions.set(new Decisions(outcomes, beans));
    });
    return decisions.get();
  }

  // no component scan: the other tests' configurations live in this package
  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  @EnableAsync
  @EnableScheduling
  static class App {}
}
