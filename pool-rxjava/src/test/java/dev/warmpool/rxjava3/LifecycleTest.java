package dev.warmpool.rxjava3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.observers.TestObserver;
import io.reactivex.rxjava3.disposables.Disposable;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Contract 6: start and shutdown; shared and owning schedulers. */
class LifecycleTest {
  @RegisterExtension
  final RxFixture fx = new RxFixture();

  private static void assertRuns(Scheduler s) {
    CountDownLatch ran = new CountDownLatch(2);
    s.scheduleDirect(ran::countDown);
    s.createWorker().schedule(ran::countDown);
    RxFixture.awaitQuietly(ran);
  }

  private static void assertRefuses(Scheduler s) {
    Scheduler.Worker w = s.createWorker();
    assertThat(w.isDisposed()).isTrue();
    assertThat(w.schedule(() -> { })).isSameAs(Disposable.disposed());
    assertThat(s.scheduleDirect(() -> { })).isSameAs(Disposable.disposed());
    assertThat(s.scheduleDirect(() -> { }, 1, TimeUnit.SECONDS)).isSameAs(Disposable.disposed());
    assertThat(s.schedulePeriodicallyDirect(() -> { }, 1, 1, TimeUnit.SECONDS))
        .isSameAs(Disposable.disposed());
  }

  @Test
  void shutdownCancelsPendingWorkButLeavesASharedPoolOpen() {
    WorkerPool pool = fx.pool(b -> b);
    PoolScheduler s = PoolScheduler.conventional(pool, false);
    Scheduler.Worker w = s.createWorker();
    Disposable workerTask = w.schedule(() -> { }, 1, TimeUnit.DAYS);
    Disposable direct = s.scheduleDirect(() -> { }, 1, TimeUnit.DAYS);
    Disposable periodic = s.schedulePeriodicallyDirect(() -> { }, 1, 1, TimeUnit.DAYS);
    assertThat(s.liveCount()).isEqualTo(3);

    s.shutdown();
    s.shutdown();
    assertThat(w.isDisposed()).isTrue();
    assertThat(workerTask.isDisposed()).isTrue();
    assertThat(direct.isDisposed()).isTrue();
    assertThat(periodic.isDisposed()).isTrue();
    assertThat(s.liveCount()).isZero();
    assertRefuses(s);
    assertThat(pool.isShutdown()).isFalse();
    CountDownLatch poolStillWorks = new CountDownLatch(1);
    pool.execute(poolStillWorks::countDown);
    RxFixture.awaitQuietly(poolStillWorks);

    s.start();
    s.start();
    assertRuns(s);
    assertThat(fx.errors).isEmpty();
  }

  /**
   * Issue 21, fault 2: a timer that came due before {@code pool.shutdown()} is an accepted task
   * waiting in line: it runs under a graceful shutdown, direct ({@code Single.timer}) or on a worker
   * ({@code delay}).
   */
  @Test
  void aDueTimerWaitingInLineRunsUnderAGracefulPoolShutdown_guarantee7()
      throws InterruptedException {
    WorkerPool pool = fx.pool(b -> b.capacity(1));
    Scheduler s = PoolSchedulers.from(pool);
    CountDownLatch hold = fx.saturate(pool);
    TestObserver<Long> timer = Single.timer(1, TimeUnit.MILLISECONDS, s).test();
    TestObserver<Integer> delayed = Single.just(7).delay(1, TimeUnit.MILLISECONDS, s).test();
    await().until(() -> pool.stats().waiting() == 2); // both came due and wait for the seat
    pool.shutdown();
    hold.countDown();
    timer.await(10, TimeUnit.SECONDS);
    delayed.await(10, TimeUnit.SECONDS);
    timer.assertResult(0L);
    delayed.assertResult(7);
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(fx.errors).isEmpty();
  }

  /**
   * Issue 21, fault 2, owning scheduler: its {@code shutdown()} is its pool's graceful shutdown, so
   * a due timer waiting in line runs. It used to dispose them first: both streams hung, no signal.
   */
  @Test
  void aDueTimerRunsWhenAnOwningSchedulerShutsItsPoolDown_guarantee7()
      throws InterruptedException {
    WorkerPool pool = fx.pool(b -> b.capacity(1));
    Scheduler s = PoolSchedulers.fromOwned(pool);
    CountDownLatch hold = fx.saturate(pool);
    TestObserver<Long> timer = Single.timer(1, TimeUnit.MILLISECONDS, s).test();
    TestObserver<Integer> delayed = Single.just(7).delay(1, TimeUnit.MILLISECONDS, s).test();
    Disposable notDue = s.scheduleDirect(() -> { }, 1, TimeUnit.DAYS);
    await().until(() -> pool.stats().waiting() == 2); // both came due and wait for the seat
    s.shutdown();
    assertThat(notDue.isDisposed()).as("a timer not yet due is cancelled").isTrue();
    hold.countDown();
    timer.await(10, TimeUnit.SECONDS);
    delayed.await(10, TimeUnit.SECONDS);
    timer.assertResult(0L);
    delayed.assertResult(7);
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(((PoolScheduler) s).liveCount()).isZero();
    assertThat(fx.errors).isEmpty();
  }

