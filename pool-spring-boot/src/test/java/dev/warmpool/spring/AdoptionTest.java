package dev.warmpool.spring;

import static dev.warmpool.spring.BootExecutorsStayTest.withBootsTaskConfiguration;
import static dev.warmpool.spring.Runners.assertRefused;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.core.task.AsyncTaskExecutor;
import org.springframework.core.task.TaskRejectedException;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * DESIGN section 6, "Adoption on request": {@code warmpool.spring.task-executor} and
 * {@code warmpool.spring.task-scheduler} put Boot's {@code applicationTaskExecutor} and
 * {@code taskScheduler} beans on a pool.
 */
class AdoptionTest {

  @Test
  void adoption_taskExecutorMakesApplicationTaskExecutorAnAsyncTaskExecutorOnThePool() {
    withBootsTaskConfiguration().withPropertyValues("warmpool.pools.jobs.capacity=2",
        "warmpool.spring.task-executor=jobs").run(context -> {
          assertThat(context).hasNotFailed();
          Object executor = context.getBean("applicationTaskExecutor");
          assertThat(executor).isInstanceOf(AsyncTaskExecutor.class)
              .isNotInstanceOf(ThreadPoolTaskExecutor.class);
          AtomicReference<String> thread = new AtomicReference<>();
          ((AsyncTaskExecutor) executor).submit(() -> thread.set(Thread.currentThread().getName()))
              .get(5, TimeUnit.SECONDS);
          assertThat(thread.get()).startsWith("jobs-");
          assertThat(context.getBean("jobs", WorkerPool.class).stats().submitted()).isEqualTo(1);
        });
  }

  @Test
  void adoption_aRejectionIsTaskRejectedExceptionCausedByPoolOverloadedException() {
    withBootsTaskConfiguration().withPropertyValues("warmpool.pools.jobs.capacity=1",
        "warmpool.pools.jobs.nonblocking=true", "warmpool.spring.task-executor=jobs").run(context -> {
          AsyncTaskExecutor executor = context.getBean("applicationTaskExecutor", AsyncTaskExecutor.class);
          CountDownLatch release = new CountDownLatch(1);
          executor.execute(() -> Runners.block(release));
          try {
            assertThatThrownBy(() -> executor.execute(() -> {}))
                .isInstanceOf(TaskRejectedException.class)
                .hasCauseInstanceOf(PoolOverloadedException.class);
            assertThatThrownBy(() -> executor.submit(() -> {}))
                .isInstanceOf(TaskRejectedException.class)
                .hasCauseInstanceOf(PoolOverloadedException.class);
            assertThatThrownBy(() -> executor.submitCompletable(() -> "x"))
                .isInstanceOf(TaskRejectedException.class)
                .hasCauseInstanceOf(PoolOverloadedException.class);
          } finally {
            release.countDown();
          }
        });
  }

  @Test
  void adoption_executeNeverBlocksTheCallerOfABlockingPool() {
    withBootsTaskConfiguration().withPropertyValues("warmpool.pools.jobs.capacity=1",
        "warmpool.spring.task-executor=jobs").run(context -> {
          AsyncTaskExecutor executor = context.getBean("applicationTaskExecutor", AsyncTaskExecutor.class);
          WorkerPool jobs = context.getBean("jobs", WorkerPool.class);
          CountDownLatch release = new CountDownLatch(1);
          CountDownLatch ran = new CountDownLatch(1);
          executor.execute(() -> Runners.block(release));
          executor.execute(ran::countDown); // would block this thread if it were the pool's execute
          assertThat(jobs.stats().waiting()).isEqualTo(1);
          release.countDown();
          assertThat(ran.await(5, TimeUnit.SECONDS)).isTrue();
        });
  }

  @Test
  void adoption_taskSchedulerMakesTaskSchedulerATaskSchedulerOnThePoolsTimers() {
    withBootsTaskConfiguration().withUserConfiguration(BootExecutorsStayTest.Scheduling.class)
        .withPropertyValues("warmpool.pools.timers.capacity=2", "warmpool.spring.task-scheduler=timers")
        .run(context -> {
          assertThat(context).hasNotFailed();
          Object scheduler = context.getBean("taskScheduler");
          assertThat(scheduler).isInstanceOf(TaskScheduler.class)
              .isNotInstanceOf(ThreadPoolTaskScheduler.class);
          CountDownLatch ran = new CountDownLatch(1);
          AtomicReference<String> thread = new AtomicReference<>();
          ((TaskScheduler) scheduler).schedule(() -> {
            thread.set(Thread.currentThread().getName());
            ran.countDown();
          }, java.time.Instant.now().plus(Duration.ofMillis(20)));
          assertThat(ran.await(5, TimeUnit.SECONDS)).isTrue();
          assertThat(thread.get()).startsWith("timers-");
        });
  }

  @Test
  void adoption_taskSchedulerWorksWithoutEnableScheduling() {
    withBootsTaskConfiguration().withPropertyValues("warmpool.pools.timers.capacity=2",
        "warmpool.spring.task-scheduler=timers")
        .run(context -> assertThat(context.getBean("taskScheduler")).isInstanceOf(TaskScheduler.class));
  }

  @Test
  void adoption_taskExecutorWorksWhenTheApplicationsOwnExecutorMadeBootBackOff() {
    withBootsTaskConfiguration().withBean("own", Executor.class, () -> Runnable::run)
        .withPropertyValues("warmpool.pools.jobs.capacity=2", "warmpool.spring.task-executor=jobs")
        .run(context -> assertThat(context.getBean("applicationTaskExecutor"))
            .isInstanceOf(PoolTaskExecutor.class));
  }

  @Test
  void adoption_aNameThatIsNoPoolStopsTheStartUpNamingKeyAndValue() {
    withBootsTaskConfiguration().withPropertyValues("warmpool.pools.jobs.capacity=2",
        "warmpool.spring.task-executor=nosuch").run(context -> {
          assertRefused(context, "warmpool.spring.task-executor");
          assertThat(StrictBindingTest.rootMessage(context)).contains("'nosuch'").contains("[jobs]");
        });
    withBootsTaskConfiguration().withPropertyValues("warmpool.pools.jobs.capacity=2",
        "warmpool.spring.task-scheduler=nosuch").run(context -> {
          assertRefused(context, "warmpool.spring.task-scheduler");
          assertThat(StrictBindingTest.rootMessage(context)).contains("'nosuch'");
        });
  }

  @Test
  void adoption_theApplicationsOwnBeanUnderTheNameIsNotReplaced() {
    withBootsTaskConfiguration().withBean("applicationTaskExecutor", Executor.class, () -> Runnable::run)
        .withPropertyValues("warmpool.pools.jobs.capacity=2", "warmpool.spring.task-executor=jobs")
        .run(context -> assertRefused(context, "warmpool.spring.task-executor"));
  }
}
