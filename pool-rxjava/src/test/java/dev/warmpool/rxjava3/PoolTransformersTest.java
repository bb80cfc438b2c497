package dev.warmpool.rxjava3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.warmpool.PoolClosedException;
import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Maybe;
import io.reactivex.rxjava3.core.Observable;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.observers.BaseTestConsumer;
import io.reactivex.rxjava3.observers.TestObserver;
import io.reactivex.rxjava3.processors.PublishProcessor;
import io.reactivex.rxjava3.subjects.CompletableSubject;
import io.reactivex.rxjava3.subjects.MaybeSubject;
import io.reactivex.rxjava3.subjects.PublishSubject;
import io.reactivex.rxjava3.subjects.SingleSubject;
import io.reactivex.rxjava3.subscribers.TestSubscriber;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Contract 5: rejections reach the subscriber, for all five reactive types. */
class PoolTransformersTest {
  @RegisterExtension
  final RxFixture fx = new RxFixture();

  /** An operator under test. */
  enum Op {
    OBSERVE_ON(PoolTransformers::observeOn),
    SUBSCRIBE_ON(PoolTransformers::subscribeOn);

    final Function<WorkerPool, PoolTransformer<Integer>> of;

    Op(Function<WorkerPool, PoolTransformer<Integer>> of) {
      this.of = of;
    }
  }

  /** A reactive type, composed with the transformer and subscribed to by a test consumer. */
  enum Type {
    FLOWABLE {
      @Override
      BaseTestConsumer<Integer, ?> subscribe(PoolTransformer<Integer> t, List<String> threads) {
        return Flowable.just(1, 2, 3).doOnNext(v -> threads.add(thread()))
            .compose(t).doOnNext(v -> threads.add(thread())).test();
      }
    },
    OBSERVABLE {
      @Override
      BaseTestConsumer<Integer, ?> subscribe(PoolTransformer<Integer> t, List<String> threads) {
        return Observable.just(1, 2, 3).doOnNext(v -> threads.add(thread()))
            .compose(t).doOnNext(v -> threads.add(thread())).test();
      }
    },
    SINGLE {
      @Override
      BaseTestConsumer<Integer, ?> subscribe(PoolTransformer<Integer> t, List<String> threads) {
        return Single.just(1).doOnSuccess(v -> threads.add(thread()))
            .compose(t).doOnSuccess(v -> threads.add(thread())).test();
      }
    },
    MAYBE {
      @Override
      BaseTestConsumer<Integer, ?> subscribe(PoolTransformer<Integer> t, List<String> threads) {
        return Maybe.just(1).doOnSuccess(v -> threads.add(thread()))
            .compose(t).doOnSuccess(v -> threads.add(thread())).test();
      }
    },
    COMPLETABLE {
      @Override
      BaseTestConsumer<Integer, ?> subscribe(PoolTransformer<Integer> t, List<String> threads) {
        TestObserver<Integer> to = new TestObserver<>();
        Completable.complete().doOnComplete(() -> threads.add(thread()))
            .compose(t).doOnComplete(() -> threads.add(thread())).subscribe(to);
        return to;
      }
    };

    abstract BaseTestConsumer<Integer, ?> subscribe(PoolTransformer<Integer> t,
        List<String> threads);

    static String thread() {
      return Thread.currentThread().getName();
    }
  }

  static List<Object[]> cases() {
    List<Object[]> all = new java.util.ArrayList<>();
    for (Type type : Type.values()) {
      for (Op op : Op.values()) {
        all.add(new Object[] {type, op});
      }
    }
    return all;
  }

