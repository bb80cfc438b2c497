package dev.warmpool.rxjava3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.plugins.RxJavaPlugins;
import io.reactivex.rxjava3.schedulers.SchedulerRunnableIntrospection;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Contract 2: disposal of workers and tasks; introspection. */
class DisposalTest {
  @RegisterExtension
  final RxFixture fx = new RxFixture();

  @Test
  void disposingAWorkerStopsItsQueuedTasks() {
    WorkerPool pool = fx.pool(b -> b.capacity(2));
    Scheduler.Worker w = PoolSchedulers.from(pool).createWorker();
    CountDownLatch hold = fx.hold();
    CountDownLatch running = new CountDownLatch(1);
    AtomicBoolean second = new AtomicBoolean();
    Disposable first = w.schedule(() -> {
      running.countDown();
      RxFixture.awaitQuietly(hold);
    });
    Disposable queued = w.schedule(() -> second.set(true));
    RxFixture.awaitQuietly(running);

    w.dispose();
    hold.countDown();
    RxFixture.awaitQuiet(pool);

    assertThat(second).isFalse();
    assertThat(w.isDisposed()).isTrue();
    assertThat(first.isDisposed()).isTrue();
    assertThat(queued.isDisposed()).isTrue();
  }

  /**
   * Issue 21, suspected: a timer scheduled while its worker is being disposed is refused or
   * cancelled with the worker's lane; none stays armed. A timer still armed when the pool shuts
   * down would be reported to its scope as a {@code PoolClosedException} (fault 4's signal).
   */
  @Test
  void aTimerRacingItsWorkersDisposeDoesNotStayArmed_guarantee7() throws Exception {
    WorkerPool pool = fx.pool(b -> b.capacity(2));
    RejectionScope scope = new RejectionScope(pool);
    PoolScheduler s = (PoolScheduler) scope.scheduler();
    java.util.concurrent.ExecutorService racers = java.util.concurrent.Executors
        .newFixedThreadPool(2);
    try {
      for (int round = 0; round < 2_000; round++) {
        Scheduler.Worker w = s.createWorker();
        java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(2);
        boolean periodic = round % 2 == 1;
        java.util.concurrent.Future<?> a = racers.submit(() -> {
          start.await();
          return periodic ? w.schedulePeriodically(() -> { }, 1, 1, TimeUnit.DAYS)
              : w.schedule(() -> { }, 1, TimeUnit.DAYS);
        });
        java.util.concurrent.Future<?> b = racers.submit(() -> {
          start.await();
          w.dispose();
          return null;
        });
        a.get();
        b.get();
      }
    } finally {
      racers.shutdownNow();
    }
    assertThat(s.liveCount()).as("no disposed worker stays tracked").isZero();
    pool.shutdown();
    scope.rejection().test().assertNoErrors(); // no timer was left for the shutdown to cancel
    assertThat(fx.errors).isEmpty();
  }

  @Test
  void disposingAWorkerStopsItsDelayedAndPeriodicTasks() {
    WorkerPool pool = fx.pool(b -> b.capacity(2));
    Scheduler s = PoolSchedulers.from(pool);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger ran = new AtomicInteger();
    Disposable delayed = w.schedule(ran::incrementAndGet, 40, TimeUnit.MILLISECONDS);
    Disposable periodic = w.schedulePeriodically(ran::incrementAndGet, 40, 10,
        TimeUnit.MILLISECONDS);
    w.dispose();

    // The shared timer fires in deadline order: once a later sentinel ran, the cancelled tasks
    // would have been handed over already.
    CountDownLatch sentinel = new CountDownLatch(1);
    s.createWorker().schedule(sentinel::countDown, 80, TimeUnit.MILLISECONDS);
    RxFixture.awaitQuietly(sentinel);
    RxFixture.awaitQuiet(pool);

    assertThat(ran).hasValue(0);
    assertThat(delayed.isDisposed()).isTrue();
    assertThat(periodic.isDisposed()).isTrue();
  }

  @Test
  void afterDisposeEveryScheduleReturnsTheDisposedSingleton() {
    Scheduler.Worker w = PoolSchedulers.from(fx.pool(b -> b)).createWorker();
    w.dispose();
    w.dispose(); // idempotent
    AtomicBoolean ran = new AtomicBoolean();
    Runnable r = () -> ran.set(true);
    assertThat(w.schedule(r)).isSameAs(Disposable.disposed());
    assertThat(w.schedule(r, 1, TimeUnit.MILLISECONDS)).isSameAs(Disposable.disposed());
    assertThat(w.schedulePeriodically(r, 1, 1, TimeUnit.MILLISECONDS))
        .isSameAs(Disposable.disposed());
    assertThat(ran).isFalse();
  }

