package dev.warmpool.rxjava3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.awaitility.Awaitility.await;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Maybe;
import io.reactivex.rxjava3.core.Observable;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.observers.TestObserver;
import io.reactivex.rxjava3.subjects.PublishSubject;
import io.reactivex.rxjava3.subscribers.TestSubscriber;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Contract 5, general form: bodies with time operators on the pool's scheduler. */
class PoolScopeTest {
  @RegisterExtension
  final RxFixture fx = new RxFixture();

  @Test
  void intervalDelayAndTimeoutRunOnThePool() throws InterruptedException {
    WorkerPool pool = fx.nonblocking(4);
    List<String> threads = new CopyOnWriteArrayList<>();
    TestSubscriber<Long> ts = PoolScope.flowable(pool, s ->
            Flowable.interval(10, TimeUnit.MILLISECONDS, s).take(3)
                .delay(5, TimeUnit.MILLISECONDS, s)
                .timeout(5, TimeUnit.SECONDS, s)
                .doOnNext(v -> threads.add(Thread.currentThread().getName())))
        .test();
    ts.await(10, TimeUnit.SECONDS);
    ts.assertResult(0L, 1L, 2L);
    assertThat(threads).allMatch(t -> t.startsWith(pool.name() + "-"));
    assertThat(fx.errors).isEmpty();
  }

  /**
   * Issue 12, fault 4 (RxJava part): pending timers, intervals and timeouts of a scope end with a
   * {@code PoolClosedException} when the pool shuts down; v1 left the streams hanging.
   */
  @Test
  void pendingTimersOfAScopeEndWithPoolClosedWhenThePoolShutsDown_fault4() {
    WorkerPool pool = fx.nonblocking(2);
    TestSubscriber<Long> interval = PoolScope.flowable(pool, s ->
        Flowable.interval(1, TimeUnit.HOURS, s)).test();
    TestObserver<Long> timer = PoolScope.single(pool, s ->
        Single.timer(1, TimeUnit.HOURS, s)).test();
    TestObserver<Object> timeout = PoolScope.single(pool, s ->
        Single.never().timeout(1, TimeUnit.HOURS, s)).test();
    interval.assertNotComplete().assertNoErrors();
    timer.assertNotComplete().assertNoErrors();
    timeout.assertNotComplete().assertNoErrors();

    pool.shutdown(); // cancels the pending timers: each stream hears of it at once
    interval.assertError(dev.warmpool.PoolClosedException.class).assertNoValues();
    timer.assertError(dev.warmpool.PoolClosedException.class).assertNoValues();
    timeout.assertError(dev.warmpool.PoolClosedException.class).assertNoValues();
    assertThat(fx.errors).isEmpty();
  }

  /** Fault 4 for a worker's periodic task, which waits between runs as a one-shot delayed task. */
  @Test
  void aPendingPeriodicWorkerTaskOfAScopeEndsWithPoolClosedWhenThePoolShutsDown() {
    WorkerPool pool = fx.nonblocking(2);
    TestObserver<Integer> ticks = PoolScope.observable(pool, s ->
        Observable.<Integer>create(e -> {
          Scheduler.Worker w = s.createWorker();
          e.setDisposable(w);
          w.schedulePeriodically(() -> e.onNext(1), 1, 1, TimeUnit.HOURS);
        })).test();
    ticks.assertNotComplete().assertNoErrors();
    pool.shutdown();
    ticks.assertError(dev.warmpool.PoolClosedException.class).assertNoValues();
    assertThat(fx.errors).isEmpty();
  }

  /**
   * Issue 21, fault 1: a {@code delay} stream whose worker first ran a delayed task (and delivered
   * items) is an admitted unit; its later immediate task (here {@code delay}'s onError, which it
   * schedules without delay) waits its turn on a full pool instead of ending the stream with a
   * {@code PoolOverloadedException}.
   */
  @Test
  void aDelayStreamThatDeliveredItemsEndsWithItsOwnErrorOnAFullPool_guarantee6()
      throws InterruptedException {
    WorkerPool pool = fx.nonblocking(1);
    PublishSubject<Integer> source = PublishSubject.create();
    TestObserver<Integer> to = PoolScope.observable(pool, s ->
        source.delay(1, TimeUnit.MILLISECONDS, s)).test();
    source.onNext(1);
    await().until(() -> to.values().size() == 1); // the delayed item ran on the worker's lane
    RxFixture.awaitQuiet(pool);
    CountDownLatch hold = fx.saturate(pool);
    IllegalStateException boom = new IllegalStateException("boom");
    source.onError(boom); // delay schedules onError at once (delayError is false)
    to.assertNoErrors(); // not refused: it waits for the seat
    hold.countDown();
    to.await(10, TimeUnit.SECONDS);
    to.assertFailure(IllegalStateException.class, 1);
    assertThat(fx.errors).isEmpty();
  }

