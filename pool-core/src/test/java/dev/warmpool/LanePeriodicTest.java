package dev.warmpool;

import static dev.warmpool.PoolFixture.await;
import static dev.warmpool.PoolFixture.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Periodic scheduling on a serial lane (issue 12, "thin adapters": lanes offer one-shot, fixed-rate
 * and fixed-delay scheduling): each run enters the lane as admitted work, in order with the lane's
 * other tasks, never overlapping them or itself.
 */
@Timeout(60)
class LanePeriodicTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  @Test
  void fixedRateAndFixedDelayRunOnTheLaneWithoutOverlappingItsOtherTasks() throws Exception {
    WorkerPool pool = fixture.pool("lane-periodic", b -> b.capacity(4));
    SerialExecutor lane = pool.newSerialExecutor();
    AtomicInteger inLane = new AtomicInteger();
    AtomicBoolean overlapped = new AtomicBoolean();
    CountDownLatch rate = new CountDownLatch(5);
    CountDownLatch delay = new CountDownLatch(5);
    Runnable guard = () -> {
      if (inLane.incrementAndGet() != 1) {
        overlapped.set(true);
      }
      Thread.onSpinWait();
      inLane.decrementAndGet();
    };
    ScheduledFuture<?> r = lane.scheduleAtFixedRate(() -> {
      guard.run();
      rate.countDown();
    }, 0, 1, TimeUnit.MILLISECONDS);
    ScheduledFuture<?> d = lane.scheduleWithFixedDelay(() -> {
      guard.run();
      delay.countDown();
    }, 1, 1, TimeUnit.MILLISECONDS);
    for (int i = 0; i < 200; i++) {
      lane.execute(guard);
    }
    await(rate);
    await(delay);
    assertThat(r.cancel(false)).isTrue();
    assertThat(d.cancel(false)).isTrue();
    assertThat(overlapped).as("a periodic run overlapped a lane task").isFalse();
    eventually().untilAsserted(() -> {
      PoolStats s = pool.stats();
      assertThat(s.submitted()).isEqualTo(s.completed());
    });
  }

  @Test
  void closingTheLaneStopsItsPeriodicTasksAndAThrowingRunStopsItsSchedule() throws Exception {
    List<Throwable> failures = new CopyOnWriteArrayList<>();
    WorkerPool pool = fixture.pool("lane-periodic", b -> b.capacity(2)
        .failureHandler((t, e) -> failures.add(e)));
    SerialExecutor lane = pool.newSerialExecutor();
    CountDownLatch ticks = new CountDownLatch(2);
    ScheduledFuture<?> f = lane.scheduleAtFixedRate(ticks::countDown, 0, 1, TimeUnit.MILLISECONDS);
    await(ticks);
    lane.close();
    assertThat(f.isCancelled()).as("closing the lane cancels it").isTrue();

    SerialExecutor other = pool.newSerialExecutor();
    IllegalStateException boom = new IllegalStateException("boom");
    AtomicInteger runs = new AtomicInteger();
    ScheduledFuture<?> failing = other.scheduleWithFixedDelay(() -> {
      runs.incrementAndGet();
      throw boom;
    }, 0, 1, TimeUnit.MILLISECONDS);
    assertThatThrownBy(() -> failing.get(30, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class).hasCause(boom);
    eventually().untilAsserted(() -> assertThat(failures).containsExactly(boom));
    assertThat(runs).hasValue(1);
    assertThat(pool.stats().failed()).isEqualTo(1);
  }

  @Test
  void badInputAndAClosedLaneAreRejectedAtTheCall() {
    WorkerPool pool = fixture.pool("lane-periodic", b -> b.capacity(1));
    SerialExecutor lane = pool.newSerialExecutor();
    assertThatThrownBy(() -> lane.scheduleAtFixedRate(null, 0, 1, TimeUnit.SECONDS))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("task");
    assertThatThrownBy(() -> lane.scheduleAtFixedRate(() -> { }, 0, 0, TimeUnit.SECONDS))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("period");
    assertThatThrownBy(() -> lane.scheduleWithFixedDelay(() -> { }, 0, -1, TimeUnit.SECONDS))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("delay");
    assertThatThrownBy(() -> lane.scheduleWithFixedDelay(() -> { }, 0, 1, null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("unit");
    lane.close();
    assertThatThrownBy(() -> lane.scheduleAtFixedRate(() -> { }, 0, 1, TimeUnit.SECONDS))
        .isInstanceOf(RejectedExecutionException.class);
  }
}
