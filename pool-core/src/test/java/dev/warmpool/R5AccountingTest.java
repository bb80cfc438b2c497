package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * r5 (adversarial review of version 4): the per-worker flags of {@code Accounting.futureNotRun}
 * and {@code Accounting.futureFailed} ({@code Worker.unrun}, {@code Worker.capturedFailure}) are
 * consumed only on the path where the task returns normally. A task whose run throws after its
 * future set a flag (here: a task decorator whose wrapper throws after running the future, as a
 * context restore that fails would) leaves the flag on the worker, and the next, unrelated task of
 * that worker is misread by it.
 */
@Timeout(60)
class R5AccountingTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  /** Throws after running the delegate when armed: a context restore that fails. */
  static final class HostileDecorator {
    final AtomicBoolean throwAfter = new AtomicBoolean();
    final CountDownLatch started = new CountDownLatch(1);
    final CountDownLatch proceed = new CountDownLatch(1);
    final AtomicBoolean pauseFirst = new AtomicBoolean();

    Runnable decorate(Runnable delegate) {
      return () -> {
        if (pauseFirst.compareAndSet(true, false)) {
          started.countDown();
          PoolFixture.await(proceed);
        }
        try {
          delegate.run();
        } finally {
          if (throwAfter.compareAndSet(true, false)) {
            throw new IllegalStateException("restore failed");
          }
        }
      };
    }
  }

  private static boolean within(Duration d, java.util.function.BooleanSupplier c) {
    return PoolFixture.waitUntil(d, c);
  }

  /**
   * Guarantee 13: a submit future cancelled as its worker takes it sets {@code Worker.unrun}; the
   * wrapper then throws, so {@code Accounting.run} returns through its catch and never clears the
   * flag. The next plain task on that worker runs and completes, but is counted withdrawn.
   */
  @Test
  void guarantee13_aTaskThatRanIsNeverCountedWithdrawnAfterAThrowingRunOfACancelledFuture()
      throws Exception {
    HostileDecorator d = new HostileDecorator();
    List<Throwable> reported = new CopyOnWriteArrayList<>();
    WorkerPool pool = fixture.pool("r5unrun", b -> b.capacity(1).maxIdle(Duration.ofHours(1))
        .taskDecorator(d::decorate).failureHandler((t, e) -> reported.add(e)));
    d.pauseFirst.set(true);
    d.throwAfter.set(true);
    Future<?> f = pool.submit(() -> "never");
    PoolFixture.await(d.started); // the worker took it: too late to withdraw it from the line
    assertThat(f.cancel(false)).isTrue();
    d.proceed.countDown();
    CountDownLatch ran = new CountDownLatch(1);
    pool.execute(ran::countDown); // capacity 1: the same worker
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    boolean settled = within(Duration.ofSeconds(5), () -> {
      PoolStats s = pool.stats();
      return s.busy() == 0 && s.completed() == 1;
    });
    PoolStats s = pool.stats();
    assertThat(settled).as("the second task ran and completed, but the stats say %s", s).isTrue();
    assertThat(s.submitted()).isEqualTo(s.completed() + s.failed());
  }

  /**
   * Guarantee 8 and 13: a submit future whose callable throws is counted failed by
   * {@code futureFailed} (and {@code Worker.capturedFailure} set); the wrapper then throws too, so
   * {@code Accounting.run} counts a second failure for the same task and leaves the captured one on
   * the worker. The next plain task of that worker completes, yet is not counted completed, and the
   * first task's exception is reported to the failure handler during that unrelated run.
   */
  @Test
  void guarantee8_aFailedFutureWhoseWrapperThrowsCountsOnceAndLeavesTheNextTaskAlone()
      throws Exception {
    HostileDecorator d = new HostileDecorator();
    List<Throwable> reported = new CopyOnWriteArrayList<>();
    WorkerPool pool = fixture.pool("r5captured", b -> b.capacity(1).maxIdle(Duration.ofHours(1))
        .taskDecorator(d::decorate).failureHandler((t, e) -> reported.add(e)));
    d.throwAfter.set(true);
    Future<?> f = pool.submit(() -> {
      throw new ArithmeticException("the task's own failure");
    });
    try {
      f.get(10, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException expected) {
      // the callable failed
    }
    assertThat(within(Duration.ofSeconds(5), () -> pool.stats().busy() == 0
        && pool.stats().failed() >= 1)).isTrue();
    CountDownLatch ran = new CountDownLatch(1);
    pool.execute(ran::countDown); // capacity 1: the same worker
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    boolean settled = within(Duration.ofSeconds(5), () -> pool.stats().completed() == 1);
    PoolStats s = pool.stats();
    assertThat(settled).as("the second task completed, but the stats say %s; reported %s", s,
        reported).isTrue();
    assertThat(s.failed()).as("one task failed (once)").isEqualTo(1);
    assertThat(reported).as("reported once, on its own run").hasSize(1);
  }

  /**
   * Guarantee 13: a submit future cancelled as its worker takes it counts as withdrawn
   * ({@code PoolFuture.run}); the futures of {@code invokeAll} and {@code invokeAny} are plain
   * {@code PublishingFuture}s ({@code newTaskFor}), so the same cancel (invokeAll's own, at its
   * timeout) leaves a task that never ran counted as completed.
   */
  @Test
  void guarantee13_anInvokeAllTaskCancelledAsItsWorkerTakesItIsNotCountedCompleted()
      throws Exception {
    HostileDecorator d = new HostileDecorator();
    WorkerPool pool = fixture.pool("r5invokeAll", b -> b.capacity(1).maxIdle(Duration.ofHours(1))
        .taskDecorator(d::decorate));
    d.pauseFirst.set(true);
    java.util.concurrent.atomic.AtomicInteger ran = new java.util.concurrent.atomic.AtomicInteger();
    List<Future<Integer>> fs = pool.invokeAll(
        List.of(ran::incrementAndGet), 200, TimeUnit.MILLISECONDS); // the worker holds it paused
    assertThat(d.started.getCount()).as("the worker took it").isZero();
    assertThat(fs.get(0).isCancelled()).as("invokeAll cancelled it at its timeout").isTrue();
    d.proceed.countDown();
    assertThat(within(Duration.ofSeconds(10), () -> {
      PoolStats q = pool.stats(); // quiescent: the worker has counted it, one way or the other
      return q.busy() == 0 && q.submitted() == q.completed() + q.failed();
    })).isTrue();
    PoolStats s = pool.stats();
    assertThat(ran.get()).isZero();
    assertThat(s.completed()).as("it never ran; stats %s", s).isZero();
    assertThat(s.submitted()).as("withdrawn, as a submit future is; stats %s", s).isZero();
  }
}
