package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.test.subscriber.TestSubscriber;

/** Contract 4: rejections surface as exactly one onError; admission once; blocking mode waits. */
@SuppressWarnings("try") // try (Occupied busy = ...) scopes a full pool
class RejectionTest {
  private final List<Throwable> droppedErrors = new CopyOnWriteArrayList<>();
  private final List<Object> droppedNexts = new CopyOnWriteArrayList<>();
  private WorkerPool pool;

  @BeforeEach
  void installHooks() {
    Hooks.onErrorDropped(droppedErrors::add);
    Hooks.onNextDropped(droppedNexts::add);
  }

  @AfterEach
  void resetHooks() {
    Hooks.resetOnErrorDropped();
    Hooks.resetOnNextDropped();
    if (pool != null) {
      pool.shutdownNow();
      pool.close();
    }
  }

  static Stream<Arguments> streams() {
    return Stream.of(
        stream("Flux.publishOn", s -> Flux.range(1, 10).hide().publishOn(s)),
        stream("Flux.subscribeOn", s -> Flux.range(1, 10).subscribeOn(s)),
        stream("Mono.fromCallable.subscribeOn", s -> Mono.fromCallable(() -> 1).subscribeOn(s)));
  }

  private static Arguments stream(String name, Function<Scheduler, Publisher<?>> f) {
    return Arguments.of(Named.of(name, f));
  }

