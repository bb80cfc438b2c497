package dev.warmpool.spring;

import static dev.warmpool.spring.Runners.warmpool;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.WorkerPool;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.core.task.TaskDecorator;

/** Spring {@code TaskDecorator} beans become the pools' task decorator, as Boot does for its executors. */
class TaskDecoratorTest {
  static final ThreadLocal<String> CONTEXT = new ThreadLocal<>();

  /** Carries the submitting thread's {@link #CONTEXT} to the task, as an MDC or tracing decorator would. */
  static TaskDecorator carryingContext() {
    return task -> {
      String captured = CONTEXT.get();
      return () -> {
        CONTEXT.set(captured);
        try {
          task.run();
        } finally {
          CONTEXT.remove();
        }
      };
    };
  }

  @Test
  void oneDecoratorBeanCarriesTheSubmittersContextIntoTheTask() {
    warmpool().withBean(TaskDecorator.class, TaskDecoratorTest::carryingContext)
        .withPropertyValues("warmpool.pools.db.capacity=2").run(context -> {
          WorkerPool db = context.getBean("db", WorkerPool.class);
          CONTEXT.set("request-42");
          try {
            assertThat(db.submit(CONTEXT::get).get()).isEqualTo("request-42");
          } finally {
            CONTEXT.remove();
          }
        });
  }

  @Test
  void severalDecoratorBeansAreAppliedInTheirOrder() {
    warmpool().withUserConfiguration(TwoDecorators.class)
        .withPropertyValues("warmpool.pools.db.capacity=2").run(context -> {
          TwoDecorators.DECORATED.clear();
          context.getBean("db", WorkerPool.class).submit(() -> {}).get();
          assertThat(TwoDecorators.DECORATED).containsExactly("first", "second");
        });
  }

  @Test
  void noDecoratorBeanTasksRunAsSubmitted() {
    warmpool().withPropertyValues("warmpool.pools.db.capacity=2").run(context -> {
      CONTEXT.set("not carried");
      try {
        assertThat(context.getBean("db", WorkerPool.class).submit(CONTEXT::get).get()).isNull();
      } finally {
        CONTEXT.remove();
      }
    });
  }

  @Configuration(proxyBeanMethods = false)
  static class TwoDecorators {
    static final List<String> DECORATED = new CopyOnWriteArrayList<>();

    @Bean
    @Order(2)
    TaskDecorator second() {
      return task -> {
        DECORATED.add("second");
        return task;
      };
    }

    @Bean
    @Order(1)
    TaskDecorator first() {
      return task -> {
        DECORATED.add("first");
        return task;
      };
    }
  }
}
