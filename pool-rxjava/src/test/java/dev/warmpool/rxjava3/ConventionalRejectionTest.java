package dev.warmpool.rxjava3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.warmpool.PoolClosedException;
import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.exceptions.UndeliverableException;
import io.reactivex.rxjava3.subscribers.TestSubscriber;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Contract 4: the conventional scheduler never throws; rejections go to RxJavaPlugins.onError. */
class ConventionalRejectionTest {
  @RegisterExtension
  final RxFixture fx = new RxFixture();

  private void assertOneRejection(Class<? extends Throwable> type) {
    assertThat(fx.errors).hasSize(1).first()
        .isInstanceOf(UndeliverableException.class)
        .extracting(Throwable::getCause).isInstanceOf(type);
    fx.errors.clear();
  }

  @Test
  void aRejectedDirectTaskReturnsDisposedAndGoesToOnError() {
    WorkerPool pool = fx.nonblocking(1);
    Scheduler s = PoolSchedulers.from(pool);
    fx.saturate(pool);
    assertThat(s.scheduleDirect(() -> { })).isSameAs(Disposable.disposed());
    assertOneRejection(PoolOverloadedException.class);
  }

  @Test
  void aWorkerRejectedAtAdmissionReturnsDisposedAndGoesToOnError() {
    WorkerPool pool = fx.nonblocking(1);
    Scheduler s = PoolSchedulers.from(pool);
    fx.saturate(pool);
    Scheduler.Worker w = s.createWorker();
    assertThat(w.schedule(() -> { })).isSameAs(Disposable.disposed());
    assertOneRejection(PoolOverloadedException.class);
  }

  /**
   * Issue 23: a direct task that expires in a blocking pool's line never runs and is reported like a
   * rejection, to {@code RxJavaPlugins.onError}; its disposable reads disposed.
   */
  @Test
  void aDirectTaskExpiredInLineGoesToOnErrorLikeARejection_issue23() {
    WorkerPool pool = fx.pool(b -> b.capacity(1).maxWaitInLine(Duration.ofMillis(20)));
    Scheduler s = PoolSchedulers.from(pool);
    fx.saturate(pool);
    CountDownLatch ran = new CountDownLatch(1);
    Disposable d = s.scheduleDirect(ran::countDown);
    await().until(() -> fx.errors.size() == 1);
    assertOneRejection(PoolOverloadedException.class);
    assertThat(d.isDisposed()).isTrue();
    fx.holdsRelease();
    RxFixture.awaitQuiet(pool);
    assertThat(ran.getCount()).isEqualTo(1);
    assertThat(pool.stats().expired()).isEqualTo(1);
  }

  /**
   * Issue 23, ready for lane deadlines: when the core expires tasks of a worker's lane waiting for
   * its first seat (it tells each task {@code onExpired} with its cause), the worker ends as on a
   * rejection: its tasks never run, it reads disposed, and it is reported once, with core's cause.
   * The core's expiry is played by hand here, on two tasks of one worker, since lanes do not
   * expire yet.
   */
  @Test
  void aWorkersExpiredTasksEndItWithOneReport_issue23() throws InterruptedException {
    WorkerPool pool = fx.pool(b -> b.capacity(1));
    Scheduler.Worker w = PoolSchedulers.from(pool).createWorker();
    CountDownLatch hold = fx.saturate(pool);
    CountDownLatch ran = new CountDownLatch(2);
    Disposable first = w.schedule(ran::countDown); // the lane waits in line for its first seat
    Disposable second = w.schedule(ran::countDown);
    PoolOverloadedException cause = new PoolOverloadedException("waited 5 ms in line");
    ((dev.warmpool.CancellationAware) first).onExpired(cause);
    ((dev.warmpool.CancellationAware) second).onExpired(cause);
    assertThat(fx.errors).hasSize(1).first().extracting(Throwable::getCause).isSameAs(cause);
    fx.errors.clear();
    assertThat(first.isDisposed()).isTrue();
    assertThat(w.isDisposed()).isTrue();
    hold.countDown();
    RxFixture.awaitQuiet(pool);
    assertThat(ran.getCount()).isEqualTo(2);
  }