  @ParameterizedTest
  @org.junit.jupiter.params.provider.MethodSource("cases")
  void runsOnThePool(Type type, Op op) throws InterruptedException {
    WorkerPool pool = fx.nonblocking(2);
    List<String> threads = new CopyOnWriteArrayList<>();
    BaseTestConsumer<Integer, ?> test = type.subscribe(op.of.apply(pool), threads);
    test.await(10, TimeUnit.SECONDS);
    test.assertNoErrors().assertComplete();
    if (type != Type.COMPLETABLE) {
      assertThat(test.values()).startsWith(1);
    }
    // subscribeOn moves the upstream, observeOn the downstream: the last signal is on the pool.
    assertThat(threads.get(threads.size() - 1)).startsWith(pool.name() + "-");
    if (op == Op.SUBSCRIBE_ON) {
      assertThat(threads.get(0)).startsWith(pool.name() + "-");
    }
    assertThat(fx.errors).isEmpty();
  }

  @ParameterizedTest
  @org.junit.jupiter.params.provider.MethodSource("cases")
  void aSaturatedNonblockingPoolEndsTheStreamWithOneOnError(Type type, Op op) {
    WorkerPool pool = fx.nonblocking(2);
    fx.saturate(pool);
    List<String> threads = new CopyOnWriteArrayList<>();
    BaseTestConsumer<Integer, ?> test = type.subscribe(op.of.apply(pool), threads); // no throw
    test.assertError(PoolOverloadedException.class).assertNoValues().assertNotComplete();
    assertThat(fx.errors).isEmpty();
    if (op == Op.SUBSCRIBE_ON) {
      assertThat(threads).isEmpty(); // the upstream was never subscribed
    }
    // nothing else arrives later: the workers are disposed, the upstream cancelled
    fx.holdsRelease();
    RxFixture.awaitQuiet(pool);
    test.assertError(PoolOverloadedException.class).assertNoValues().assertNotComplete();
    assertThat(fx.errors).isEmpty();
  }

  @ParameterizedTest
  @org.junit.jupiter.params.provider.MethodSource("cases")
  void aFullWaitingLineInBlockingModeEndsTheStreamWithOneOnError(Type type, Op op) {
    WorkerPool pool = fx.pool(b -> b.capacity(1).maxWaiting(0));
    fx.saturate(pool);
    BaseTestConsumer<Integer, ?> test = type.subscribe(op.of.apply(pool),
        new CopyOnWriteArrayList<>());
    test.assertError(PoolOverloadedException.class).assertNoValues().assertNotComplete();
    assertThat(fx.errors).isEmpty();
  }

  @ParameterizedTest
  @org.junit.jupiter.params.provider.MethodSource("cases")
  void aClosedPoolEndsTheStreamWithPoolClosedException(Type type, Op op) {
    WorkerPool pool = fx.pool(b -> b);
    pool.shutdown();
    BaseTestConsumer<Integer, ?> test = type.subscribe(op.of.apply(pool),
        new CopyOnWriteArrayList<>());
    test.assertError(PoolClosedException.class).assertNoValues().assertNotComplete();
    assertThat(fx.errors).isEmpty();
  }

  /**
   * Issue 23: a direct task that waits in a blocking pool's line past {@code maxWaitInLine} never
   * runs and reaches the subscriber like a rejection, within a bounded wait.
   */
  @Test
  void aTaskExpiredInLineEndsTheStreamWithPoolOverloaded_issue23()
      throws InterruptedException {
    WorkerPool pool = fx.pool(b -> b.capacity(1).maxWaitInLine(Duration.ofMillis(50)));
    fx.saturate(pool); // the blocker holds the only seat until the test ends
    AtomicInteger called = new AtomicInteger();
    TestObserver<Integer> test = Single.fromCallable(called::incrementAndGet)
        .compose(PoolTransformers.<Integer>subscribeOn(pool)).test();
    assertThat(test.await(5, TimeUnit.SECONDS)).as("refused within 5 s").isTrue();
    test.assertError(PoolOverloadedException.class).assertNoValues();
    assertThat(called).hasValue(0);
    assertThat(pool.stats().expired()).isEqualTo(1);
    assertThat(fx.errors).isEmpty();
  }

