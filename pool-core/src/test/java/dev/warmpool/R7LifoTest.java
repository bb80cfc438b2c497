package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitWaiting;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review r7: adaptive LIFO's pinned pointer ({@code WaitingLine.next}). The rule (DESIGN section 3,
 * WaitingLine's notes): while the line stands, an entry nothing can shed is never served newest
 * first, and "once the oldest such entry has waited a whole standing interval, it goes first,
 * wherever it waits". {@code next()} checks the pointer only when the newest entry is sheddable;
 * when the newest entry is itself pinned it answers FIFO (the head), so the oldest pinned entry
 * waits behind every sheddable entry ahead of it: each was passed over while the line stood, and
 * with a long deadline they can be many (up to maxWaiting).
 */
@Timeout(120)
class R7LifoTest {
  private static final Duration HOUR = Duration.ofHours(1);
  private static final int AHEAD = 20;
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private static boolean eventually(BooleanSupplier c) {
    return PoolFixture.waitUntil(Duration.ofSeconds(20), c);
  }

  /** Waits until a clock entry (a task with its own deadline) expired: that much time has passed. */
  private static void passes(WorkerPool pool, Duration atLeast) {
    TaskHandle clock = pool.enqueue(() -> { }, atLeast);
    assertThat(eventually(clock::isExpired)).as("clock entry expired").isTrue();
  }

  /**
   * Was a fault (review r7): sheddable tasks (an hour's deadline each), then two callers blocked in {@code execute}
   * (no line deadline: pinned). The line stands; the seat frees. The older caller has waited a
   * whole standing interval, so it must go first; since the newest entry (the younger caller) is
   * pinned too, the line serves FIFO and the older caller goes after all twenty tasks.
   */
  @Test
  void guarantee4_theOldestPinnedEntryGoesFirstAlsoWhenTheNewestEntryIsPinned() {
    WorkerPool pool = fixture.pool("r7lifo", b -> b.capacity(1).maxIdle(HOUR).adaptiveLifo(true));
    PoolFixture.Gate gate = fixture.occupy(pool);
    List<String> order = new CopyOnWriteArrayList<>();
    for (int i = 0; i < AHEAD; i++) {
      String name = "t" + i;
      pool.enqueue(() -> order.add(name), HOUR);
    }
    awaitWaiting(pool, AHEAD);
    PoolFixture.Caller<Void> older = fixture.call("older",
        () -> pool.execute(() -> order.add("older")));
    awaitWaiting(pool, AHEAD + 1);
    PoolFixture.Caller<Void> younger = fixture.call("younger",
        () -> pool.execute(() -> order.add("younger")));
    awaitWaiting(pool, AHEAD + 2);
    passes(pool, Duration.ofMillis(150)); // the line has stood longer than its 100 ms
    gate.open();
    assertThat(older.outcome(Duration.ofSeconds(20))).isNull();
    assertThat(younger.outcome(Duration.ofSeconds(20))).isNull();
    assertThat(eventually(() -> order.size() == AHEAD + 2)).isTrue();
    assertThat(order.indexOf("older"))
        .as("the oldest pinned entry waited a whole standing interval; order %s", order)
        .isZero();
  }

  /**
   * HELD (control): the same line with a sheddable newest entry serves the older caller first.
   */
  @Test
  void heldTheOldestPinnedEntryGoesFirstWhenTheNewestEntryIsSheddable() {
    WorkerPool pool = fixture.pool("r7lifo", b -> b.capacity(1).maxIdle(HOUR).adaptiveLifo(true));
    PoolFixture.Gate gate = fixture.occupy(pool);
    List<String> order = new CopyOnWriteArrayList<>();
    for (int i = 0; i < AHEAD; i++) {
      String name = "t" + i;
      pool.enqueue(() -> order.add(name), HOUR);
    }
    awaitWaiting(pool, AHEAD);
    PoolFixture.Caller<Void> older = fixture.call("older",
        () -> pool.execute(() -> order.add("older")));
    awaitWaiting(pool, AHEAD + 1);
    pool.enqueue(() -> order.add("newest"), HOUR);
    awaitWaiting(pool, AHEAD + 2);
    passes(pool, Duration.ofMillis(150));
    gate.open();
    assertThat(older.outcome(Duration.ofSeconds(20))).isNull();
    assertThat(eventually(() -> order.size() == AHEAD + 2)).isTrue();
    assertThat(order.indexOf("older")).as("order %s", order).isZero();
  }
}
