package dev.warmpool.rxjava3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.awaitility.Awaitility.await;

import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.exceptions.UndeliverableException;
import io.reactivex.rxjava3.plugins.RxJavaPlugins;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Contract 3: the schedule hook, null tasks, throwing tasks. */
class HooksAndFailuresTest {
  @RegisterExtension
  final RxFixture fx = new RxFixture();

  @Test
  void everyTaskPassesThroughOnScheduleOnce() {
    AtomicInteger hooked = new AtomicInteger();
    AtomicInteger wrappedRuns = new AtomicInteger();
    RxJavaPlugins.setScheduleHandler(r -> {
      hooked.incrementAndGet();
      return () -> {
        wrappedRuns.incrementAndGet();
        r.run();
      };
    });
    Scheduler s = PoolSchedulers.from(fx.pool(b -> b.capacity(4)));
    Scheduler.Worker w = s.createWorker();
    AtomicInteger ran = new AtomicInteger();
    s.scheduleDirect(ran::incrementAndGet);
    s.scheduleDirect(ran::incrementAndGet, 5, TimeUnit.MILLISECONDS);
    w.schedule(ran::incrementAndGet);
    w.schedule(ran::incrementAndGet, 5, TimeUnit.MILLISECONDS);
    AtomicInteger directTicks = new AtomicInteger();
    AtomicInteger workerTicks = new AtomicInteger();
    Disposable p1 = s.schedulePeriodicallyDirect(directTicks::incrementAndGet, 0, 5,
        TimeUnit.MILLISECONDS);
    Disposable p2 = w.schedulePeriodically(workerTicks::incrementAndGet, 0, 5,
        TimeUnit.MILLISECONDS);
    await().until(() -> ran.get() == 4 && directTicks.get() >= 3 && workerTicks.get() >= 3);
    p1.dispose();
    p2.dispose();
    w.dispose();

    assertThat(hooked).hasValue(6); // once per task, not once per periodic run
    await().until(() -> wrappedRuns.get() == ran.get() + directTicks.get() + workerTicks.get());
  }

  @Test
  void aNullTaskThrowsRunIsNull() {
    Scheduler s = PoolSchedulers.from(fx.pool(b -> b));
    Scheduler.Worker w = s.createWorker();
    List<Consumer<Runnable>> calls = List.of(
        s::scheduleDirect,
        r -> s.scheduleDirect(r, 1, TimeUnit.SECONDS),
        r -> s.schedulePeriodicallyDirect(r, 1, 1, TimeUnit.SECONDS),
        w::schedule,
        r -> w.schedule(r, 1, TimeUnit.SECONDS),
        r -> w.schedulePeriodically(r, 1, 1, TimeUnit.SECONDS));
    for (Consumer<Runnable> call : calls) {
      assertThatNullPointerException().isThrownBy(() -> call.accept(null))
          .withMessage("run is null");
    }
    w.dispose();
    s.shutdown(); // also when nothing would run
    for (Consumer<Runnable> call : calls) {
      assertThatNullPointerException().isThrownBy(() -> call.accept(null))
          .withMessage("run is null");
    }
  }

  @Test
  void aHookReturningNullIsRefusedLikeANullTask() {
    Scheduler s = PoolSchedulers.from(fx.pool(b -> b));
    RxJavaPlugins.setScheduleHandler(r -> null);
    assertThatNullPointerException().isThrownBy(() -> s.scheduleDirect(() -> { }))
        .withMessageStartingWith("run is null");
    assertThatNullPointerException().isThrownBy(() -> s.createWorker().schedule(() -> { }))
        .withMessageStartingWith("run is null");
  }

  @Test
  void aThrowingWorkerTaskIsCountedReportedOnceAndTheLaneGoesOn() {
    WorkerPool pool = fx.pool(b -> b.capacity(1));
    Scheduler.Worker w = PoolSchedulers.from(pool).createWorker();
    RuntimeException boom = new RuntimeException("boom");
    CountDownLatch later = new CountDownLatch(3);
    w.schedule(() -> {
      throw boom;
    });
    w.schedule(later::countDown);
    w.schedule(() -> {
      throw boom;
    }, 10, TimeUnit.MILLISECONDS);
    w.schedule(later::countDown, 20, TimeUnit.MILLISECONDS);
    w.schedule(later::countDown, 30, TimeUnit.MILLISECONDS);
    RxFixture.awaitQuietly(later);

    assertThat(pool.stats().failed()).isEqualTo(2);
    assertThat(fx.errors).hasSize(2).allSatisfy(e ->
        assertThat(e).isInstanceOf(UndeliverableException.class).hasCause(boom));
  }

