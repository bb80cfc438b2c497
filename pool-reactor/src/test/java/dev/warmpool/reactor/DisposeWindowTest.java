package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * Issue 21, suspected: a timer scheduled inside a disposal's window stays armed. The window is
 * forced with latches: the pool's task decorator, which core applies on the scheduling thread
 * before it arms the timer, holds that thread after the scheduler (or worker) accepted the task and
 * before core's timer exists; the disposal runs then. Afterwards the timer must never fire, the
 * task reads disposed, and the disposal completes.
 */
class DisposeWindowTest {
  enum Kind { DIRECT_DELAYED, DIRECT_PERIODIC, WORKER_DELAYED, WORKER_PERIODIC }

  enum Disposal { DISPOSE, DISPOSE_GRACEFULLY, WORKER_DISPOSE }

  private final AtomicBoolean holdNext = new AtomicBoolean();
  /** This round's latches: the scheduling thread is in the window / may leave it. */
  private volatile CountDownLatch inWindow = new CountDownLatch(1);
  private volatile CountDownLatch release = new CountDownLatch(1);
  private final AtomicBoolean fired = new AtomicBoolean();
  /** Capacity 1: due tasks run in the order they came due. */
  private final WorkerPool pool = WorkerPool.builder().name("window").capacity(1)
      .taskDecorator(task -> {
        if (!holdNext.compareAndSet(true, false)) {
          return task;
        }
        inWindow.countDown();
        Occupied.awaitQuietly(release);
        return () -> {
          fired.set(true);
          task.run();
        };
      }).build();

  @AfterEach
  void close() {
    release.countDown();
    pool.shutdownNow();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aTimerScheduledInsideADisposalsWindowNeverFires(Kind kind) throws Exception {
    for (Disposal disposal : Disposal.values()) {
      boolean worker = kind == Kind.WORKER_DELAYED || kind == Kind.WORKER_PERIODIC;
      boolean periodic = kind == Kind.DIRECT_PERIODIC || kind == Kind.WORKER_PERIODIC;
      if ((disposal == Disposal.WORKER_DISPOSE && !worker)
          || (disposal == Disposal.DISPOSE_GRACEFULLY && !periodic)) {
        continue; // graceful disposal lets a delayed task run: only periodic ones must stop
      }
      fired.set(false);
      run(kind, disposal, worker, periodic);
    }
  }

  private void run(Kind kind, Disposal disposal, boolean worker, boolean periodic)
      throws Exception {
    Scheduler s = PoolSchedulers.from(pool);
    Scheduler.Worker w = s.createWorker();
    AtomicBoolean ran = new AtomicBoolean();
    Runnable task = () -> ran.set(true);
    AtomicReference<Object> outcome = new AtomicReference<>();
    CountDownLatch scheduled = new CountDownLatch(1);
    inWindow = new CountDownLatch(1);
    release = new CountDownLatch(1);
    holdNext.set(true);
    Thread scheduling = new Thread(() -> {
      try {
        outcome.set(switch (kind) {
          case DIRECT_DELAYED -> s.schedule(task, 50, TimeUnit.MILLISECONDS);
          case DIRECT_PERIODIC -> s.schedulePeriodically(task, 50, 10, TimeUnit.MILLISECONDS);
          case WORKER_DELAYED -> w.schedule(task, 50, TimeUnit.MILLISECONDS);
          case WORKER_PERIODIC -> w.schedulePeriodically(task, 50, 10, TimeUnit.MILLISECONDS);
        });
      } catch (RejectedExecutionException refused) {
        outcome.set(refused); // refused by the disposal: as good as disposed
      } finally {
        scheduled.countDown();
      }
    });
    scheduling.start();
    assertThat(inWindow.await(10, TimeUnit.SECONDS)).isTrue();
    Disposable graceful = null;
    switch (disposal) {
      case DISPOSE -> s.dispose();
      case DISPOSE_GRACEFULLY -> graceful = s.disposeGracefully().subscribe();
      case WORKER_DISPOSE -> w.dispose();
    }
    release.countDown();
    assertThat(scheduled.await(10, TimeUnit.SECONDS)).isTrue();
    if (outcome.get() instanceof Disposable d) {
      assertThat(d.isDisposed()).as("%s %s", kind, disposal).isTrue();
    }
    // A barrier due well after the task would have been: with one seat, a fired timer runs first.
    CountDownLatch barrier = new CountDownLatch(1);
    pool.schedule(barrier::countDown, 200, TimeUnit.MILLISECONDS);
    assertThat(barrier.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(fired).as("%s %s: the timer fired", kind, disposal).isFalse();
    assertThat(ran).isFalse();
    if (disposal != Disposal.WORKER_DISPOSE) {
      assertThat(s.disposeGracefully().block(Duration.ofSeconds(10))).isNull();
    }
    if (graceful != null) {
      graceful.dispose();
    }
    s.dispose();
  }
}
