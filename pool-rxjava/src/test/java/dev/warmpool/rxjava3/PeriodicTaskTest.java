package dev.warmpool.rxjava3;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.plugins.RxJavaPlugins;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Delayed;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The arithmetic of fixed-rate runs and clock-drift rebasing, on a manual clock: each test arms a
 * {@link PeriodicTask} on a fake timer that only records the delays asked for, and plays its runs by
 * hand.
 */
class PeriodicTaskTest {
  @RegisterExtension
  final RxFixture fx = new RxFixture();

  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
  private static final long PERIOD = 100 * MS;
  private final long[] now = {1_000_000 * MS};
  private final List<Long> delays = new ArrayList<>();
  private final AtomicInteger runs = new AtomicInteger();
  private PeriodicTask task;

  private static final class Armed extends FutureTask<Void> implements ScheduledFuture<Void> {
    Armed() {
      super(() -> null);
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return 0;
    }

    @Override
    public int compareTo(Delayed o) {
      return 0;
    }
  }

  private void arm(long initialDelay) {
    PoolScheduler s = new PoolScheduler(fx.pool(b -> b), false, RxJavaPlugins::onError,
        unit -> unit.convert(now[0], TimeUnit.NANOSECONDS), "test");
    task = new PeriodicTask(runs::incrementAndGet, s, null, (r, delay, unit) -> {
      delays.add(unit.toNanos(delay));
      return new Armed();
    }, initialDelay, PERIOD);
    task.start();
  }

  /** Advances the manual clock, runs the task once, returns the delay it armed next. */
  private long runAt(long offsetFromStart) {
    now[0] = 1_000_000 * MS + offsetFromStart;
    task.run();
    return delays.get(delays.size() - 1);
  }

  @Test
  void runsAreDueAtStartPlusNPeriods() {
    arm(50 * MS);
    assertThat(delays).containsExactly(50 * MS);
    assertThat(runAt(53 * MS)).isEqualTo(PERIOD - 3 * MS); // a late run does not shift the rate
    assertThat(runAt(150 * MS)).isEqualTo(PERIOD);
  }

  @Test
  void aSlowRunIsFollowedByCatchUpRuns() {
    arm(0);
    assertThat(runAt(350 * MS)).isEqualTo(-250 * MS); // run 1 was due at 100: run it now
    assertThat(runAt(351 * MS)).isEqualTo(-151 * MS); // run 2 at 200
    assertThat(runAt(352 * MS)).isEqualTo(-52 * MS);  // run 3 at 300
    assertThat(runAt(353 * MS)).isEqualTo(47 * MS);   // run 4 at 400: caught up
  }

  @Test
  void aForwardJumpBeyondTheToleranceRebases() {
    arm(0);
    long jump = Scheduler.clockDriftTolerance() + PERIOD + MS;
    assertThat(runAt(jump)).isEqualTo(PERIOD);
    assertThat(runAt(jump + PERIOD + 2 * MS)).isEqualTo(PERIOD - 2 * MS); // the new rate holds
  }

  @Test
  void aForwardJumpWithinTheToleranceIsCaughtUp() {
    arm(0);
    long jump = Scheduler.clockDriftTolerance() - MS; // just inside: no rebase
    assertThat(runAt(jump)).isEqualTo(PERIOD - jump);
  }

  @Test
  void aBackwardJumpBeyondTheToleranceRebases() {
    arm(0);
    runAt(0);
    long back = -(Scheduler.clockDriftTolerance() + MS);
    assertThat(runAt(back)).isEqualTo(PERIOD);
    assertThat(runAt(back + PERIOD)).isEqualTo(PERIOD);
  }

  @Test
  void aBackwardJumpWithinTheToleranceWaitsForTheSchedule() {
    arm(0);
    runAt(0);
    long back = -(Scheduler.clockDriftTolerance() - MS);
    assertThat(runAt(back)).isEqualTo(2 * PERIOD - back); // no rebase: run 2 stays at start + 200
  }

  @Test
  void aDisposedTaskNeitherRunsNorRearms() {
    arm(0);
    task.dispose();
    task.run();
    assertThat(runs).hasValue(0);
    assertThat(delays).hasSize(1);
    assertThat(task.isDisposed()).isTrue();
  }
}
