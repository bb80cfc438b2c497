package dev.warmpool.spring;

import static dev.warmpool.spring.Runners.assertRefused;
import static dev.warmpool.spring.Runners.warmpool;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The pools close with the context: {@code shutdown()}, up to {@code warmpool.shutdown.await-termination}
 * for running and waiting tasks, then {@code shutdownNow()}.
 */
class GracefulCloseTest {

  @Test
  void awaitTerminationIs30SecondsByDefault() {
    warmpool().run(context -> assertThat(context.getBean(WarmpoolProperties.class).getShutdown()
        .getAwaitTermination()).isEqualTo(Duration.ofSeconds(30)));
  }

  @Test
  void runningAndWaitingTasksFinishWithinAwaitTermination() {
    AtomicReference<WorkerPool> pool = new AtomicReference<>();
    AtomicInteger finished = new AtomicInteger();
    AtomicBoolean interrupted = new AtomicBoolean();
    warmpool().withPropertyValues("warmpool.pools.db.capacity=1",
        "warmpool.shutdown.await-termination=10s").run(context -> {
          WorkerPool db = context.getBean("db", WorkerPool.class);
          pool.set(db);
          CountDownLatch started = new CountDownLatch(1);
          Runnable slow = () -> {
            started.countDown();
            try {
              Thread.sleep(200);
              finished.incrementAndGet();
            } catch (InterruptedException e) {
              interrupted.set(true);
            }
          };
          db.execute(slow);
          db.enqueue(slow); // waits in line behind the first
          started.await(5, TimeUnit.SECONDS);
        });
    assertThat(pool.get().isTerminated()).isTrue();
    assertThat(finished).hasValue(2);
    assertThat(interrupted).isFalse();
  }

  @Test
  void aTaskStillRunningAfterAwaitTerminationIsInterrupted() throws InterruptedException {
    AtomicReference<WorkerPool> pool = new AtomicReference<>();
    CountDownLatch interrupted = new CountDownLatch(1);
    long[] closeNanos = new long[1];
    warmpool().withPropertyValues("warmpool.pools.db.capacity=1",
        "warmpool.shutdown.await-termination=100ms").run(context -> {
          WorkerPool db = context.getBean("db", WorkerPool.class);
          pool.set(db);
          CountDownLatch started = new CountDownLatch(1);
          db.execute(() -> {
            started.countDown();
            try {
              Thread.sleep(30_000);
            } catch (InterruptedException e) {
              interrupted.countDown();
            }
          });
          assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
          closeNanos[0] = System.nanoTime();
        });
    long closeMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closeNanos[0]);
    assertThat(closeMillis).isLessThan(10_000);
    assertThat(pool.get().isShutdown()).isTrue();
    // shutdownNow interrupted the task; the close does not wait for the task to notice it
    assertThat(interrupted.await(10, TimeUnit.SECONDS)).as("the running task was interrupted")
        .isTrue();
  }

  @Test
  void negativeAwaitTerminationIsRefusedNamingTheKey() {
    warmpool().withPropertyValues("warmpool.shutdown.await-termination=-1s")
        .run(context -> assertRefused(context, "warmpool.shutdown.await-termination"));
  }
}
