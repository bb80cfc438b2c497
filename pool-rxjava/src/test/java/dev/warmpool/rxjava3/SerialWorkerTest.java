package dev.warmpool.rxjava3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.plugins.RxJavaPlugins;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Contract 1: a worker is a serial lane; timed and periodic tasks; one clock. */
class SerialWorkerTest {
  @RegisterExtension
  final RxFixture fx = new RxFixture();

  @Test
  void tasksFromEightThreadsKeepPerThreadOrderAndNeverOverlap() throws Exception {
    WorkerPool pool = fx.pool(b -> b.capacity(4));
    Scheduler.Worker worker = PoolSchedulers.from(pool).createWorker();
    int threads = 8;
    int perThread = 20_000;
    AtomicInteger running = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    AtomicInteger outOfOrder = new AtomicInteger();
    int[] last = new int[threads]; // touched only by the lane's tasks, one at a time
    java.util.Arrays.fill(last, -1);
    CountDownLatch done = new CountDownLatch(threads * perThread);
    CyclicBarrier start = new CyclicBarrier(threads);
    List<Thread> producers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int id = t;
      Thread p = new Thread(() -> {
        try {
          start.await();
        } catch (Exception e) {
          throw new AssertionError(e);
        }
        for (int i = 0; i < perThread; i++) {
          int seq = i;
          worker.schedule(() -> {
            if (running.incrementAndGet() != 1) {
              overlaps.incrementAndGet();
            }
            if (last[id] != seq - 1) {
              outOfOrder.incrementAndGet();
            }
            last[id] = seq;
            running.decrementAndGet();
            done.countDown();
          });
        }
      });
      producers.add(p);
      p.start();
    }
    assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
    for (Thread p : producers) {
      p.join();
    }
    assertThat(overlaps).hasValue(0);
    assertThat(outOfOrder).hasValue(0);
    assertThat(last).containsOnly(perThread - 1);
    worker.dispose();
  }

  /**
   * Each task's deadline is known only within the time its {@code schedule} call took, so the
   * order is checked for every pair whose deadlines are apart for sure (a slow loop on a loaded
   * machine made the 60 ms task due before the 50 ms one, scheduled more than 10 ms later).
   */
  @Test
  void timedTasksFireInDeadlineOrderOnTheLane() {
    Scheduler.Worker worker = PoolSchedulers.from(fx.pool(b -> b.capacity(4))).createWorker();
    List<String> order = new CopyOnWriteArrayList<>();
    AtomicInteger running = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    String[] names = {"60", "20", "40", "10", "50", "30", "70a", "70b"};
    long[] earliest = new long[names.length];
    long[] latest = new long[names.length];
    for (int i = 0; i < names.length; i++) {
      String name = names[i];
      long delay = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(name.replaceAll("[ab]", "")));
      earliest[i] = System.nanoTime() + delay;
      worker.schedule(() -> {
        if (running.incrementAndGet() != 1) {
          overlaps.incrementAndGet();
        }
        order.add(name);
        running.decrementAndGet();
      }, delay, TimeUnit.NANOSECONDS);
      latest[i] = System.nanoTime() + delay;
    }

    await().until(() -> order.size() == names.length);
    assertThat(order).containsExactlyInAnyOrder(names);
    for (int a = 0; a < names.length; a++) {
      for (int b = 0; b < names.length; b++) {
        if (latest[a] < earliest[b]) {
          assertThat(order.indexOf(names[a])).as("%s before %s in %s", names[a], names[b], order)
              .isLessThan(order.indexOf(names[b]));
        }
      }
    }
    assertThat(overlaps).hasValue(0);
  }

  @Test
  void schedulerAndWorkerNowAgree() {
    AtomicLong millis = new AtomicLong(1_000_000);
    PoolScheduler manual = new PoolScheduler(fx.pool(b -> b), false, RxJavaPlugins::onError,
        unit -> unit.convert(millis.get(), TimeUnit.MILLISECONDS), "test");
    Scheduler.Worker w = manual.createWorker();
    for (TimeUnit unit : TimeUnit.values()) {
      assertThat(w.now(unit)).isEqualTo(manual.now(unit));
    }
    millis.addAndGet(12_345);
    assertThat(w.now(TimeUnit.MILLISECONDS)).isEqualTo(manual.now(TimeUnit.MILLISECONDS))
        .isEqualTo(1_012_345);

    Scheduler real = PoolSchedulers.from(fx.pool(b -> b));
    Scheduler.Worker rw = real.createWorker();
    long before = real.now(TimeUnit.NANOSECONDS);
    long during = rw.now(TimeUnit.NANOSECONDS);
    long after = real.now(TimeUnit.NANOSECONDS);
    assertThat(during).isBetween(before, after);
  }

  /**
   * Period 100 ms, the first run takes 500 ms. At a fixed rate, runs 1..5 (due at 100..500) are late
   * and follow back to back, and run 6 is due at 600 ms; at a fixed delay, runs 1..5 would be at least
   * 4 periods apart from first to last. A direct task runs under the pool's own fixed-rate schedule,
   * a worker task under RxJava's default {@code Worker.schedulePeriodically} on the worker's lane.
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void periodicTasksKeepAFixedRate(boolean onWorker) {
    Scheduler s = PoolSchedulers.from(fx.pool(b -> b.capacity(2)));
    List<Long> starts = new CopyOnWriteArrayList<>();
    Runnable task = () -> {
      starts.add(System.nanoTime());
      if (starts.size() == 1) {
        sleep(500);
      }
    };
    Scheduler.Worker w = s.createWorker();
    long scheduled = System.nanoTime();
    Disposable d = onWorker
        ? w.schedulePeriodically(task, 0, 100, TimeUnit.MILLISECONDS)
        : s.schedulePeriodicallyDirect(task, 0, 100, TimeUnit.MILLISECONDS);
    await().until(() -> starts.size() >= 7);
    d.dispose();
    List<Long> ms = starts.stream().map(t -> TimeUnit.NANOSECONDS.toMillis(t - scheduled)).toList();
    assertThat(ms.get(6)).as("never early: %s", ms).isGreaterThanOrEqualTo(598); // ms clock
    assertThat(ms.get(5) - ms.get(1)).as("catch-up runs back to back: %s", ms).isLessThan(400);
  }

  /** A clock for periodic tests: the monotonic clock plus an offset the test can jump. */
  private static final class JumpingClock implements ToLongFunction<TimeUnit> {
    final AtomicLong offset = new AtomicLong();

    @Override
    public long applyAsLong(TimeUnit unit) {
      return unit.convert(System.nanoTime() + offset.get(), TimeUnit.NANOSECONDS);
    }
  }

  /**
   * A jump of the scheduler's {@code now()} causes neither a burst of catch-up runs nor a stall. On
   * a worker, RxJava's own periodic schedule reads {@code now()} and rebases; a direct task runs under
   * the pool's fixed-rate schedule on {@link System#nanoTime}, which a jump of {@code now()} does not
   * touch (as a direct task of RxJava's {@code ExecutorScheduler} under a
   * {@code ScheduledExecutorService}).
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void periodicTasksRebaseAfterAClockJumpBeyondTheTolerance(boolean onWorker) {
    JumpingClock clock = new JumpingClock();
    PoolScheduler s = new PoolScheduler(fx.pool(b -> b.capacity(2)), false,
        RxJavaPlugins::onError, clock, "test");
    AtomicInteger runs = new AtomicInteger();
    Runnable task = runs::incrementAndGet;
    Disposable d = onWorker
        ? s.createWorker().schedulePeriodically(task, 0, 20, TimeUnit.MILLISECONDS)
        : s.schedulePeriodicallyDirect(task, 0, 20, TimeUnit.MILLISECONDS);
    long jump = Scheduler.clockDriftTolerance() + TimeUnit.MINUTES.toNanos(1);
    await().until(() -> runs.get() >= 3);

    // Forward: without rebasing the task would replay 16 minutes of missed runs at once.
    int before = runs.get();
    long jumpedAt = System.nanoTime();
    clock.offset.addAndGet(jump);
    await().until(() -> runs.get() >= before + 5);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - jumpedAt)).isGreaterThanOrEqualTo(70);

    // Backward: without rebasing the next run would be 16 minutes away.
    int before2 = runs.get();
    clock.offset.addAndGet(-2 * jump);
    await().atMost(RxFixture.millis(3_000)).until(() -> runs.get() >= before2 + 5);
    d.dispose();
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