  /**
   * Issue 23: the expiry reaches the subscriber with core's own cause (how long the task waited in
   * line), as in Reactor, not with a message the adapter makes up.
   */
  @Test
  void anExpiredTaskEndsTheStreamWithCoresCause_issue23() throws InterruptedException {
    WorkerPool pool = fx.pool(b -> b.capacity(1).maxWaitInLine(Duration.ofMillis(20)));
    fx.saturate(pool);
    TestObserver<Integer> test = Single.just(1)
        .compose(PoolTransformers.<Integer>subscribeOn(pool)).test();
    assertThat(test.await(5, TimeUnit.SECONDS)).as("refused within 5 s").isTrue();
    test.assertError(e -> e instanceof PoolOverloadedException
        && e.getMessage().contains("ms in line"));
    assertThat(fx.errors).isEmpty();
  }

  static List<Object[]> directCases() {
    List<Object[]> direct = new java.util.ArrayList<>();
    for (Type type : List.of(Type.SINGLE, Type.MAYBE, Type.COMPLETABLE)) {
      for (Op op : Op.values()) {
        direct.add(new Object[] {type, op});
      }
    }
    direct.add(new Object[] {Type.OBSERVABLE, Op.SUBSCRIBE_ON});
    return direct;
  }

  /** Issue 23, every type whose transformer schedules one direct task; exactly one onError. */
  @ParameterizedTest
  @org.junit.jupiter.params.provider.MethodSource("directCases")
  void aDirectTaskExpiredInLineEndsTheStreamWithOneOnError_issue23(Type type, Op op)
      throws InterruptedException {
    WorkerPool pool = fx.pool(b -> b.capacity(1).maxWaitInLine(Duration.ofMillis(20)));
    fx.saturate(pool);
    List<String> threads = new CopyOnWriteArrayList<>();
    BaseTestConsumer<Integer, ?> test = type.subscribe(op.of.apply(pool), threads);
    assertThat(test.await(5, TimeUnit.SECONDS)).isTrue();
    test.assertError(PoolOverloadedException.class).assertNoValues().assertNotComplete();
    fx.holdsRelease();
    RxFixture.awaitQuiet(pool);
    test.assertError(PoolOverloadedException.class).assertNoValues().assertNotComplete();
    assertThat(threads).noneMatch(t -> t.startsWith(pool.name() + "-"));
    assertThat(pool.stats().expired()).isEqualTo(1);
    assertThat(fx.errors).isEmpty();
  }

  @Test
  void aRejectionMidStreamEndsTheStreamAndCancelsTheUpstream() {
    WorkerPool pool = fx.nonblocking(1);
    PublishProcessor<Integer> flowable = PublishProcessor.create();
    PublishSubject<Integer> observable = PublishSubject.create();
    SingleSubject<Integer> single = SingleSubject.create();
    MaybeSubject<Integer> maybe = MaybeSubject.create();
    CompletableSubject completable = CompletableSubject.create();
    // observeOn needs a pool thread only when the first signal arrives: subscribe while free
    // (Flowable.observeOn also drains on a request, so this subscriber requests later)
    TestSubscriber<Integer> tf = flowable.compose(PoolTransformers.observeOn(pool)).test(0);
    TestObserver<Integer> to = observable.compose(PoolTransformers.<Integer>observeOn(pool)).test();
    TestObserver<Integer> ts = single.compose(PoolTransformers.<Integer>observeOn(pool)).test();
    TestObserver<Integer> tm = maybe.compose(PoolTransformers.<Integer>observeOn(pool)).test();
    TestObserver<Void> tc = completable.compose(PoolTransformers.observeOn(pool)).test();

    fx.saturate(pool);
    flowable.onNext(1);
    observable.onNext(1);
    single.onSuccess(1);
    maybe.onSuccess(1);
    completable.onComplete();

    for (BaseTestConsumer<?, ?> t : List.of(tf, to, ts, tm, tc)) {
      t.assertError(PoolOverloadedException.class).assertNoValues().assertNotComplete();
    }
    assertThat(flowable.hasSubscribers()).isFalse();
    assertThat(observable.hasObservers()).isFalse();
    flowable.onNext(2); // goes nowhere, reports nothing
    observable.onNext(2);
    assertThat(fx.errors).isEmpty();
  }

