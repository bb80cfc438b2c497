package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.PoolClosedException;
import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * DESIGN section 6, guarantee 7: a timer not yet due when its pool shuts down is signalled to its
 * subscriber ({@code onError}, a {@code RejectedExecutionException} caused by a
 * {@link PoolClosedException}); a timer its user disposed, or its scheduler's disposal cancelled,
 * signals nothing.
 */
class TimerClosedSignalTest {
  private final WorkerPool pool = WorkerPool.builder().name("timer-signal").capacity(1).build();

  @AfterEach
  void close() throws InterruptedException {
    pool.shutdownNow();
    pool.awaitTermination(10, TimeUnit.SECONDS);
  }

  /** Records every signal; no guard against signals after a cancel, unlike Reactor's subscribers. */
  private static final class Recorder<T> implements CoreSubscriber<T> {
    final List<Object> signals = new CopyOnWriteArrayList<>();
    final CountDownLatch terminated = new CountDownLatch(1);
    final AtomicReference<Subscription> subscription = new AtomicReference<>();

    @Override
    public void onSubscribe(Subscription s) {
      subscription.set(s);
      s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(T t) {
      signals.add(t);
    }

    @Override
    public void onError(Throwable t) {
      signals.add(t);
      terminated.countDown();
    }

    @Override
    public void onComplete() {
      signals.add("complete");
      terminated.countDown();
    }
  }

  private static void assertClosedError(Recorder<?> r) throws InterruptedException {
    assertThat(r.terminated.await(10, TimeUnit.SECONDS)).as("signalled").isTrue();
    assertThat(r.signals).singleElement().isInstanceOfSatisfying(
        RejectedExecutionException.class,
        e -> assertThat(e).hasCauseInstanceOf(PoolClosedException.class));
  }

  @Test
  void pendingIntervalOfAWorkerIsSignalledWhenThePoolShutsDown() throws Exception {
    Scheduler s = PoolSchedulers.from(pool);
    Recorder<Long> r = new Recorder<>();
    Flux.interval(Duration.ofHours(1), s).subscribe(r);
    pool.shutdown();
    assertClosedError(r);
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  /** A schedule hook wraps the task: the operator's subscriber is still found (the undecorated one). */
  @Test
  void pendingTimersAreSignalledUnderAScheduleHook() throws Exception {
    Schedulers.onScheduleHook("wrap", r -> () -> r.run());
    try {
      Scheduler s = PoolSchedulers.from(pool);
      Recorder<Long> interval = new Recorder<>();
      Recorder<Long> delay = new Recorder<>();
      Flux.interval(Duration.ofHours(1), s).subscribe(interval);
      Mono.delay(Duration.ofHours(1), s).subscribe(delay);
      pool.shutdown();
      assertClosedError(interval);
      assertClosedError(delay);
    } finally {
      Schedulers.resetOnScheduleHook("wrap");
    }
  }

  @Test
  void pendingDelayIsSignalledWhenThePoolShutsDownNow() throws Exception {
    Scheduler s = PoolSchedulers.from(pool);
    Recorder<Long> r = new Recorder<>();
    Mono.delay(Duration.ofHours(1), s).subscribe(r);
    pool.shutdownNow();
    assertClosedError(r);
  }

  @Test
  void cancelledSubscriptionIsNotSignalledWhenThePoolShutsDown() throws Exception {
    Scheduler s = PoolSchedulers.from(pool);
    Recorder<Long> delay = new Recorder<>();
    Recorder<Long> interval = new Recorder<>();
    Mono.delay(Duration.ofHours(1), s).subscribe(delay);
    Flux.interval(Duration.ofHours(1), s).subscribe(interval);
    delay.subscription.get().cancel();
    interval.subscription.get().cancel();
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(delay.signals).isEmpty();
    assertThat(interval.signals).isEmpty();
  }

  @Test
  void disposedSchedulersTimersAreNotSignalled() throws Exception {
    Scheduler s = PoolSchedulers.from(pool);
    Recorder<Long> delay = new Recorder<>();
    Recorder<Long> interval = new Recorder<>();
    Mono.delay(Duration.ofHours(1), s).subscribe(delay);
    Flux.interval(Duration.ofHours(1), s).subscribe(interval);
    s.dispose(); // cancels its timers itself: as with Reactor's own schedulers, no signal
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(delay.signals).isEmpty();
    assertThat(interval.signals).isEmpty();
  }
}
