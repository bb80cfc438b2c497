package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitWaiting;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review r6: the anti-starvation rule of adaptive LIFO (DESIGN section 3; WaitingLine's notes:
 * "work that can never be shed ... is not starved: ... once the oldest such entry has waited a whole
 * standing interval, it goes first"). Each test stands a LIFO line (no controlled delay: it stands
 * after 100 ms), puts work that no deadline can shed in it, and then feeds a steady stream of newer
 * sheddable tasks (an hour's deadline each) while the one seat keeps freeing: the unsheddable entry
 * must be served before the stream ends (it has waited well over a standing interval when the seat
 * first frees).
 */
@Timeout(120)
class R6LifoStarvationTest {
  private static final Duration HOUR = Duration.ofHours(1);
  private static final int STREAM = 20;
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private WorkerPool pool(UnaryOperator<WorkerPool.Builder> config) {
    return fixture.pool("r6lifo", b -> config.apply(b.capacity(1).maxIdle(HOUR).adaptiveLifo(true)));
  }

  private static boolean eventually(BooleanSupplier c) {
    return PoolFixture.waitUntil(Duration.ofSeconds(20), c);
  }

  /** Waits until a clock entry (a task with its own deadline) expired: that much time has passed. */
  private static void passes(WorkerPool pool, Duration atLeast) {
    TaskHandle clock = pool.enqueue(() -> { }, atLeast);
    assertThat(eventually(clock::isExpired)).as("clock entry expired").isTrue();
  }

  /** Enqueues a stream of STREAM tasks (each enqueues the next, with an hour's deadline). */
  private static void stream(WorkerPool pool, List<String> order) {
    AtomicInteger n = new AtomicInteger();
    Runnable[] next = new Runnable[1];
    next[0] = () -> {
      int i = n.incrementAndGet();
      order.add("t" + i);
      if (i < STREAM) {
        pool.enqueue(next[0], HOUR);
      }
    };
    pool.enqueue(next[0], HOUR);
  }

  /**
   * A lane whose entry waits for its first seat (with the pool's line deadline armed on it) and is
   * then admitted while it waits (admitted work enters it: {@code executeAdmitted}, as an adapter
   * does, or a due delayed task). From then on the entry never expires (its kind says no), but it
   * still carries its timer and joined the line as unadmitted, so the line treats it as sheddable:
   * it is neither the "oldest admitted" nor a timer-less head, and LIFO serves every newer task
   * first, for as long as they keep coming (up to the line's first empty moment).
   */
  @Test

  void guarantee6_aLaneAdmittedWhileItsEntryWaitsIsNotStarvedUnderLifo() {
    WorkerPool pool = pool(b -> b.maxWaitInLine(HOUR));
    SerialExecutor lane = pool.newSerialExecutor();
    PoolFixture.Gate gate = fixture.occupy(pool);
    List<String> order = new CopyOnWriteArrayList<>();
    lane.execute(() -> order.add("lane")); // first dispatch: waits in line, with a deadline
    awaitWaiting(pool, 1);
    lane.executeAdmitted(() -> order.add("lane2")); // the lane, one unit, is admitted now
    stream(pool, order);
    awaitWaiting(pool, 2);
    passes(pool, Duration.ofMillis(150)); // the line has stood longer than its 100 ms
    gate.open();
    assertThat(eventually(() -> order.size() == STREAM + 2)).isTrue();
    assertThat(order.indexOf("lane"))
        .as("an admitted lane waited a whole standing interval; order %s", order)
        .isLessThanOrEqualTo(1);
  }

  /** The same through a due delayed task, which admits the lane when it enters it. */
  @Test

  void guarantee6_aLaneAdmittedByADueTimerWhileItsEntryWaitsIsNotStarvedUnderLifo() {
    WorkerPool pool = pool(b -> b.maxWaitInLine(HOUR));
    SerialExecutor lane = pool.newSerialExecutor();
    PoolFixture.Gate gate = fixture.occupy(pool);
    List<String> order = new CopyOnWriteArrayList<>();
    lane.execute(() -> order.add("lane"));
    awaitWaiting(pool, 1);
    java.util.concurrent.ScheduledFuture<?> due =
        lane.schedule(() -> order.add("timer"), 1, TimeUnit.MILLISECONDS);
    stream(pool, order);
    awaitWaiting(pool, 2);
    passes(pool, Duration.ofMillis(150));
    assertThat(due.isDone()).as("the timer entered the lane (it waits there)").isFalse();
    gate.open();
    assertThat(eventually(() -> order.size() == STREAM + 2)).isTrue();
    assertThat(order.indexOf("lane"))
        .as("an admitted lane waited a whole standing interval; order %s", order)
        .isLessThanOrEqualTo(1);
  }

  /**
   * A caller blocked in {@code execute} in a pool without a line deadline has no timer: nothing can
   * shed it, so it may leave only by being served. Behind one task with a per-task deadline (an
   * hour) it is neither the head nor admitted, and LIFO serves every newer task first: it waits up
   * to an hour.
   */
  @Test

  void guarantee4_aBlockedCallerWithoutADeadlineIsNotStarvedUnderLifo() {
    WorkerPool pool = pool(b -> b);
    PoolFixture.Gate gate = fixture.occupy(pool);
    List<String> order = new CopyOnWriteArrayList<>();
    pool.enqueue(() -> order.add("head"), HOUR); // sheddable, but only after an hour
    awaitWaiting(pool, 1);
    PoolFixture.Caller<Void> caller = fixture.call("execute",
        () -> pool.execute(() -> order.add("caller")));
    awaitWaiting(pool, 2);
    stream(pool, order);
    awaitWaiting(pool, 3);
    passes(pool, Duration.ofMillis(150));
    gate.open();
    assertThat(caller.outcome(Duration.ofSeconds(20))).isNull();
    assertThat(eventually(() -> order.size() == STREAM + 2)).isTrue();
    assertThat(order.indexOf("caller"))
        .as("a timer-less caller waited a whole standing interval; order %s", order)
        .isLessThanOrEqualTo(1);
  }

  /** HELD: an admitted lane (it had a seat before) behind a stream is served first (r5's fix). */
  @Test
  void heldAnAdmittedLaneJoiningAsAdmittedIsServedFirst() {
    WorkerPool pool = pool(b -> b.maxWaitInLine(HOUR));
    SerialExecutor lane = pool.newSerialExecutor();
    java.util.concurrent.CountDownLatch seated = new java.util.concurrent.CountDownLatch(1);
    lane.execute(seated::countDown);
    PoolFixture.await(seated);
    PoolFixture.Gate gate = fixture.occupy(pool);
    List<String> order = new CopyOnWriteArrayList<>();
    lane.execute(() -> order.add("lane"));
    awaitWaiting(pool, 1);
    stream(pool, order);
    awaitWaiting(pool, 2);
    passes(pool, Duration.ofMillis(150));
    gate.open();
    assertThat(eventually(() -> order.size() == STREAM + 1)).isTrue();
    assertThat(order.indexOf("lane")).as("order %s", order).isZero();
  }

  /** An admitted lane: it had a seat once, so its next dispatch joins the line as admitted. */
  private SerialExecutor admittedLane(WorkerPool pool) {
    SerialExecutor lane = pool.newSerialExecutor();
    java.util.concurrent.CountDownLatch seated = new java.util.concurrent.CountDownLatch(1);
    lane.execute(seated::countDown);
    PoolFixture.await(seated);
    return lane;
  }

  /**
   * HELD: the pointer's entry leaves (its lane closes, cancelling its place); the pointer moves to
   * the next admitted entry behind it, across sheddable and blocked ones, which goes first.
   */
  @Test
  void heldWhenThePointedAtEntryLeavesTheNextAdmittedOneIsServedFirst() {
    WorkerPool pool = pool(b -> b.maxWaitInLine(HOUR));
    SerialExecutor first = admittedLane(pool);
    SerialExecutor second = admittedLane(pool);
    PoolFixture.Gate gate = fixture.occupy(pool);
    List<String> order = new CopyOnWriteArrayList<>();
    pool.enqueue(() -> order.add("head"));
    first.execute(() -> order.add("first"));
    pool.enqueue(() -> order.add("middle"));
    second.execute(() -> order.add("second"));
    stream(pool, order);
    awaitWaiting(pool, 5);
    first.close();
    awaitWaiting(pool, 4);
    passes(pool, Duration.ofMillis(150));
    gate.open();
    assertThat(eventually(() -> order.size() == STREAM + 3)).isTrue();
    assertThat(order.indexOf("second")).as("order %s", order).isZero();
    assertThat(order).doesNotContain("first");
  }

  /**
   * HELD: shutdownNow hands back everything (the pointer's entry too), reboot, and the line refills:
   * an admitted lane of the new generation is served first again.
   */
  @Test
  void heldAfterShutdownNowAndRebootTheRefilledLineServesItsAdmittedLaneFirst() throws Exception {
    WorkerPool pool = pool(b -> b.maxWaitInLine(HOUR));
    SerialExecutor lane = admittedLane(pool);
    PoolFixture.Gate gate = fixture.occupy(pool);
    lane.execute(() -> { });
    pool.enqueue(() -> { });
    awaitWaiting(pool, 2);
    List<Runnable> back = pool.shutdownNow();
    assertThat(back).hasSize(2);
    gate.open();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    pool.reboot();
    SerialExecutor again = admittedLane(pool);
    PoolFixture.Gate gate2 = fixture.occupy(pool);
    List<String> order = new CopyOnWriteArrayList<>();
    pool.enqueue(() -> order.add("head"));
    again.execute(() -> order.add("lane"));
    stream(pool, order);
    awaitWaiting(pool, 3);
    passes(pool, Duration.ofMillis(150));
    gate2.open();
    assertThat(eventually(() -> order.size() == STREAM + 2)).isTrue();
    assertThat(order.indexOf("lane")).as("order %s", order).isZero();
  }
}