  @Test
  void shutdownStopsEveryOutstandingWorkerForGood() {
    WorkerPool pool = fx.pool(b -> b.capacity(2));
    PoolScheduler s = PoolScheduler.conventional(pool, false);
    Scheduler.Worker w = s.createWorker();
    CountDownLatch hold = fx.hold();
    CountDownLatch running = new CountDownLatch(1);
    AtomicBoolean queuedRan = new AtomicBoolean();
    w.schedule(() -> {
      running.countDown();
      RxFixture.awaitQuietly(hold);
    });
    Disposable queued = w.schedule(() -> queuedRan.set(true));
    RxFixture.awaitQuietly(running);
    assertThat(s.liveCount()).isZero(); // immediate work needs no registration

    s.shutdown();
    assertThat(w.isDisposed()).isTrue();
    assertThat(queued.isDisposed()).isTrue();
    hold.countDown();
    RxFixture.awaitQuiet(pool);
    assertThat(queuedRan).isFalse();

    s.start(); // a restart does not revive the workers of before
    assertThat(w.isDisposed()).isTrue();
    assertThat(w.schedule(() -> queuedRan.set(true))).isSameAs(Disposable.disposed());
    assertRuns(s);
    assertThat(queuedRan).isFalse();
  }

  @Test
  void anOwningSchedulerClosesItsPoolAndStartReopensIt() throws InterruptedException {
    WorkerPool pool = fx.pool(b -> b);
    Scheduler s = PoolSchedulers.fromOwned(pool);
    assertRuns(s);
    s.shutdown();
    assertThat(pool.isShutdown()).isTrue();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertRefuses(s);
    assertThat(fx.errors).isEmpty(); // refusals after shutdown are not errors

    s.start();
    assertThat(pool.isShutdown()).isFalse();
    assertRuns(s);
    assertThat(s.toString()).isEqualTo("PoolSchedulers.fromOwned(" + pool + ")");
    assertThat(PoolSchedulers.from(pool).toString()).isEqualTo("PoolSchedulers.from(" + pool + ")");
  }

  /**
   * Issue 12, fault 5: {@code start()} while the owned pool's last task still ran cleared the
   * scheduler's shut-down flag over a closed pool, so every later {@code start()} was a no-op and
   * the scheduler stayed dead for good.
   */
  @Test
  void startWhileTheOwnedPoolsLastTaskRunsLeavesALaterStartAbleToReopen_fault5()
      throws InterruptedException {
    WorkerPool pool = fx.pool(b -> b);
    Scheduler s = PoolSchedulers.fromOwned(pool);
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    s.scheduleDirect(() -> {
      inside.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
    s.shutdown();
    s.start(); // the pool cannot reopen yet: its last task runs
    assertRefuses(s);
    release.countDown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();

    s.start();
    assertThat(pool.isShutdown()).as("the later start reopened the pool").isFalse();
    assertRuns(s);
    assertThat(fx.errors).isEmpty();
  }

  @Test
  void startAndShutdownAreThreadSafe() throws Exception {
    WorkerPool pool = fx.pool(b -> b.capacity(4));
    PoolScheduler s = PoolScheduler.conventional(pool, false);
    int threads = 8;
    CyclicBarrier barrier = new CyclicBarrier(threads);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> all = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread th = new Thread(() -> {
        try {
          barrier.await();
          ThreadLocalRandom rnd = ThreadLocalRandom.current();
          for (int i = 0; i < 2_000; i++) {
            switch (rnd.nextInt(5)) {
              case 0 -> s.shutdown();
              case 1 -> s.start();
              case 2 -> s.scheduleDirect(() -> { }, 1, TimeUnit.DAYS);
              case 3 -> s.createWorker().schedule(() -> { }, 1, TimeUnit.DAYS);
              default -> s.schedulePeriodicallyDirect(() -> { }, 1, 1, TimeUnit.DAYS);
            }
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      });
      all.add(th);
      th.start();
    }
    for (Thread th : all) {
      th.join();
    }
    assertThat(failure.get()).isNull();
    s.shutdown();
    assertThat(s.liveCount()).isZero(); // nothing created concurrently escaped the shutdown
    assertRefuses(s);
    s.start();
    assertRuns(s);
    assertThat(fx.errors).isEmpty();
    await().until(() -> pool.stats().busy() == 0);
  }
}
