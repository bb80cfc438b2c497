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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.scheduler.Scheduler;
import reactor.test.StepVerifier;

/**
 * Issue 30, fault 13: the scenario of reactor-core's {@code FluxPublishOnTest}
 * {@code rejectedExecutionExceptionOnErrorSignalExecutorService} (and its {@code Executor} sibling,
 * which watches {@code Hooks.onOperatorError}), on a warmpool scheduler. Two {@code publishOn}s on
 * one pool; the first one's task waits on a latch in {@code doOnNext}; {@code shutdownNow()}
 * interrupts it, so its error travels to the second {@code publishOn}, whose worker the closed pool
 * refuses: the subscriber must hear {@code onError(RejectedExecutionException)} carrying the
 * interrupted task's error as suppressed (adapter contract: a rejection is a
 * {@code RejectedExecutionException} that Reactor turns into {@code onError}; guarantee 5, the
 * rejection happens at the call). Before the fix no signal came at all.
 */
class PublishOnShutdownNowTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private WorkerPool pool;

  @AfterEach
  void close() throws InterruptedException {
    Hooks.resetOnOperatorError();
    if (pool != null) {
      pool.shutdownNow();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  /** The two-publishOn shape; {@code failure} is what the interrupted doOnNext throws. */
  private Flux<Integer> twoHops(Scheduler s, CountDownLatch entered, RuntimeException failure) {
    CountDownLatch never = new CountDownLatch(1);
    return Flux.range(0, 5)
        .publishOn(s)
        .doOnNext(i -> {
          entered.countDown();
          try {
            never.await();
          } catch (InterruptedException e) {
            throw Exceptions.propagate(failure);
          }
        })
        .publishOn(s);
  }

  @Test
  void guarantee5_publishOnAfterShutdownNowSignalsRejectedWithTheInterruptedTasksErrorSuppressed() {
    pool = WorkerPool.builder().name("publishon-shutdownnow").capacity(4).build();
    Scheduler s = PoolSchedulers.from(pool);
    IllegalStateException failure = new IllegalStateException("interrupted in doOnNext");
    CountDownLatch entered = new CountDownLatch(1);

    StepVerifier.create(twoHops(s, entered, failure), 0)
        .expectSubscription()
        .then(() -> awaitUninterruptibly(entered))
        .then(pool::shutdownNow)
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(RejectedExecutionException.class);
          assertThat(e.getSuppressed()).containsExactly(failure);
        })
        .verify(WAIT);
  }

  @Test
  void guarantee5_publishOnAfterShutdownNowReportsTheRejectionToOnOperatorErrorWithTheErrorSuppressed()
      throws InterruptedException {
    List<Throwable> operatorErrors = new CopyOnWriteArrayList<>();
    CountDownLatch rejectionSeen = new CountDownLatch(1);
    Hooks.onOperatorError((e, data) -> {
      operatorErrors.add(e);
      if (e instanceof RejectedExecutionException) {
        rejectionSeen.countDown();
      }
      return e;
    });
    pool = WorkerPool.builder().name("publishon-shutdownnow-hook").capacity(4).build();
    Scheduler s = PoolSchedulers.from(pool);
    IllegalStateException failure = new IllegalStateException("interrupted in doOnNext");
    CountDownLatch entered = new CountDownLatch(1);
    List<Throwable> signalled = new CopyOnWriteArrayList<>();
    CountDownLatch terminated = new CountDownLatch(1);

    twoHops(s, entered, failure).subscribe(i -> { }, e -> {
      signalled.add(e);
      terminated.countDown();
    }, terminated::countDown);
    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
    pool.shutdownNow();

    assertThat(rejectionSeen.await(10, TimeUnit.SECONDS)).as("onOperatorError saw the rejection")
        .isTrue();
    Throwable rejection = operatorErrors.stream()
        .filter(RejectedExecutionException.class::isInstance).findFirst().orElseThrow();
    assertThat(rejection.getSuppressed()).containsExactly(failure);
    assertThat(terminated.await(10, TimeUnit.SECONDS)).as("the subscriber heard of it").isTrue();
    assertThat(signalled).singleElement().isSameAs(rejection);
  }

  /**
   * The same scenario when the first {@code publishOn}'s task has not started when
   * {@code shutdownNow()} comes: the pool hands it back (guarantee 9) and nothing else would tell its
   * operator. Reactor's own test takes the race for granted (a cached thread pool starts a thread per
   * task inside {@code execute}); on warmpool, whose {@code enqueue} starts threads in the
   * background, {@code shutdownNow()} right after subscribing usually wins it, and the subscriber
   * waited for ever. Forced here: the pool's one seat is taken, so the task waits in line.
   */
  @Test
  void guarantee4_aTaskHandedBackByShutdownNowIsRefusedToItsSubscriberInsteadOfHanging()
      throws InterruptedException {
    pool = WorkerPool.builder().name("publishon-handed-back").capacity(1).build();
    Scheduler s = PoolSchedulers.from(pool);
    occupyUntilShutdownNow(pool);
    CountDownLatch entered = new CountDownLatch(1);

    StepVerifier.create(twoHops(s, entered, new IllegalStateException("never thrown")), 0)
        .expectSubscription()
        .then(() -> assertThat(pool.shutdownNow()).as("the first publishOn's task, handed back")
            .hasSize(1))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(RejectedExecutionException.class);
          assertThat(closedPoolIn(e)).as("a PoolClosedException in %s", e).isTrue();
        })
        .verify(WAIT);
    assertThat(entered.getCount()).as("the handed-back task never ran").isEqualTo(1);
  }

  /** A direct task ({@code subscribeOn}) handed back by {@code shutdownNow()} is refused too. */
  @Test
  void guarantee4_aDirectTaskHandedBackByShutdownNowIsRefusedToItsSubscriber()
      throws InterruptedException {
    pool = WorkerPool.builder().name("subscribeon-handed-back").capacity(1).build();
    Scheduler s = PoolSchedulers.from(pool);
    occupyUntilShutdownNow(pool);

    StepVerifier.create(reactor.core.publisher.Mono.fromCallable(() -> "ran").subscribeOn(s))
        .then(() -> assertThat(pool.shutdownNow()).hasSize(1))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(RejectedExecutionException.class);
          assertThat(closedPoolIn(e)).as("a PoolClosedException in %s", e).isTrue();
        })
        .verify(WAIT);
  }

  /** Whether a PoolClosedException is in the causes of {@code e} or of what it suppressed. */
  private static boolean closedPoolIn(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof PoolClosedException) {
        return true;
      }
      for (Throwable s : t.getSuppressed()) {
        if (closedPoolIn(s)) {
          return true;
        }
      }
    }
    return false;
  }

  private static void awaitUninterruptibly(CountDownLatch latch) {
    try {
      assertThat(latch.await(10, TimeUnit.SECONDS)).as("the first publishOn's task started").isTrue();
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  /** Takes the pool's one seat with a task that waits until {@code shutdownNow()} interrupts it. */
  private static void occupyUntilShutdownNow(WorkerPool pool) throws InterruptedException {
    CountDownLatch blocking = new CountDownLatch(1);
    pool.execute(() -> {
      blocking.countDown();
      try {
        new CountDownLatch(1).await();
      } catch (InterruptedException stopped) {
        // shutdownNow
      }
    });
    assertThat(blocking.await(10, TimeUnit.SECONDS)).isTrue();
  }
}
