package dev.warmpool.rxjava3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Observable;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.observers.TestObserver;
import io.reactivex.rxjava3.subscribers.TestSubscriber;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Guarantee 7 for RxJava's zero and negative delays: a one-shot {@code schedule} with a delay is a
 * timer, refused only by a closed pool, never for load, and never expired in line; only
 * {@code scheduleDirect(run)} and {@code Worker.schedule(run)} are immediate tasks.
 */
class ZeroDelayTimerTest {
  @RegisterExtension final RxFixture fx = new RxFixture();

  @Test
  void zeroDelayTimersOfEveryShapeWaitOnAFullNonblockingPool() throws Exception {
    WorkerPool p = fx.nonblocking(1);
    Scheduler s = PoolSchedulers.from(p);
    CountDownLatch hold = fx.saturate(p);
    List<Integer> expected = IntStream.rangeClosed(1, 200).boxed().collect(Collectors.toList());
    TestObserver<Integer> delayed = Observable.fromIterable(expected)
        .delay(0, TimeUnit.MILLISECONDS, s).test();
    TestSubscriber<Long> timer = Flowable.timer(0, TimeUnit.MILLISECONDS, s).test();
    TestObserver<Void> completable = Completable.timer(-1, TimeUnit.SECONDS, s).test();
    Scheduler.Worker w = s.createWorker();
    CountDownLatch ran = new CountDownLatch(2);
    Disposable ofWorker = w.schedule(ran::countDown, 0, TimeUnit.NANOSECONDS);
    Disposable direct = s.scheduleDirect(ran::countDown, -5, TimeUnit.MILLISECONDS);
    assertThat(fx.errors).as("zero-delay timers refused for load").isEmpty();
    assertThat(ofWorker.isDisposed()).isFalse();
    assertThat(direct.isDisposed()).isFalse();
    hold.countDown();
    delayed.awaitDone(10, TimeUnit.SECONDS).assertValueSequence(expected).assertComplete();
    timer.awaitDone(10, TimeUnit.SECONDS).assertValue(0L);
    completable.awaitDone(10, TimeUnit.SECONDS).assertComplete();
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    RxFixture.awaitQuiet(p);
    assertThat(fx.errors).isEmpty();
  }

  @Test
  void immediateTasksAreStillAdmittedOrRejectedNow() {
    WorkerPool p = fx.nonblocking(1);
    Scheduler s = PoolSchedulers.from(p);
    fx.saturate(p);
    assertThat(s.scheduleDirect(() -> { }).isDisposed()).isTrue();
    assertThat(s.createWorker().schedule(() -> { }).isDisposed()).isTrue();
    assertThat(fx.errors).hasSize(2)
        .allMatch(e -> e.getCause() instanceof PoolOverloadedException);
  }

  /**
   * Under maxWaitInLine, a zero-delay timer (direct and of a worker) that waited past the deadline
   * still runs. The clock is an immediate direct task queued after them, which does expire: once it
   * did, their deadlines have passed too.
   */
  @Test
  void zeroDelayTimersNeverExpireInLine() throws Exception {
    WorkerPool p = fx.pool(b -> b.capacity(1).maxWaitInLine(Duration.ofMillis(20)));
    Scheduler s = PoolSchedulers.from(p);
    CountDownLatch hold = fx.saturate(p);
    AtomicInteger ran = new AtomicInteger();
    s.scheduleDirect(() -> ran.addAndGet(1), 0, TimeUnit.MILLISECONDS);
    s.createWorker().schedule(() -> ran.addAndGet(10), 0, TimeUnit.MILLISECONDS);
    await().atMost(Duration.ofSeconds(10)).until(() -> p.stats().waiting() == 2);
    Disposable clock = s.scheduleDirect(() -> ran.addAndGet(100));
    await().atMost(Duration.ofSeconds(10)).until(clock::isDisposed); // it heard of its expiry
    hold.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> ran.get() == 11);
    RxFixture.awaitQuiet(p);
    assertThat(p.stats().expired()).isEqualTo(1);
  }
}