  /** Issue 21, fault 2, in a scope: a due timer runs under a graceful shutdown, no PoolClosed. */
  @Test
  void aDueTimerOfAScopeRunsUnderAGracefulPoolShutdown_guarantee7() throws InterruptedException {
    WorkerPool pool = fx.pool(b -> b.capacity(1));
    CountDownLatch hold = fx.saturate(pool);
    TestObserver<Long> timer = PoolScope.single(pool, s ->
        Single.timer(1, TimeUnit.MILLISECONDS, s)).test();
    TestObserver<Integer> delayed = PoolScope.single(pool, s ->
        Single.just(7).delay(1, TimeUnit.MILLISECONDS, s)).test();
    await().until(() -> pool.stats().waiting() == 2); // both came due and wait for the seat
    pool.shutdown();
    hold.countDown();
    timer.await(10, TimeUnit.SECONDS);
    delayed.await(10, TimeUnit.SECONDS);
    timer.assertResult(0L);
    delayed.assertResult(7);
    assertThat(fx.errors).isEmpty();
  }

  @Test
  void aTimeoutOnThePoolSchedulerFires() throws InterruptedException {
    WorkerPool pool = fx.nonblocking(2);
    TestObserver<Object> to = PoolScope.single(pool, s ->
        Single.never().timeout(30, TimeUnit.MILLISECONDS, s)).test();
    to.await(10, TimeUnit.SECONDS);
    to.assertError(TimeoutException.class);
  }

  @Test
  void aRejectionInTheBodyEndsTheStreamOnceAndCancelsItsTimers() {
    WorkerPool pool = fx.nonblocking(1);
    fx.saturate(pool);
    TestObserver<Integer> to = PoolScope.observable(pool, s ->
        Observable.just(1).subscribeOn(s).timeout(50, TimeUnit.MILLISECONDS, s)).test();
    to.assertError(PoolOverloadedException.class).assertNoValues();
    // the timeout's timer was disposed with the stream: no late TimeoutException anywhere
    await().during(RxFixture.millis(150)).atMost(RxFixture.millis(2_000))
        .untilAsserted(() -> {
          assertThat(fx.errors).isEmpty();
          to.assertError(PoolOverloadedException.class); // exactly one onError
        });
  }

  @Test
  void manyRejectionsInOneStreamGiveOneOnError() throws InterruptedException {
    WorkerPool pool = fx.nonblocking(2);
    CountDownLatch hold = fx.hold();
    TestSubscriber<Integer> ts = PoolScope.flowable(pool, s ->
            Flowable.range(1, 100).flatMap(i -> Flowable.fromCallable(() -> {
              RxFixture.awaitQuietly(hold); // the first two fill the pool
              return i;
            }).subscribeOn(s)))
        .test();
    ts.assertError(PoolOverloadedException.class).assertNoValues();
    hold.countDown();
    RxFixture.awaitQuiet(pool);
    ts.assertError(PoolOverloadedException.class).assertNoValues(); // still exactly one
    assertThat(fx.errors).isEmpty();
  }

  @Test
  void eachSubscriptionGetsItsOwnScope() throws InterruptedException {
    WorkerPool pool = fx.nonblocking(1);
    Single<String> work = PoolScope.single(pool, s ->
        Single.fromCallable(() -> "done").subscribeOn(s));
    CountDownLatch hold = fx.saturate(pool);
    work.test().assertError(PoolOverloadedException.class);
    hold.countDown();
    RxFixture.awaitQuiet(pool);
    TestObserver<String> second = work.test();
    second.await(10, TimeUnit.SECONDS);
    second.assertResult("done");
  }

  @Test
  void everyTypeHasAScope() throws InterruptedException {
    WorkerPool pool = fx.nonblocking(2);
    TestObserver<Integer> maybe = PoolScope.maybe(pool, s ->
        Maybe.just(1).delay(5, TimeUnit.MILLISECONDS, s)).test();
    TestObserver<Void> completable = PoolScope.completable(pool, s ->
        Completable.timer(5, TimeUnit.MILLISECONDS, s)).test();
    maybe.await(10, TimeUnit.SECONDS);
    completable.await(10, TimeUnit.SECONDS);
    maybe.assertResult(1);
    completable.assertResult();
  }

  @Test
  void aBodyThatThrowsOrReturnsNullErrorsTheSubscriber() {
    WorkerPool pool = fx.pool(b -> b);
    IllegalStateException boom = new IllegalStateException("boom");
    PoolScope.flowable(pool, s -> {
      throw boom;
    }).test().assertError(boom);
    PoolScope.<Integer>single(pool, s -> null).test().assertError(NullPointerException.class);
    assertThatNullPointerException().isThrownBy(() -> PoolScope.completable(null, s -> null));
    assertThatNullPointerException().isThrownBy(() -> PoolScope.completable(pool, null));
    assertThat(fx.errors).isEmpty();
  }
}