  @Test
  void aThrowingDirectTaskIsCountedAndReportedOnce() {
    WorkerPool pool = fx.pool(b -> b.capacity(1));
    Scheduler s = PoolSchedulers.from(pool);
    IllegalStateException boom = new IllegalStateException("boom");
    Disposable d = s.scheduleDirect(() -> {
      throw boom;
    });
    await().until(d::isDisposed);
    CountDownLatch after = new CountDownLatch(1);
    s.scheduleDirect(after::countDown); // one worker: it survived
    RxFixture.awaitQuietly(after);
    await().until(() -> pool.stats().failed() == 1);
    assertThat(fx.errors).containsExactly(boom); // a "bug" exception is passed unwrapped
  }

  @Test
  void aThrowingPeriodicTaskIsReportedOnceAndStops() {
    WorkerPool pool = fx.pool(b -> b.capacity(2));
    Scheduler s = PoolSchedulers.from(pool);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger runs = new AtomicInteger();
    Disposable p = w.schedulePeriodically(() -> {
      runs.incrementAndGet();
      throw new IllegalStateException("tick");
    }, 0, 10, TimeUnit.MILLISECONDS);
    await().until(p::isDisposed);
    CountDownLatch sentinel = new CountDownLatch(1);
    w.schedule(sentinel::countDown, 50, TimeUnit.MILLISECONDS); // the lane is still usable
    RxFixture.awaitQuietly(sentinel);
    assertThat(runs).hasValue(1);
    assertThat(fx.errors).hasSize(1);
    await().until(() -> pool.stats().failed() == 1);
  }

  /**
   * As RxJava's own periodic tasks: the first throw is reported once and ends the schedule; the
   * pool's fixed-rate schedule ends with it (nothing left tracked, no later run, one failure).
   */
  @Test
  void aThrowingPeriodicDirectTaskIsReportedOnceAndStops() {
    WorkerPool pool = fx.pool(b -> b.capacity(2));
    PoolScheduler s = (PoolScheduler) PoolSchedulers.from(pool);
    AtomicInteger runs = new AtomicInteger();
    IllegalStateException boom = new IllegalStateException("tick");
    Disposable p = s.schedulePeriodicallyDirect(() -> {
      runs.incrementAndGet();
      throw boom;
    }, 0, 10, TimeUnit.MILLISECONDS);
    await().until(p::isDisposed);
    CountDownLatch sentinel = new CountDownLatch(1);
    s.scheduleDirect(sentinel::countDown, 50, TimeUnit.MILLISECONDS); // later runs would be due
    RxFixture.awaitQuietly(sentinel);
    RxFixture.awaitQuiet(pool);
    assertThat(runs).hasValue(1);
    assertThat(fx.errors).containsExactly(boom);
    assertThat(pool.stats().failed()).isEqualTo(1);
    await().until(() -> s.liveCount() == 0);
  }

  /** Schedules six failing tasks, one per door: immediate, delayed, periodic; direct and worker. */
  private static void failOncePerDoor(Scheduler s, RuntimeException boom) {
    Runnable fail = () -> {
      throw boom;
    };
    Scheduler.Worker w = s.createWorker();
    s.scheduleDirect(fail);
    s.scheduleDirect(fail, 1, TimeUnit.MILLISECONDS);
    s.schedulePeriodicallyDirect(fail, 1, 3_600_000, TimeUnit.MILLISECONDS); // first run in 1 ms
    w.schedule(fail);
    w.schedule(fail, 1, TimeUnit.MILLISECONDS);
    w.schedulePeriodically(fail, 1, 3_600_000, TimeUnit.MILLISECONDS);
  }

  /**
   * Issue 21, fault 3: by default a failing adapter task counts in {@code stats().failed} and is
   * reported exactly once, to {@code RxJavaPlugins.onError} (not also to the thread's handler).
   */
  @Test
  void aFailingTaskIsCountedAndReportedOnceToOnErrorByDefault_guarantee8() {
    List<Throwable> threadHandler = new CopyOnWriteArrayList<>();
    WorkerPool pool = fx.pool(b -> b.capacity(2).threadFactory(r -> {
      Thread t = new Thread(r);
      t.setDaemon(true);
      t.setUncaughtExceptionHandler((th, e) -> threadHandler.add(e));
      return t;
    }));
    RuntimeException boom = new IllegalStateException("boom");
    failOncePerDoor(PoolSchedulers.from(pool), boom);
    await().until(() -> pool.stats().failed() == 6 && fx.errors.size() == 6);
    RxFixture.awaitQuiet(pool);
    assertThat(pool.stats().failed()).isEqualTo(6);
    assertThat(fx.errors).hasSize(6).allSatisfy(e -> assertThat(e).isSameAs(boom));
    assertThat(threadHandler).isEmpty();
  }