  @ParameterizedTest
  @MethodSource("streams")
  void aSaturatedNonblockingPoolEndsTheStreamWithExactlyOneOnError(
      Function<Scheduler, Publisher<?>> stream) throws Exception {
    pool = WorkerPool.builder().name("full").capacity(1).nonblocking(true).build();
    Scheduler s = PoolSchedulers.from(pool);
    TestSubscriber<Object> ts = TestSubscriber.create();
    try (Occupied busy = Occupied.all(pool)) {
      stream.apply(s).subscribe(ts);
      // every rejection happens in the subscribing call: the outcome is known now
      assertRejectedOnce(ts);
    }
    // nothing arrives later either, once the pool is free again
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.stats().idle() == 1);
    CountDownLatch quiet = new CountDownLatch(1);
    s.schedule(quiet::countDown, 30, TimeUnit.MILLISECONDS);
    assertThat(quiet.await(10, TimeUnit.SECONDS)).isTrue();
    assertRejectedOnce(ts);
  }

  private void assertRejectedOnce(TestSubscriber<Object> ts) {
    assertThat(ts.isTerminatedError()).as("terminated with onError").isTrue();
    assertThat(ts.getReceivedOnNext()).isEmpty();
    assertThat(ts.getProtocolErrors()).as("signals after the onError").isEmpty();
    Throwable error = ts.expectTerminalError();
    assertThat(error).isInstanceOf(RejectedExecutionException.class);
    assertThat(Stream.iterate(error, e -> e != null, Throwable::getCause)
        .collect(Collectors.toList()))
        .as("the PoolOverloadedException is the error or its cause")
        .anyMatch(e -> e instanceof PoolOverloadedException);
    assertThat(droppedErrors).isEmpty();
    assertThat(droppedNexts).isEmpty();
  }

  /**
   * Issue 12, fault 2 (guarantee 7): a timer needs no thread until it fires, so a busy nonblocking
   * pool must not refuse it. v1 refused it at creation, so Reactor signalled at once: {@code
   * timeout(10 s)} fired after 16 ms and {@code Mono.delay} failed during subscribe.
   */
  @Test
  void timersOnASaturatedNonblockingPoolAreNotRefusedAndFireWhenASeatFrees_fault2()
      throws Exception {
    pool = WorkerPool.builder().name("timers").capacity(1).nonblocking(true).build();
    Scheduler s = PoolSchedulers.from(pool);
    TestSubscriber<Long> delay = TestSubscriber.create();
    TestSubscriber<Object> timeout = TestSubscriber.create();
    TestSubscriber<Long> interval = TestSubscriber.create();
    try (Occupied busy = Occupied.all(pool)) {
      Mono.delay(Duration.ofMillis(1), s).subscribe(delay);
      Mono.never().timeout(Duration.ofSeconds(30), s).subscribe(timeout);
      Flux.interval(Duration.ofMillis(1), s).take(3).subscribe(interval);
      // v1 refused these timers inside subscribe(): the outcome would be known now
      assertThat(delay.isTerminated()).as("Mono.delay not refused").isFalse();
      assertThat(timeout.isTerminated()).as("timeout(30 s) not fired early").isFalse();
      assertThat(interval.isTerminated()).as("Flux.interval not refused").isFalse();
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> delay.isTerminated()
        && interval.isTerminated());
    assertThat(delay.getReceivedOnNext()).containsExactly(0L);
    assertThat(delay.isTerminatedComplete()).isTrue();
    assertThat(interval.getReceivedOnNext()).containsExactly(0L, 1L, 2L);
    assertThat(timeout.isTerminated()).isFalse();
    timeout.cancel();
    assertThat(droppedErrors).isEmpty();
  }

  /**
   * Issue 12, fault 6: a cancelled subscription's worker must not keep its place in the line. v1
   * left {@code waiting == 4} after four cancelled {@code subscribeOn}s, and the fifth was rejected.
   */
  @Test
  void cancelledSubscriptionsGiveUpTheirPlacesInLine_fault6() throws Exception {
    pool = WorkerPool.builder().name("withdrawn").capacity(1).maxWaiting(4).build();
    Scheduler s = PoolSchedulers.from(pool);
    TestSubscriber<Integer> fifth = TestSubscriber.create();
    try (Occupied busy = Occupied.all(pool)) {
      // Two direct tasks (a Callable's subscribeOn schedules on the scheduler) and two workers
      // (a Flux's subscribeOn takes a worker, a serial lane).
      List<reactor.core.Disposable> four = List.of(
          Mono.fromCallable(() -> 1).subscribeOn(s).subscribe(),
          Flux.range(1, 2).subscribeOn(s).subscribe(),
          Mono.fromCallable(() -> 2).subscribeOn(s).subscribe(),
          Flux.range(1, 2).subscribeOn(s).subscribe());
      assertThat(pool.stats().waiting()).isEqualTo(4);
      four.forEach(reactor.core.Disposable::dispose);
      assertThat(pool.stats().waiting()).as("waiting after the four cancels").isZero();
      assertThat(((reactor.core.Scannable) s).scan(reactor.core.Scannable.Attr.BUFFERED))
          .isEqualTo(0);
      Mono.fromCallable(() -> 5).subscribeOn(s).subscribe(fifth);
      assertThat(fifth.isTerminated()).as("the fifth is not rejected").isFalse();
    }
    await().atMost(Duration.ofSeconds(10)).until(fifth::isTerminated);
    assertThat(fifth.getReceivedOnNext()).containsExactly(5);
    assertThat(droppedErrors).isEmpty();
  }

  @Test
  void aStreamWhoseWorkerWasAdmittedBeforeThePoolFilledCompletesNormally() throws Exception {
    pool = WorkerPool.builder().name("admitted").capacity(1).nonblocking(true).build();
    Scheduler s = PoolSchedulers.from(pool);
    Sinks.Many<Integer> source = Sinks.many().unicast().onBackpressureBuffer();
    TestSubscriber<Integer> ts = TestSubscriber.create();
    source.asFlux().publishOn(s).subscribe(ts);

    source.tryEmitNext(1).orThrow(); // the worker's first task: admitted
    await().atMost(Duration.ofSeconds(10)).until(() -> ts.getReceivedOnNext().size() == 1);
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.stats().idle() == 1);
    try (Occupied busy = Occupied.all(pool)) {
      source.tryEmitNext(2).orThrow(); // the pool is full: the admitted worker waits in line
      source.tryEmitNext(3).orThrow();
      source.tryEmitComplete().orThrow();
      assertThat(ts.isTerminated()).isFalse();
      assertThat(pool.stats().waiting()).isEqualTo(1);
    }
    await().atMost(Duration.ofSeconds(10)).until(ts::isTerminated);
    assertThat(ts.isTerminatedComplete()).isTrue();
    assertThat(ts.getReceivedOnNext()).containsExactly(1, 2, 3);
    assertThat(droppedErrors).isEmpty();
  }

  @Test
  void anAdmittedWorkersDelayedTasksAreNotRejectedWhenThePoolIsFull() throws Exception {
    pool = WorkerPool.builder().name("admitted").capacity(1).nonblocking(true).build();
    Scheduler s = PoolSchedulers.from(pool);
    Scheduler.Worker worker = s.createWorker();
    CountDownLatch first = new CountDownLatch(1);
    worker.schedule(first::countDown);
    assertThat(first.await(10, TimeUnit.SECONDS)).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.stats().idle() == 1);
    CountDownLatch later = new CountDownLatch(2);
    try (Occupied busy = Occupied.all(pool)) {
      assertThatCode(() -> {
        worker.schedule(later::countDown, 5, TimeUnit.MILLISECONDS);
        worker.schedule(later::countDown);
      }).doesNotThrowAnyException();
    }
    assertThat(later.await(10, TimeUnit.SECONDS)).isTrue();
    worker.dispose();
  }

  @Test
  void aBlockingPoolNeverBlocksTheSubscribingThreadWorkWaitsInLine() throws Exception {
    pool = WorkerPool.builder().name("line").capacity(1).build();
    Scheduler s = PoolSchedulers.from(pool);
    List<Function<Scheduler, Publisher<?>>> streams = streams()
        .map(a -> {
          @SuppressWarnings("unchecked")
          Named<Function<Scheduler, Publisher<?>>> named =
              (Named<Function<Scheduler, Publisher<?>>>) a.get()[0];
          return named.getPayload();
        })
        .collect(Collectors.toList());
    List<TestSubscriber<Object>> subscribers = Stream.generate(TestSubscriber::create)
        .limit(streams.size()).collect(Collectors.toList());
    try (Occupied busy = Occupied.all(pool)) {
      assertTimeoutPreemptively(Duration.ofSeconds(5), () -> {
        for (int i = 0; i < streams.size(); i++) {
          streams.get(i).apply(s).subscribe(subscribers.get(i));
        }
      });
      await().atMost(Duration.ofSeconds(10)).until(() -> pool.stats().waiting() >= 3);
      assertThat(subscribers).noneMatch(TestSubscriber::isTerminated);
    }
    await().atMost(Duration.ofSeconds(10))
        .until(() -> subscribers.stream().allMatch(TestSubscriber::isTerminated));
    assertThat(subscribers).allMatch(TestSubscriber::isTerminatedComplete);
    assertThat(droppedErrors).isEmpty();
    assertThat(droppedNexts).isEmpty();
  }

  @Test
  void aBlockingPoolWithAFullLineRejectsAsOnError() throws Exception {
    pool = WorkerPool.builder().name("line").capacity(1).maxWaiting(0).build();
    Scheduler s = PoolSchedulers.from(pool);
    TestSubscriber<Object> ts = TestSubscriber.create();
    try (Occupied busy = Occupied.all(pool)) {
      Mono.fromCallable(() -> 1).subscribeOn(s).subscribe(ts);
      assertRejectedOnce(ts);
    }
  }
}
