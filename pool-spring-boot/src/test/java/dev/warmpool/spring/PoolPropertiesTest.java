package dev.warmpool.spring;

import static dev.warmpool.spring.Runners.assertRefused;
import static dev.warmpool.spring.Runners.warmpool;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.TaskHandle;
import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

/** {@code warmpool.pools.<name>.*}: each key reaches the pool, and a bad value stops the start-up naming it. */
class PoolPropertiesTest {

  @Test
  void eachEntryIsAWorkerPoolBeanNamedAfterItsKey() {
    warmpool().withPropertyValues("warmpool.pools.db.capacity=3", "warmpool.pools.http.capacity=5")
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBeansOfType(WorkerPool.class)).containsOnlyKeys("db", "http");
          WorkerPool db = context.getBean("db", WorkerPool.class);
          assertThat(db.name()).isEqualTo("db");
          AtomicReference<String> thread = new AtomicReference<>();
          db.submit(() -> thread.set(Thread.currentThread().getName())).get(5, TimeUnit.SECONDS);
          assertThat(thread.get()).startsWith("db-");
        });
  }

  @Test
  void noEntryNoPool() {
    warmpool().run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(context).doesNotHaveBean(WorkerPool.class);
      assertThat(context).hasSingleBean(WarmpoolProperties.class);
    });
  }

  @Test
  void capacitySetsThePoolsCapacity() {
    warmpool().withPropertyValues("warmpool.pools.db.capacity=7")
        .run(context -> assertThat(context.getBean("db", WorkerPool.class).capacity()).isEqualTo(7));
  }

  @Test
  void capacityZeroIsRefusedNamingTheKey() {
    warmpool().withPropertyValues("warmpool.pools.db.capacity=0").run(context -> {
      assertRefused(context, "warmpool.pools.db.capacity");
      assertThat(context.getStartupFailure()).hasMessage("Property warmpool.pools.db.capacity with"
          + " value '0' is invalid: capacity must be between 1 and 131072, was 0");
    });
  }

  @Test
  void maxIdleSetsTheIdleTime() {
    warmpool().withPropertyValues("warmpool.pools.db.max-idle=2s")
        .run(context -> assertThat(context.getBean("db", WorkerPool.class))
            .hasToString("workerPool(\"db\",capacity=" + WorkerPool.builder().build().capacity()
                + ",maxIdle=2s)"));
  }

  @Test
  void maxIdleZeroIsRefusedNamingTheKey() {
    warmpool().withPropertyValues("warmpool.pools.db.max-idle=0s")
        .run(context -> assertRefused(context, "warmpool.pools.db.max-idle"));
  }

  @Test
  void nonblockingRejectsAtOnceWhenEverySeatIsTaken() {
    warmpool().withPropertyValues("warmpool.pools.http.capacity=1", "warmpool.pools.http.nonblocking=true")
        .run(context -> {
          WorkerPool http = context.getBean("http", WorkerPool.class);
          CountDownLatch release = new CountDownLatch(1);
          http.execute(() -> Runners.block(release));
          assertThatThrownBy(() -> http.execute(() -> {})).isInstanceOf(PoolOverloadedException.class);
          assertThat(http.stats().rejected()).isEqualTo(1);
          release.countDown();
        });
  }

  @Test
  void blockingByDefaultTasksWaitInLine() {
    warmpool().withPropertyValues("warmpool.pools.db.capacity=1").run(context -> {
      WorkerPool db = context.getBean("db", WorkerPool.class);
      CountDownLatch release = new CountDownLatch(1);
      db.execute(() -> Runners.block(release));
      db.enqueue(() -> {});
      assertThat(db.stats().waiting()).isEqualTo(1);
      release.countDown();
    });
  }

  @Test
  void maxWaitingBoundsTheWaitingLine() {
    warmpool().withPropertyValues("warmpool.pools.db.capacity=1", "warmpool.pools.db.max-waiting=1")
        .run(context -> {
          WorkerPool db = context.getBean("db", WorkerPool.class);
          CountDownLatch release = new CountDownLatch(1);
          db.execute(() -> Runners.block(release));
          db.enqueue(() -> {});
          assertThatThrownBy(() -> db.enqueue(() -> {})).isInstanceOf(PoolOverloadedException.class);
          release.countDown();
        });
  }

  @Test
  void negativeMaxWaitingIsRefusedNamingTheKey() {
    warmpool().withPropertyValues("warmpool.pools.db.max-waiting=-1")
        .run(context -> assertRefused(context, "warmpool.pools.db.max-waiting"));
  }

  @Test
  void maxWaitInLineExpiresAnEntryThatWaitedTooLong() {
    expiresAnEntryBehindTheOneSeat("warmpool.pools.db.max-wait-in-line=50ms");
  }

  /** Pool db of capacity 1 with the given line settings: an entry behind its busy seat expires. */
  private static void expiresAnEntryBehindTheOneSeat(String... lineSettings) {
    warmpool().withPropertyValues("warmpool.pools.db.capacity=1").withPropertyValues(lineSettings)
        .run(context -> {
          WorkerPool db = context.getBean("db", WorkerPool.class);
          CountDownLatch release = new CountDownLatch(1);
          db.execute(() -> Runners.block(release));
          TaskHandle waiting = db.enqueue(() -> {});
          await().atMost(Duration.ofSeconds(5)).until(waiting::isExpired);
          assertThat(db.stats().expired()).isEqualTo(1);
          release.countDown();
        });
  }

  @Test
  void controlledDelayExpiresAnEntryOnceTheLineHasStood() {
    // No max-wait-in-line: only controlled delay can expire it (the line stands after 100 ms)
    expiresAnEntryBehindTheOneSeat("warmpool.pools.db.controlled-delay.target=20ms",
        "warmpool.pools.db.controlled-delay.interval=100ms");
  }

  @Test
  void adaptiveLifoServesTheNewestEntryWhileTheLineStands() {
    warmpool().withPropertyValues("warmpool.pools.db.capacity=1",
        "warmpool.pools.db.max-wait-in-line=1h", "warmpool.pools.db.adaptive-lifo=true")
        .run(context -> {
          WorkerPool db = context.getBean("db", WorkerPool.class);
          CountDownLatch release = new CountDownLatch(1);
          db.execute(() -> Runners.block(release));
          java.util.List<Integer> order = new java.util.concurrent.CopyOnWriteArrayList<>();
          for (int i = 0; i < 3; i++) {
            int n = i;
            db.enqueue(() -> order.add(n));
          }
          Thread.sleep(150); // the line stands after 100 ms without once being empty
          release.countDown();
          await().atMost(Duration.ofSeconds(5)).until(() -> order.size() == 3);
          assertThat(order).containsExactly(2, 1, 0);
        });
  }

  @Test
  void maxWaitInLineZeroIsRefusedNamingTheKey() {
    warmpool().withPropertyValues("warmpool.pools.db.max-wait-in-line=0ms")
        .run(context -> assertRefused(context, "warmpool.pools.db.max-wait-in-line"));
  }

  @Test
  @EnabledForJreRange(max = JRE.JAVA_20)
  void virtualThreadsOnAJvmWithoutThemIsRefusedNamingTheKey() {
    warmpool().withPropertyValues("warmpool.pools.vt.virtual-threads=true")
        .run(context -> assertRefused(context, "warmpool.pools.vt.virtual-threads"));
  }

  @Test
  @EnabledForJreRange(min = JRE.JAVA_21)
  void virtualThreadsMakesVirtualWorkers() {
    warmpool().withPropertyValues("warmpool.pools.vt.virtual-threads=true").run(context -> {
      WorkerPool vt = context.getBean("vt", WorkerPool.class);
      Object virtual = vt.submit(
          () -> Thread.class.getMethod("isVirtual").invoke(Thread.currentThread()))
          .get(5, TimeUnit.SECONDS);
      assertThat(virtual).isEqualTo(true);
    });
  }

  @Test
  void primaryPoolIsTheOneInjectedByType() {
    warmpool().withPropertyValues("warmpool.pools.a.capacity=1", "warmpool.pools.b.capacity=2",
        "warmpool.pools.b.primary=true")
        .run(context -> assertThat(context.getBean(WorkerPool.class).name()).isEqualTo("b"));
  }

  @Test
  void twoPrimaryPoolsAreRefusedNamingTheKey() {
    warmpool().withPropertyValues("warmpool.pools.a.primary=true", "warmpool.pools.b.primary=true")
        .run(context -> assertRefused(context, "warmpool.pools.b.primary"));
  }

  @Test
  void aPoolWhoseNameIsTakenByAnotherBeanIsRefused() {
    warmpool().withBean("db", String.class, () -> "not a pool")
        .withPropertyValues("warmpool.pools.db.capacity=2")
        .run(context -> assertRefused(context, "warmpool.pools.db"));
  }

  @Test
  void aValueThatIsNoNumberIsRefusedNamingTheKey() {
    warmpool().withPropertyValues("warmpool.pools.db.capacity=many").run(context -> {
      assertThat(context).hasFailed();
      assertThat(context.getStartupFailure()).hasStackTraceContaining("warmpool.pools.db.capacity");
    });
  }
}
