package dev.warmpool.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * DESIGN section 6, "Boot's own executors stay": pool beans are {@code Executor}s and
 * {@code ScheduledExecutorService}s, yet Boot's {@code applicationTaskExecutor} and
 * {@code taskScheduler} stay as they are without warmpool; the application's own beans still make
 * Boot back off.
 */
class BootExecutorsStayTest {

  static ApplicationContextRunner withBootsTaskConfiguration() {
    return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(
        TaskExecutionAutoConfiguration.class, TaskSchedulingAutoConfiguration.class,
        WarmpoolAutoConfiguration.class));
  }

  @Test
  void bootsExecutorsStay_applicationTaskExecutorIsBootsAndHonoursSpringTaskExecution() {
    withBootsTaskConfiguration().withPropertyValues("warmpool.pools.db.capacity=4",
        "warmpool.pools.http.capacity=2", "warmpool.pools.http.primary=true",
        "spring.task.execution.pool.core-size=2", "spring.task.execution.pool.max-size=3").run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean("applicationTaskExecutor"))
              .isInstanceOfSatisfying(ThreadPoolTaskExecutor.class,
                  boots -> assertThat(boots.getMaxPoolSize()).isEqualTo(3));
        });
  }

  @Test
  void bootsExecutorsStay_taskSchedulerIsBootsAndHonoursSpringTaskScheduling() {
    withBootsTaskConfiguration().withUserConfiguration(Scheduling.class)
        .withPropertyValues("warmpool.pools.db.capacity=4", "spring.task.scheduling.pool.size=2")
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean("taskScheduler"))
              .isInstanceOfSatisfying(ThreadPoolTaskScheduler.class,
                  boots -> assertThat(boots.getScheduledThreadPoolExecutor().getCorePoolSize())
                      .isEqualTo(2));
        });
  }

  @Test
  void bootsExecutorsStay_theApplicationsOwnExecutorStillMakesBootBackOff() {
    withBootsTaskConfiguration().withBean("own", Executor.class, () -> Runnable::run)
        .withPropertyValues("warmpool.pools.db.capacity=4")
        .run(context -> assertThat(context).doesNotHaveBean("applicationTaskExecutor"));
  }

  @Test
  void bootsExecutorsStay_theApplicationsOwnScheduledExecutorServiceStillMakesBootBackOff() {
    withBootsTaskConfiguration().withUserConfiguration(Scheduling.class)
        .withBean("own", ScheduledExecutorService.class, Executors::newSingleThreadScheduledExecutor)
        .withPropertyValues("warmpool.pools.db.capacity=4")
        .run(context -> assertThat(context).doesNotHaveBean("taskScheduler"));
  }

  @Configuration(proxyBeanMethods = false)
  @EnableScheduling
  static class Scheduling {}
}