  /**
   * Issue 21, fault 1: a worker is one unit; one that needed a thread for its delayed task was
   * admitted then, so a later immediate task waits its turn on a full pool instead of being refused.
   */
  @Test
  void aWorkerAdmittedByADelayedTaskIsNotRejectedLater_guarantee6() {
    WorkerPool pool = fx.nonblocking(1);
    Scheduler.Worker w = PoolSchedulers.from(pool).createWorker();
    CountDownLatch delayedRan = new CountDownLatch(1);
    w.schedule(delayedRan::countDown, 1, TimeUnit.MILLISECONDS);
    RxFixture.awaitQuietly(delayedRan);
    RxFixture.awaitQuiet(pool);
    CountDownLatch hold = fx.saturate(pool);
    CountDownLatch ran = new CountDownLatch(1);
    assertThat(w.schedule(ran::countDown)).isNotSameAs(Disposable.disposed());
    assertThat(w.isDisposed()).isFalse();
    assertThat(fx.errors).isEmpty();
    hold.countDown();
    RxFixture.awaitQuietly(ran);
  }

  /**
   * Issue 21, suspected zero delays: a worker's periodic task ({@code interval(0, ...)}) is a timer,
   * as a direct one is; its first run, due at once, is not refused for load on a full pool.
   */
  @Test
  void aWorkerPeriodicTaskDueAtOnceIsNotRejectedForLoad_guarantee7() {
    WorkerPool pool = fx.nonblocking(1);
    Scheduler.Worker w = PoolSchedulers.from(pool).createWorker();
    CountDownLatch hold = fx.saturate(pool);
    CountDownLatch ticked = new CountDownLatch(2);
    Disposable p = w.schedulePeriodically(ticked::countDown, 0, 1, TimeUnit.MILLISECONDS);
    assertThat(p.isDisposed()).isFalse();
    assertThat(w.isDisposed()).isFalse();
    assertThat(fx.errors).isEmpty();
    hold.countDown();
    RxFixture.awaitQuietly(ticked);
    p.dispose();
    assertThat(fx.errors).isEmpty();
  }

  @Test
  void aFullWaitingLineInBlockingModeIsARejectionToo() {
    WorkerPool pool = fx.pool(b -> b.capacity(1).maxWaiting(1));
    Scheduler s = PoolSchedulers.from(pool);
    fx.saturate(pool);
    assertThat(s.scheduleDirect(() -> { })).isNotSameAs(Disposable.disposed()); // waits in line
    assertThat(fx.errors).isEmpty();
    assertThat(s.scheduleDirect(() -> { })).isSameAs(Disposable.disposed());
    assertOneRejection(PoolOverloadedException.class);
  }

  @Test
  void aClosedPoolsRejectionsGoToOnError() {
    WorkerPool pool = fx.pool(b -> b);
    Scheduler s = PoolSchedulers.from(pool);
    Scheduler.Worker w = s.createWorker();
    pool.shutdown();
    assertThatNoException().isThrownBy(() -> {
      assertThat(s.scheduleDirect(() -> { })).isSameAs(Disposable.disposed());
      assertOneRejection(PoolClosedException.class);
      assertThat(s.scheduleDirect(() -> { }, 1, TimeUnit.SECONDS)).isSameAs(Disposable.disposed());
      assertOneRejection(PoolClosedException.class);
      assertThat(s.schedulePeriodicallyDirect(() -> { }, 1, 1, TimeUnit.SECONDS))
          .isSameAs(Disposable.disposed());
      assertOneRejection(PoolClosedException.class);
      assertThat(w.schedule(() -> { })).isSameAs(Disposable.disposed());
      assertOneRejection(PoolClosedException.class);
      Scheduler.Worker timed = s.createWorker(); // w disposed itself on its rejection
      assertThat(timed.schedule(() -> { }, 1, TimeUnit.SECONDS)).isSameAs(Disposable.disposed());
      assertOneRejection(PoolClosedException.class);
    });
  }

