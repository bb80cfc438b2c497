package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitWaiting;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * r5 (adversarial review of version 4): adaptive LIFO must not starve work that no deadline can
 * shed. {@code WaitingLine.next} lets such an entry go first only when it is the head of the line;
 * one that waits behind a sheddable entry with a long deadline is passed over by every newer
 * task for as long as that entry's deadline.
 */
@Timeout(60)
class R5AdaptiveLifoTest {
  private static final Duration HOUR = Duration.ofHours(1);
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private static boolean eventually(java.util.function.BooleanSupplier c) {
    return PoolFixture.waitUntil(Duration.ofSeconds(20), c);
  }

  /** Waits until a clock entry (a task with its own deadline) expired: that much time passed. */
  private static void passes(WorkerPool pool, Duration atLeast) {
    TaskHandle clock = pool.enqueue(() -> { }, atLeast);
    assertThat(eventually(clock::isExpired)).as("clock entry expired").isTrue();
  }

  /**
   * No admitted work starves (section 3, adaptive LIFO; WaitingLine's notes: "once the oldest such
   * entry has waited a whole standing interval, it goes first"). An admitted lane's place waits
   * behind one task with an hour's deadline; while tasks keep arriving, every freed seat goes to
   * the newest task, and the lane is served only after all of them (and would wait the hour under
   * a steady stream).
   */
  @Test
  void guarantee6_anAdmittedLaneBehindASheddableHeadIsNotStarvedByNewerTasks() {
    WorkerPool pool = fixture.pool("r5lifo", b -> b.capacity(1).maxIdle(HOUR)
        .adaptiveLifo(true).maxWaitInLine(HOUR));
    SerialExecutor lane = pool.newSerialExecutor();
    CountDownLatch seated = new CountDownLatch(1);
    lane.execute(seated::countDown);
    PoolFixture.await(seated);
    PoolFixture.Gate gate = fixture.occupy(pool);
    List<String> order = new CopyOnWriteArrayList<>();
    pool.enqueue(() -> order.add("head")); // sheddable, but only after an hour
    awaitWaiting(pool, 1);
    lane.execute(() -> order.add("lane")); // admitted: joins behind it, without a deadline
    awaitWaiting(pool, 2);
    AtomicInteger stream = new AtomicInteger();
    Runnable[] next = new Runnable[1];
    next[0] = () -> {
      int n = stream.incrementAndGet();
      order.add("t" + n);
      if (n < 20) {
        pool.enqueue(next[0]); // a steady stream of newer tasks
      }
    };
    pool.enqueue(next[0]);
    passes(pool, Duration.ofMillis(150)); // the line has stood longer than its 100 ms
    gate.open();
    assertThat(eventually(() -> order.size() == 22)).isTrue();
    assertThat(order.indexOf("lane"))
        .as("the lane waited a whole standing interval; order %s", order).isLessThanOrEqualTo(1);
  }
}
