package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
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
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.test.subscriber.TestSubscriber;

/**
 * Issue 23 (guarantees 4 and 5, DESIGN.md section 6): a Reactor task that waits in a blocking
 * pool's line past {@code maxWaitInLine} is refused like a rejection: its subscriber gets one
 * onError, a {@link RejectedExecutionException} caused by {@link PoolOverloadedException}, and the
 * task never runs. Timers are never refused for load, also not by a line deadline.
 */
@SuppressWarnings("try") // try (Occupied busy = ...) scopes a full pool
class LineDeadlineTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private final List<Throwable> droppedErrors = new CopyOnWriteArrayList<>();
  private WorkerPool pool;

  @BeforeEach
  void setUp() {
    Hooks.onErrorDropped(droppedErrors::add);
    pool = line(WorkerPool.builder().name("line-deadline").capacity(1)).build();
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

  static Stream<Arguments> directTasks() {
    return Stream.of(
        direct("Mono.fromCallable.subscribeOn", (s, ran) -> Mono.fromCallable(ran::incrementAndGet)
            .subscribeOn(s)),
        direct("Mono.just.publishOn", (s, ran) -> Mono.just(1).publishOn(s)
            .doOnNext(x -> ran.incrementAndGet())),
        direct("Mono.publishOn", (s, ran) -> Mono.just(1).hide().publishOn(s)
            .doOnNext(x -> ran.incrementAndGet())));
  }

  private static Arguments direct(String name,
      BiFunction<Scheduler, AtomicInteger, Publisher<?>> f) {
    return Arguments.of(Named.of(name, f));
  }

  @ParameterizedTest
  @MethodSource("directTasks")
  void aTaskExpiredInLineEndsTheStreamWithARejection_issue23(
      BiFunction<Scheduler, AtomicInteger, Publisher<?>> stream)
      throws Exception {
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
    assertThat(error).isInstanceOf(RejectedExecutionException.class)
        .hasCauseInstanceOf(PoolOverloadedException.class);
    assertThat(error.getCause()).hasMessageContaining("line-deadline")
        .as("core's cause: how long it waited").hasMessageContaining("ms in line");
    assertThat(ts.getReceivedOnNext()).isEmpty();
    assertThat(ts.getProtocolErrors()).isEmpty();
    assertThat(droppedErrors).isEmpty();
    // the pool is free again: the expired task does not run late, and the scheduler is quiescent
    assertThat(s.disposeGracefully().block(WAIT)).isNull();
    assertThat(ran).hasValue(0);
  }

  /** Guarantee 7: a zero delay is a timer, which waits its turn however long the line is. */
  @Test
  void aZeroDelayNeverExpiresInLine_guarantee7() throws Exception {
    Scheduler s = PoolSchedulers.from(pool);
    CompletableFuture<Long> delay;
    try (Occupied busy = Occupied.all(pool)) {
      delay = Mono.delay(Duration.ZERO, s).toFuture();
      Thread.sleep(200); // four line deadlines
      assertThat(delay).isNotDone();
    }
    assertThat(delay.get(10, TimeUnit.SECONDS)).isZero();
    assertThat(pool.stats().expired()).isZero();
  }
}