  @Test
  void aDisposedWorkerTaskNeverRuns() {
    WorkerPool pool = fx.pool(b -> b.capacity(2));
    Scheduler.Worker w = PoolSchedulers.from(pool).createWorker();
    CountDownLatch hold = fx.hold();
    AtomicBoolean disposedRan = new AtomicBoolean();
    AtomicBoolean delayedRan = new AtomicBoolean();
    CountDownLatch after = new CountDownLatch(2);
    w.schedule(() -> RxFixture.awaitQuietly(hold));
    w.schedule(() -> disposedRan.set(true)).dispose();
    w.schedule(after::countDown); // FIFO: runs after the disposed one would have
    w.schedule(() -> delayedRan.set(true), 30, TimeUnit.MILLISECONDS).dispose();
    w.schedule(after::countDown, 60, TimeUnit.MILLISECONDS); // deadline order: after it
    hold.countDown();
    RxFixture.awaitQuietly(after);

    assertThat(disposedRan).isFalse();
    assertThat(delayedRan).isFalse();
    assertThat(w.isDisposed()).isFalse();
  }

  @Test
  void aDisposedDirectTaskNeverRuns() {
    WorkerPool pool = fx.pool(b -> b.capacity(1));
    Scheduler s = PoolSchedulers.from(pool);
    fx.saturate(pool);
    AtomicBoolean disposedRan = new AtomicBoolean();
    AtomicBoolean delayedRan = new AtomicBoolean();
    CountDownLatch after = new CountDownLatch(2);
    s.scheduleDirect(() -> disposedRan.set(true)).dispose(); // waits in line, then disposed
    s.scheduleDirect(after::countDown); // the line is FIFO
    s.scheduleDirect(() -> delayedRan.set(true), 30, TimeUnit.MILLISECONDS).dispose();
    s.scheduleDirect(after::countDown, 60, TimeUnit.MILLISECONDS);
    fx.holdsRelease();
    RxFixture.awaitQuietly(after);

    assertThat(disposedRan).isFalse();
    assertThat(delayedRan).isFalse();
  }

  @Test
  void aDirectTaskReportsDisposedAfterItRan() {
    WorkerPool pool = fx.pool(b -> b.capacity(1));
    Scheduler s = PoolSchedulers.from(pool);
    CountDownLatch hold = fx.hold();
    Disposable running = s.scheduleDirect(() -> RxFixture.awaitQuietly(hold));
    Disposable delayed = s.scheduleDirect(() -> { }, 10, TimeUnit.MILLISECONDS);
    assertThat(running.isDisposed()).isFalse();
    hold.countDown();
    await().until(running::isDisposed);
    await().until(delayed::isDisposed);
  }

  @Test
  void directAndPeriodicDisposablesExposeTheWrappedRunnable() {
    Scheduler s = PoolSchedulers.from(fx.pool(b -> b));
    Scheduler.Worker w = s.createWorker();
    Runnable r = () -> { };
    Disposable[] disposables = {
        s.scheduleDirect(r),
        s.scheduleDirect(r, 1, TimeUnit.DAYS),
        s.schedulePeriodicallyDirect(r, 1, 1, TimeUnit.DAYS),
        w.schedule(r, 1, TimeUnit.DAYS),
        w.schedulePeriodically(r, 1, 1, TimeUnit.DAYS),
    };
    for (Disposable d : disposables) {
      assertThat(d).isInstanceOf(SchedulerRunnableIntrospection.class);
      assertThat(((SchedulerRunnableIntrospection) d).getWrappedRunnable()).isSameAs(r);
      d.dispose();
    }

    // With a schedule hook, the disposable exposes what the hook returned.
    Runnable decorated = () -> { };
    RxJavaPlugins.setScheduleHandler(run -> decorated);
    Disposable d = s.schedulePeriodicallyDirect(r, 1, 1, TimeUnit.DAYS);
    assertThat(((SchedulerRunnableIntrospection) d).getWrappedRunnable()).isSameAs(decorated);
    d.dispose();
    w.dispose();
  }

  /** The pool cancels the pending timers: the periodic disposables read disposed, nothing is reported. */
  @Test
  void periodicTasksReadDisposedOnceThePoolShutsDown() {
    WorkerPool pool = fx.pool(b -> b.capacity(2));
    Scheduler s = PoolSchedulers.from(pool);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger ran = new AtomicInteger();
    Disposable direct = s.schedulePeriodicallyDirect(ran::incrementAndGet, 1, 1, TimeUnit.DAYS);
    Disposable onWorker = w.schedulePeriodically(ran::incrementAndGet, 1, 1, TimeUnit.DAYS);
    assertThat(direct.isDisposed() || onWorker.isDisposed()).isFalse();
    pool.shutdown();
    await().until(() -> direct.isDisposed() && onWorker.isDisposed());
    assertThat(w.isDisposed()).isFalse(); // the worker was not disposed: its timer was cancelled
    assertThat(ran).hasValue(0);
    assertThat(fx.errors).isEmpty();
  }
}