  /**
   * Issue 12, fault 9: a worker that saw a rejection disposes itself, as RxJava's own
   * {@code ExecutorWorker} does; later calls return {@code disposed()} without another error.
   */
  @Test
  void aWorkerThatSawARejectionDisposesItself_fault9() {
    WorkerPool pool = fx.nonblocking(1);
    Scheduler s = PoolSchedulers.from(pool);
    CountDownLatch hold = fx.saturate(pool);
    Scheduler.Worker w = s.createWorker();
    assertThat(w.schedule(() -> { })).isSameAs(Disposable.disposed());
    assertOneRejection(PoolOverloadedException.class);
    assertThat(w.isDisposed()).as("disposed after its rejection").isTrue();
    hold.countDown(); // the pool frees up, but the worker stays ended
    assertThat(w.schedule(() -> { })).isSameAs(Disposable.disposed());
    assertThat(fx.errors).as("no second report").isEmpty();
  }

  /**
   * Issue 21, suspected: one worker is one unit, rejected once (guarantee 6), so two threads that
   * schedule on it at once while the pool is full give one report, not two.
   */
  @Test
  void twoThreadsRejectedOnOneWorkerGiveOneReport_guarantee6() throws Exception {
    WorkerPool pool = fx.nonblocking(1);
    Scheduler s = PoolSchedulers.from(pool);
    fx.saturate(pool);
    java.util.concurrent.ExecutorService callers = java.util.concurrent.Executors
        .newFixedThreadPool(2);
    try {
      for (int round = 0; round < 500; round++) {
        Scheduler.Worker w = s.createWorker();
        java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(2);
        Runnable call = () -> {
          try {
            start.await();
          } catch (Exception e) {
            throw new AssertionError(e);
          }
          w.schedule(() -> { });
        };
        java.util.concurrent.Future<?> a = callers.submit(call);
        java.util.concurrent.Future<?> b = callers.submit(call);
        a.get();
        b.get();
        assertThat(fx.errors).as("round %d", round).hasSize(1);
        fx.errors.clear();
      }
    } finally {
      callers.shutdownNow();
    }
  }

  /**
   * Issue 12, fault 6: a disposed direct task leaves the pool's line at once, so {@code waiting}
   * and {@code maxWaiting} count only live work.
   */
  @Test
  void aDisposedDirectTaskGivesUpItsPlaceInLine_fault6() throws Exception {
    WorkerPool pool = fx.pool(b -> b.capacity(1).maxWaiting(1));
    Scheduler s = PoolSchedulers.from(pool);
    CountDownLatch hold = fx.saturate(pool);
    Disposable first = s.scheduleDirect(() -> { });
    Scheduler.Worker w = s.createWorker();
    w.schedule(() -> { }); // the line (maxWaiting 1) is full: this worker is rejected
    assertOneRejection(PoolOverloadedException.class);
    first.dispose();
    assertThat(pool.stats().waiting()).as("waiting after the dispose").isZero();
    CountDownLatch ran = new CountDownLatch(1);
    assertThat(s.scheduleDirect(ran::countDown)).isNotSameAs(Disposable.disposed());
    assertThat(fx.errors).isEmpty();
    hold.countDown();
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
  }

  /** The documented limitation that {@link PoolTransformers} exists for. */
  @Test
  void plainObserveOnCannotTellTheSubscriber() {
    WorkerPool pool = fx.nonblocking(1);
    Scheduler s = PoolSchedulers.from(pool);
    fx.saturate(pool);
    TestSubscriber<Integer> ts = Flowable.just(1).observeOn(s).test();
    assertOneRejection(PoolOverloadedException.class);
    ts.assertNoValues().assertNoErrors().assertNotComplete();
  }

  @Test
  void blockingModeNeverBlocksTheSchedulingThread() {
    WorkerPool pool = fx.pool(b -> b.capacity(1));
    Scheduler s = PoolSchedulers.from(pool);
    CountDownLatch hold = fx.saturate(pool);
    CountDownLatch ran = new CountDownLatch(3);
    assertTimeoutPreemptively(Duration.ofSeconds(5), () -> {
      s.scheduleDirect(ran::countDown);
      s.createWorker().schedule(ran::countDown);
      Flowable.just(1).observeOn(s).subscribe(v -> ran.countDown());
    });
    assertThat(ran.getCount()).isEqualTo(3); // all wait in line
    hold.countDown();
    RxFixture.awaitQuietly(ran);
    assertThat(fx.errors).isEmpty();
  }
}