  /**
   * Issue 21, fault 3: a failure handler set on the builder sees every failure, adapter tasks
   * included, once each; then it is the one report ({@code RxJavaPlugins.onError} hears nothing).
   */
  @Test
  void anExplicitFailureHandlerSeesEveryAdapterFailure_guarantee8() {
    List<Throwable> poolFailures = new CopyOnWriteArrayList<>();
    WorkerPool pool = fx.pool(b -> b.capacity(2).failureHandler((t, e) -> poolFailures.add(e)));
    RuntimeException boom = new IllegalStateException("boom");
    failOncePerDoor(PoolSchedulers.from(pool), boom);
    await().until(() -> pool.stats().failed() == 6 && poolFailures.size() == 6);
    RxFixture.awaitQuiet(pool);
    assertThat(pool.stats().failed()).isEqualTo(6);
    assertThat(poolFailures).hasSize(6).allSatisfy(e -> assertThat(e).isSameAs(boom));
    assertThat(fx.errors).isEmpty();
  }

  /**
   * Guarantee 8 through {@link PoolScope} and {@link PoolTransformers}: the six doors of a scope's
   * scheduler, and a fatal error that RxJava rethrows out of a {@code subscribeOn} task (it is not
   * the stream's to deliver); seven failures.
   */
  private static void failThroughScopeAndTransformer(WorkerPool pool, RuntimeException boom) {
    PoolScope.completable(pool, s -> {
      failOncePerDoor(s, boom);
      return Completable.never();
    }).subscribe();
    Single.fromCallable(() -> {
      throw new LinkageError("fatal", boom);
    }).compose(PoolTransformers.subscribeOn(pool)).subscribe(v -> { }, e -> { });
  }

  @Test
  void scopeAndTransformerFailuresAreCountedAndReportedOnceToOnError_guarantee8() {
    WorkerPool pool = fx.pool(b -> b.capacity(2));
    RuntimeException boom = new IllegalStateException("boom");
    failThroughScopeAndTransformer(pool, boom);
    await().until(() -> pool.stats().failed() == 7 && fx.errors.size() == 7);
    RxFixture.awaitQuiet(pool);
    assertThat(pool.stats().failed()).isEqualTo(7);
    assertThat(fx.errors).filteredOn(e -> e == boom).hasSize(6);
    assertThat(fx.errors).filteredOn(e -> e instanceof UndeliverableException)
        .singleElement().satisfies(e -> assertThat(e.getCause()).isInstanceOf(LinkageError.class));
  }

  @Test
  void anExplicitFailureHandlerSeesScopeAndTransformerFailures_guarantee8() {
    List<Throwable> poolFailures = new CopyOnWriteArrayList<>();
    WorkerPool pool = fx.pool(b -> b.capacity(2).failureHandler((t, e) -> poolFailures.add(e)));
    RuntimeException boom = new IllegalStateException("boom");
    failThroughScopeAndTransformer(pool, boom);
    await().until(() -> pool.stats().failed() == 7 && poolFailures.size() == 7);
    RxFixture.awaitQuiet(pool);
    assertThat(pool.stats().failed()).isEqualTo(7);
    assertThat(poolFailures).filteredOn(e -> e == boom).hasSize(6);
    assertThat(poolFailures).filteredOn(e -> e instanceof LinkageError).hasSize(1);
    assertThat(fx.errors).isEmpty();
  }

  @Test
  void aHookReturningNullIsRefusedForPeriodicTasksToo() {
    Scheduler s = PoolSchedulers.from(fx.pool(b -> b));
    Scheduler.Worker w = s.createWorker();
    RxJavaPlugins.setScheduleHandler(r -> null);
    assertThatNullPointerException()
        .isThrownBy(() -> s.schedulePeriodicallyDirect(() -> { }, 1, 1, TimeUnit.SECONDS))
        .withMessageStartingWith("run is null");
    assertThatNullPointerException()
        .isThrownBy(() -> w.schedulePeriodically(() -> { }, 1, 1, TimeUnit.SECONDS))
        .withMessageStartingWith("run is null");
    w.dispose();
    assertThat(fx.errors).isEmpty();
  }
}
