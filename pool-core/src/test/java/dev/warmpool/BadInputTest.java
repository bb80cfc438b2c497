package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Guarantee 9: bad input throws {@link NullPointerException} or {@link IllegalArgumentException} at
 * once, with a message naming the parameter and the value.
 */
@Timeout(60) // seconds per test: a hang fails the test instead of stalling the build
class BadInputTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  @ParameterizedTest
  @ValueSource(ints = {0, -1, Integer.MIN_VALUE})
  void capacityBelowOneIsRejectedNamingTheValue(int capacity) {
    assertThatThrownBy(() -> WorkerPool.builder().capacity(capacity))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("capacity").hasMessageContaining(String.valueOf(capacity));
  }

  @ParameterizedTest
  @ValueSource(ints = {0, -1})
  void resizeBelowOneIsRejectedAndLeavesTheCapacityAlone(int capacity) {
    WorkerPool pool = fixture.pool("resizebad", b -> b.capacity(3));
    assertThatThrownBy(() -> pool.resize(capacity))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("capacity").hasMessageContaining(String.valueOf(capacity));
    assertThat(pool.capacity()).isEqualTo(3);
  }

  /**
   * The idle stack packs its size and bottom position into 18-bit fields and documents
   * {@link IdleStack#MAX_CAPACITY} as the largest capacity it supports. Above 2^18 its ring no longer
   * divides the position range: once the bottom has wrapped (2^18 retirements), a pop can return
   * null while taking a worker off the stack, which then stays parked forever, still counted.
   */
  @ParameterizedTest
  @ValueSource(ints = {IdleStack.MAX_CAPACITY + 1, 1 << 20})
  void capacityAboveTheSupportedMaximumIsRejected(int tooLarge) {
    assertThatThrownBy(() -> WorkerPool.builder().capacity(tooLarge))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("capacity").hasMessageContaining(String.valueOf(tooLarge));
    WorkerPool pool = fixture.pool("resizehuge", b -> b.capacity(2));
    assertThatThrownBy(() -> pool.resize(tooLarge))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("capacity").hasMessageContaining(String.valueOf(tooLarge));
    assertThat(pool.capacity()).isEqualTo(2);
  }

  @Test
  void maxIdleMustBePositive() {
    assertThatThrownBy(() -> WorkerPool.builder().maxIdle(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxIdle").hasMessageContaining(Duration.ZERO.toString());
    Duration negative = Duration.ofMillis(-5);
    assertThatThrownBy(() -> WorkerPool.builder().maxIdle(negative))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxIdle").hasMessageContaining(negative.toString());
    assertThatThrownBy(() -> WorkerPool.builder().maxIdle(null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("maxIdle");
  }

  /**
   * Issue 30, fault 8: {@code maxIdle(1 ns)} made the cleaner reschedule itself every nanosecond on
   * the shared timer thread (a busy loop while a worker was busy). Below 1 ms is refused, naming
   * {@code maxIdle} and the value, before any pool exists; 1 ms itself is accepted.
   */
  @Test
  void guarantee10_maxIdleBelowOneMillisecondIsRefusedNamingMaxIdleAndTheValue() {
    for (Duration tooShort : List.of(Duration.ofNanos(1), Duration.ofNanos(999_999),
        Duration.ofNanos(500_000))) {
      assertThatThrownBy(() -> WorkerPool.builder().maxIdle(tooShort).build())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("maxIdle").hasMessageContaining(tooShort.toString());
    }
    WorkerPool pool = WorkerPool.builder().maxIdle(Duration.ofMillis(1)).build();
    try {
      assertThat(pool.maxIdle()).isEqualTo(Duration.ofMillis(1));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void maxWaitingMustNotBeNegative() {
    assertThatThrownBy(() -> WorkerPool.builder().maxWaiting(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxWaiting").hasMessageContaining("-1");
    assertThat(WorkerPool.builder().maxWaiting(0)).isNotNull();
  }

  @Test
  void nullBuilderArgumentsAreRejectedNamingTheParameter() {
    assertThatThrownBy(() -> WorkerPool.builder().name(null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("name");
    assertThatThrownBy(() -> WorkerPool.builder().threadFactory(null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("threadFactory");
    assertThatThrownBy(() -> WorkerPool.builder().failureHandler(null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("failureHandler");
    assertThatThrownBy(() -> WorkerPool.builder().ticker(null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("ticker");
  }

  @Test
  void nullTaskIsRejectedNamingTheParameterAndNothingRuns() {
    WorkerPool pool = fixture.pool("nulltask", b -> b.capacity(1));
    assertThatThrownBy(() -> pool.execute(null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("task");
    assertThatThrownBy(() -> pool.tryExecute(null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("task");
    assertThatThrownBy(() -> pool.tryExecute(null, Duration.ofSeconds(1)))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("task");
    assertThatThrownBy(() -> pool.enqueue(null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("task");
    assertThatThrownBy(() -> pool.schedule((Runnable) null, 1, TimeUnit.SECONDS))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("task");
    assertThat(pool.stats().submitted()).isZero();
    assertThat(pool.stats().workers()).isZero();
  }

  @Test
  void submitRejectsANullTaskNamingTheParameter() {
    WorkerPool pool = fixture.pool("nullsubmit", b -> b.capacity(1));
    assertThatThrownBy(() -> pool.submit((Runnable) null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("task");
    assertThatThrownBy(() -> pool.submit((Callable<?>) null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("task");
  }

  @Test
  void timeoutOfTryExecuteMustBePresentAndNotNegative() {
    WorkerPool pool = fixture.pool("timeout", b -> b.capacity(1));
    assertThatThrownBy(() -> pool.tryExecute(() -> { }, null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("timeout");
    Duration negative = Duration.ofSeconds(-1);
    assertThatThrownBy(() -> pool.tryExecute(() -> { }, negative))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("timeout").hasMessageContaining(negative.toString());
  }
}
