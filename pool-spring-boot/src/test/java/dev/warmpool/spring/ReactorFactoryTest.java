package dev.warmpool.spring;

import static dev.warmpool.spring.ReactorBoundedElasticTest.unwrapped;
import static dev.warmpool.spring.Runners.warmpool;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.task.TaskDecorator;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * DESIGN section 6, "Reactor factory done right": {@code warmpool.reactor.bounded-elastic} sets
 * Reactor's other schedulers aside instead of disposing them, closes its pools with the pool beans'
 * grace, decorates their tasks, and takes any thread cap.
 */
class ReactorFactoryTest {

  @AfterEach
  void restoreReactor() {
    Schedulers.resetFactory();
  }

  /** Counts ticks of an interval and lets a test wait for the next few, with no sleep. */
  static final class Ticks {
    private final AtomicReference<CountDownLatch> next = new AtomicReference<>(new CountDownLatch(0));

    void tick() {
      next.get().countDown();
    }

    boolean keepComing() throws InterruptedException {
      CountDownLatch three = new CountDownLatch(3);
      next.set(three);
      return three.await(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void reactorFactory_aFluxIntervalOnParallelKeepsTickingAcrossAContextsStartAndClose()
      throws InterruptedException {
    Scheduler parallel = Schedulers.parallel();
    Ticks ticks = new Ticks();
    Disposable interval = Flux.interval(Duration.ofMillis(5), parallel).subscribe(i -> ticks.tick());
    try {
      warmpool().withPropertyValues("warmpool.reactor.bounded-elastic=true").run(context -> {
        assertThat(unwrapped(Schedulers.boundedElastic())).startsWith("workerPool(\"boundedElastic\"");
        assertThat(ticks.keepComing()).as("ticks while the context lives").isTrue();
      });
      assertThat(ticks.keepComing()).as("ticks after the context closed").isTrue();
      assertThat(Schedulers.parallel()).isSameAs(parallel);
      assertThat(parallel.isDisposed()).isFalse();
      assertThat(unwrapped(Schedulers.boundedElastic())).doesNotContain("workerPool");
    } finally {
      interval.dispose();
    }
  }

  @Test
  void reactorFactory_factoryPoolsCloseWithTheGraceOfThePoolBeans() {
    AtomicReference<WorkerPool> pool = new AtomicReference<>();
    AtomicBoolean finished = new AtomicBoolean();
    AtomicBoolean interrupted = new AtomicBoolean();
    warmpool().withPropertyValues("warmpool.reactor.bounded-elastic=true",
        "warmpool.shutdown.await-termination=10s").run(context -> {
          context.getBean(FactoryPools.class).forEachNowAndLater(pool::set);
          CountDownLatch started = new CountDownLatch(1);
          Schedulers.boundedElastic().schedule(() -> {
            started.countDown();
            try {
              Thread.sleep(200); // work still running when the context closes
              finished.set(true);
            } catch (InterruptedException e) {
              interrupted.set(true);
            }
          });
          assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
        });
    assertThat(interrupted).as("interrupted by the close").isFalse();
    assertThat(finished).as("finished within the grace").isTrue();
    assertThat(pool.get().isTerminated()).isTrue();
  }

  @Test
  void reactorFactory_factoryPoolsGetTheApplicationsTaskDecorator() {
    warmpool().withBean(TaskDecorator.class, TaskDecoratorTest::carryingContext)
        .withPropertyValues("warmpool.reactor.bounded-elastic=true").run(context -> {
          TaskDecoratorTest.CONTEXT.set("request-7");
          try {
            String seen = Mono.fromCallable(TaskDecoratorTest.CONTEXT::get)
                .subscribeOn(Schedulers.boundedElastic()).block(Duration.ofSeconds(5));
            assertThat(seen).isEqualTo("request-7");
          } finally {
            TaskDecoratorTest.CONTEXT.remove();
          }
        });
  }

  @Test
  void reactorFactory_newBoundedElasticTakesAnyThreadCap() {
    warmpool().withPropertyValues("warmpool.reactor.bounded-elastic=true").run(context -> {
      Scheduler huge = Schedulers.newBoundedElastic(Integer.MAX_VALUE, Integer.MAX_VALUE, "huge");
      try {
        // core's maximum capacity
        assertThat(huge.toString()).startsWith("workerPool(\"huge\",capacity=131072,");
        assertThat(Mono.fromCallable(() -> Thread.currentThread().getName()).subscribeOn(huge)
            .block(Duration.ofSeconds(5))).startsWith("huge-");
      } finally {
        huge.dispose();
      }
    });
  }

  @SpringBootConfiguration
  @ImportAutoConfiguration(WarmpoolAutoConfiguration.class)
  static class App {}

  static ConfigurableApplicationContext start() {
    return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
        .properties("warmpool.reactor.bounded-elastic=true").run();
  }

  @Test
  void reactorFactory_contextsThatCloseInAnyOrderLeaveReactorAsItWas() throws InterruptedException {
    Scheduler parallel = Schedulers.parallel();
    Ticks ticks = new Ticks();
    Disposable interval = Flux.interval(Duration.ofMillis(5), parallel).subscribe(i -> ticks.tick());
    try {
      ConfigurableApplicationContext first = start();
      ConfigurableApplicationContext second = start();
      first.close(); // not the one in effect: the second's factory stays
      assertThat(unwrapped(Schedulers.boundedElastic())).startsWith("workerPool(\"boundedElastic\"");
      String thread = Mono.fromCallable(() -> Thread.currentThread().getName())
          .subscribeOn(Schedulers.boundedElastic()).block(Duration.ofSeconds(5));
      assertThat(thread).startsWith("boundedElastic-");
      second.close();
      assertThat(unwrapped(Schedulers.boundedElastic())).doesNotContain("workerPool");
      assertThat(Schedulers.parallel()).isSameAs(parallel);
      assertThat(ticks.keepComing()).as("parallel() ticks after both closed").isTrue();
    } finally {
      interval.dispose();
    }
  }
}
