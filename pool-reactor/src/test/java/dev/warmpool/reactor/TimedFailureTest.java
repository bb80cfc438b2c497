package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Scheduler;

/**
 * Issue 12, fault 8 (guarantee 8): a delayed task that throws reaches the pool's failure handler
 * and counts as failed, on the scheduler and on a worker alike. v1 reported it to the thread's
 * handler directly and counted it as completed.
 */
class TimedFailureTest {
  private final List<Throwable> handled = new CopyOnWriteArrayList<>();
  private final WorkerPool pool = WorkerPool.builder().name("timed-failures").capacity(2)
      .failureHandler((t, e) -> handled.add(e)).build();

  @AfterEach
  void close() {
    pool.shutdownNow();
  }

  @Test
  void delayedTasksThatThrowReachTheFailureHandlerAndCountAsFailed_fault8() {
    Scheduler s = PoolSchedulers.from(pool);
    IllegalStateException direct = new IllegalStateException("direct, delayed");
    IllegalStateException onWorker = new IllegalStateException("worker, delayed");
    s.schedule(() -> {
      throw direct;
    }, 1, TimeUnit.MILLISECONDS);
    Scheduler.Worker w = s.createWorker();
    w.schedule(() -> {
      throw onWorker;
    }, 1, TimeUnit.MILLISECONDS);

    await().atMost(Duration.ofSeconds(10)).until(() -> handled.size() == 2
        && pool.stats().failed() == 2);
    assertThat(handled).containsExactlyInAnyOrder(direct, onWorker);
    assertThat(pool.stats().completed()).as("completed (%s)", pool.stats()).isZero();
    w.dispose();
  }
}
