package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
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
import reactor.core.scheduler.Scheduler;
import reactor.test.subscriber.TestSubscriber;

/**
 * Issue 23 for worker-based operators (DESIGN.md section 6): a {@code Worker} is a serial lane, and
 * a lane that waits in a blocking pool's line for its first seat past {@code maxWaitInLine} expires
 * with its tasks. The operator's subscriber then gets one onError, a
 * {@link RejectedExecutionException} caused by core's {@link PoolOverloadedException}, as for a
 * rejection, and nothing runs late. A worker whose lane already has a seat never expires.
 */
@SuppressWarnings("try") // try (Occupied busy = ...) scopes a full pool
class LaneDeadlineTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private final List<Throwable> droppedErrors = new CopyOnWriteArrayList<>();
  private WorkerPool pool;

  @BeforeEach
  void setUp() {
    Hooks.onErrorDropped(droppedErrors::add);
    pool = line(WorkerPool.builder().name("lane-deadline").capacity(1)).build();
  }

  /**
   * How the pool's line sheds: a 50 ms deadline here; the {@code ControlledDelay} subclass runs
   * every test again with {@code controlledDelay(5 ms, 50 ms)}, whose bound is the interval in a
   * line that has not stood yet.
   */
  WorkerPool.Builder line(WorkerPool.Builder b) {
    return b.maxWaitInLine(Duration.ofMillis(50));
  }

  @AfterEach
  void close() {
    Hooks.resetOnErrorDropped();
    pool.shutdownNow();
    pool.close();
  }

  static Stream<Arguments> workerOperators() {
    return Stream.of(
        op("Flux.range.publishOn", (s, ran) -> Flux.range(1, 5).publishOn(s)
            .doOnNext(x -> ran.incrementAndGet())),
        op("Flux.range.subscribeOn", (s, ran) -> Flux.range(1, 5)
            .doOnNext(x -> ran.incrementAndGet()).subscribeOn(s)),
        op("Mono.hide.subscribeOn", (s, ran) -> Mono.just(1).hide()
            .doOnNext(x -> ran.incrementAndGet()).subscribeOn(s)),
        op("Mono.fromCallable.subscribeOn (direct)", (s, ran) ->
            Mono.fromCallable(ran::incrementAndGet).subscribeOn(s)));
  }

  private static Arguments op(String name, BiFunction<Scheduler, AtomicInteger, Publisher<?>> f) {
    return Arguments.of(Named.of(name, f));
  }

  @ParameterizedTest
  @MethodSource("workerOperators")
  void aWorkerWaitingForItsFirstSeatPastTheDeadlineEndsTheStreamWithARejection(
      BiFunction<Scheduler, AtomicInteger, Publisher<?>> stream) throws Exception {
    Scheduler s = PoolSchedulers.from(pool);
    AtomicInteger ran = new AtomicInteger();
    TestSubscriber<Object> ts = TestSubscriber.create();
    try (Occupied busy = Occupied.all(pool)) {
      stream.apply(s, ran).subscribe(ts);
      await().atMost(WAIT).until(ts::isTerminated);
      assertThat(pool.stats().expired()).isEqualTo(1);
      assertThat(pool.stats().waiting()).isZero();
    }
    assertThat(ts.isTerminatedError()).as("terminated with onError").isTrue();
    Throwable error = ts.expectTerminalError();
    assertThat(error).isInstanceOf(RejectedExecutionException.class);
    assertThat(PoolOverloadedException.findIn(error)).as("core's cause").get()
        .satisfies(cause -> assertThat(cause).hasMessageContaining("lane-deadline")
            .hasMessageContaining("ms in line"));
    assertThat(ts.getReceivedOnNext()).isEmpty();
    assertThat(ts.getProtocolErrors()).isEmpty();
    assertThat(droppedErrors).isEmpty();
    // nothing runs late, and the scheduler is quiescent: every task ended
    assertThat(s.disposeGracefully().block(WAIT)).isNull();
    assertThat(ran).hasValue(0);
    // exact counters at quiescence (the occupier ends on its own time once released)
    await().atMost(WAIT).until(() -> pool.stats().submitted()
        == pool.stats().completed() + pool.stats().failed());
  }

  /** A worker whose lane had a seat is admitted: its later tasks wait past the deadline and run. */
  @Test
  void anAdmittedWorkerNeverExpires() throws Exception {
    Scheduler s = PoolSchedulers.from(pool);
    Scheduler.Worker w = s.createWorker();
    try {
      java.util.concurrent.CountDownLatch first = new java.util.concurrent.CountDownLatch(1);
      w.schedule(first::countDown); // a free seat: the lane is admitted
      assertThat(first.await(20, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      AtomicInteger ran = new AtomicInteger();
      try (Occupied busy = Occupied.all(pool)) {
        w.schedule(ran::incrementAndGet);
        await().atMost(WAIT).until(() -> pool.stats().waiting() == 1);
        // a direct task that joins after it, with the same deadline, expires first
        TestSubscriber<Object> canary = TestSubscriber.create();
        Mono.fromCallable(() -> 1).subscribeOn(s).subscribe(canary);
        await().atMost(WAIT).until(canary::isTerminated);
        assertThat(canary.isTerminatedError()).isTrue();
        assertThat(ran).hasValue(0);
      }
      await().atMost(WAIT).until(() -> ran.get() == 1);
      assertThat(pool.stats().expired()).as("only the canary").isEqualTo(1);
    } finally {
      w.dispose();
    }
  }
}
