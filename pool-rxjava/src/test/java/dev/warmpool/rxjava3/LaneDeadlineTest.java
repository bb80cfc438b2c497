package dev.warmpool.rxjava3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import dev.warmpool.rxjava3.PoolTransformersTest.Op;
import dev.warmpool.rxjava3.PoolTransformersTest.Type;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.observers.BaseTestConsumer;
import io.reactivex.rxjava3.subscribers.TestSubscriber;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 23 for workers (DESIGN.md section 6): a {@code Worker} is a serial lane; one that waits in a
 * blocking pool's line for its first seat past {@code maxWaitInLine} expires with its tasks, and
 * {@link PoolTransformers} and {@link PoolScope} deliver that as one
 * {@code onError(PoolOverloadedException)}; nothing runs late, nothing reaches
 * {@code RxJavaPlugins.onError}. A worker whose lane already had a seat never expires.
 */
class LaneDeadlineTest {
  @RegisterExtension
  final RxFixture fx = new RxFixture();

  /**
   * How the pool's line sheds: a 50 ms deadline here; {@link ControlledDelayLaneTest} runs every
   * test again with {@code controlledDelay(5 ms, 50 ms)}, whose bound is the interval in a line
   * that has not stood yet.
   */
  WorkerPool.Builder line(WorkerPool.Builder b) {
    return b.maxWaitInLine(Duration.ofMillis(50));
  }

  /** Every type/operator pair whose transformer schedules on a worker. */
  static List<Object[]> workerCases() {
    return List.of(new Object[] {Type.FLOWABLE, Op.OBSERVE_ON},
        new Object[] {Type.FLOWABLE, Op.SUBSCRIBE_ON},
        new Object[] {Type.OBSERVABLE, Op.OBSERVE_ON});
  }

  @ParameterizedTest
  @MethodSource("workerCases")
  void aWorkerWaitingForItsFirstSeatPastTheDeadlineEndsTheStreamWithOneOnError(Type type, Op op)
      throws InterruptedException {
    WorkerPool pool = fx.pool(b -> line(b.capacity(1)));
    fx.saturate(pool);
    List<String> threads = new CopyOnWriteArrayList<>();
    BaseTestConsumer<Integer, ?> test = type.subscribe(op.of.apply(pool), threads);
    assertThat(test.await(20, TimeUnit.SECONDS)).as("refused within 20 s").isTrue();
    test.assertError(PoolOverloadedException.class).assertNotComplete();
    test.assertError(e -> e.getMessage().contains(pool.name()));
    assertThat(pool.stats().expired()).isPositive();
    assertThat(pool.stats().waiting()).isZero();
    fx.holdsRelease();
    RxFixture.awaitQuiet(pool);
    test.assertError(PoolOverloadedException.class).assertNotComplete();
    assertThat(threads).as("nothing ran on the pool").noneMatch(t -> t.startsWith(pool.name() + "-"));
    await().until(() -> pool.stats().submitted()
        == pool.stats().completed() + pool.stats().failed());
    assertThat(fx.errors).isEmpty();
  }

  @Test
  void poolScopeDeliversAWorkersExpiryAsItsOneOnError() throws InterruptedException {
    WorkerPool pool = fx.pool(b -> line(b.capacity(1)));
    fx.saturate(pool);
    AtomicInteger ran = new AtomicInteger();
    TestSubscriber<Integer> test = PoolScope.flowable(pool, s -> Flowable.just(1, 2, 3)
        .observeOn(s).doOnNext(x -> ran.incrementAndGet())).test();
    assertThat(test.await(20, TimeUnit.SECONDS)).isTrue();
    test.assertError(PoolOverloadedException.class).assertNoValues();
    fx.holdsRelease();
    RxFixture.awaitQuiet(pool);
    assertThat(ran).hasValue(0);
    assertThat(fx.errors).isEmpty();
  }

  /** A worker whose lane had a seat is admitted: a later task waits past the deadline and runs. */
  @Test
  void anAdmittedWorkerNeverExpires() throws InterruptedException {
    WorkerPool pool = fx.pool(b -> line(b.capacity(1)));
    Scheduler s = PoolSchedulers.from(pool);
    Scheduler.Worker w = s.createWorker();
    try {
      CountDownLatch first = new CountDownLatch(1);
      w.schedule(first::countDown); // a free seat: the lane is admitted
      assertThat(first.await(20, TimeUnit.SECONDS)).isTrue();
      RxFixture.awaitQuiet(pool);
      fx.saturate(pool);
      CountDownLatch later = new CountDownLatch(1);
      w.schedule(later::countDown);
      await().until(() -> pool.stats().waiting() == 1);
      // a direct task that joins after it, with the same deadline, expires first
      BaseTestConsumer<Integer, ?> canary = Type.SINGLE.subscribe(Op.SUBSCRIBE_ON.of.apply(pool),
          new CopyOnWriteArrayList<>());
      assertThat(canary.await(20, TimeUnit.SECONDS)).isTrue();
      canary.assertError(PoolOverloadedException.class);
      assertThat(later.getCount()).isEqualTo(1);
      fx.holdsRelease();
      assertThat(later.await(20, TimeUnit.SECONDS)).isTrue();
      assertThat(pool.stats().expired()).as("only the canary").isEqualTo(1);
    } finally {
      w.dispose();
    }
    assertThat(fx.errors).isEmpty();
  }
}