  @Test
  void aStreamAdmittedBeforeThePoolFilledCompletesNormally() throws InterruptedException {
    WorkerPool pool = fx.nonblocking(2);
    PublishProcessor<Integer> flowable = PublishProcessor.create();
    PublishSubject<Integer> observable = PublishSubject.create();
    TestSubscriber<Integer> tf = flowable.compose(PoolTransformers.observeOn(pool)).test();
    TestObserver<Integer> to = observable.compose(PoolTransformers.<Integer>observeOn(pool)).test();
    flowable.onNext(1);
    observable.onNext(1);
    await().until(() -> tf.values().size() == 1 && to.values().size() == 1);

    CountDownLatch hold = fx.saturate(pool);
    flowable.onNext(2);
    flowable.onComplete();
    observable.onNext(2);
    observable.onComplete();
    tf.assertNoErrors().assertValues(1); // 2 waits its turn, not rejected
    to.assertNoErrors().assertValues(1);
    hold.countDown();
    tf.await(10, TimeUnit.SECONDS);
    to.await(10, TimeUnit.SECONDS);
    tf.assertResult(1, 2);
    to.assertResult(1, 2);
    assertThat(fx.errors).isEmpty();
  }

  @Test
  void flowableSubscribeOnRoutesLaterRequestsThroughTheAdmittedWorker()
      throws InterruptedException {
    WorkerPool pool = fx.nonblocking(1);
    TestSubscriber<Integer> ts = Flowable.range(1, 5)
        .compose(PoolTransformers.subscribeOn(pool)).test(0);
    await().until(() -> pool.stats().busy() == 0 && pool.stats().completed() >= 1);
    CountDownLatch hold = fx.saturate(pool);
    ts.request(5); // scheduled on the admitted worker: waits, not rejected
    hold.countDown();
    ts.await(10, TimeUnit.SECONDS);
    ts.assertResult(1, 2, 3, 4, 5);
    assertThat(fx.errors).isEmpty();
  }

  @Test
  void blockingModeNeverBlocksTheEmittingThread() throws InterruptedException {
    WorkerPool pool = fx.pool(b -> b.capacity(1));
    CountDownLatch hold = fx.saturate(pool);
    PublishProcessor<Integer> source = PublishProcessor.create();
    TestSubscriber<Integer> observed = source.compose(PoolTransformers.observeOn(pool)).test();
    TestObserver<Integer> subscribed = assertTimeoutPreemptively(Duration.ofSeconds(5), () -> {
      source.onNext(1);
      source.onNext(2);
      source.onComplete();
      return Single.fromCallable(() -> 42).compose(PoolTransformers.<Integer>subscribeOn(pool))
          .test();
    });
    observed.assertNoValues().assertNoErrors();
    subscribed.assertNoValues().assertNoErrors();
    hold.countDown();
    observed.await(10, TimeUnit.SECONDS);
    subscribed.await(10, TimeUnit.SECONDS);
    observed.assertResult(1, 2);
    subscribed.assertResult(42);
    assertThat(fx.errors).isEmpty();
  }

  @Test
  void composeKeepsTheStaticType() {
    WorkerPool pool = fx.pool(b -> b);
    Flowable<String> f = Flowable.just("a").compose(PoolTransformers.observeOn(pool));
    Observable<String> o = Observable.just("a").compose(PoolTransformers.observeOn(pool));
    Single<String> s = Single.just("a").compose(PoolTransformers.subscribeOn(pool));
    Maybe<String> m = Maybe.just("a").compose(PoolTransformers.subscribeOn(pool));
    Completable c = Completable.complete().compose(PoolTransformers.subscribeOn(pool));
    assertThat(f.blockingFirst() + o.blockingFirst() + s.blockingGet() + m.blockingGet())
        .isEqualTo("aaaa");
    assertThat(c.blockingAwait(10, TimeUnit.SECONDS)).isTrue();
    assertThat(PoolTransformers.observeOn(pool)).hasToString(
        "PoolTransformers.observeOn(" + pool + ")");
  }
}
