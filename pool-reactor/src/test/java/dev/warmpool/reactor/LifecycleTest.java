package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.test.StepVerifier;

/** Contract 3: dispose, disposeGracefully, init; shared and owned pools. */
class LifecycleTest {
  private final WorkerPool pool = WorkerPool.builder().name("life").capacity(1).build();
  private final Scheduler scheduler = PoolSchedulers.from(pool);

  @AfterEach
  void close() {
    scheduler.dispose();
    pool.shutdownNow();
    pool.close();
  }

  @Test
  void disposeRejectsNewWorkOnThisSchedulerButLeavesTheSharedPoolOpen() throws Exception {
    Scheduler other = PoolSchedulers.from(pool);
    Scheduler.Worker worker = scheduler.createWorker();
    scheduler.dispose();

    assertThat(scheduler.isDisposed()).isTrue();
    assertRejectsEverything(scheduler, worker);
    assertThat(pool.isShutdown()).isFalse();
    CountDownLatch ran = new CountDownLatch(2);
    pool.execute(ran::countDown);
    other.schedule(ran::countDown);
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    other.dispose();
  }

  @Test
  void disposeCancelsTasksThatHaveNotStartedAndLetsRunningOnesFinish() throws Exception {
    AtomicBoolean pendingRan = new AtomicBoolean();
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicReference<Boolean> runningWasInterrupted = new AtomicReference<>();
    Scheduler.Worker worker = scheduler.createWorker();
    Disposable running = scheduler.schedule(() -> {
      started.countDown();
      Occupied.awaitQuietly(release);
      runningWasInterrupted.set(Thread.currentThread().isInterrupted());
    });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    Disposable direct = scheduler.schedule(() -> pendingRan.set(true));
    Disposable onWorker = worker.schedule(() -> pendingRan.set(true));
    Disposable delayed = scheduler.schedule(() -> pendingRan.set(true), 10, TimeUnit.MILLISECONDS);
    Disposable periodic = worker.schedulePeriodically(() -> pendingRan.set(true), 10, 10,
        TimeUnit.MILLISECONDS);

    scheduler.dispose();
    assertThat(delayed.isDisposed()).isTrue();
    assertThat(periodic.isDisposed()).isTrue();
    CountDownLatch after = new CountDownLatch(1);
    pool.enqueue(after::countDown); // behind the pending tasks in the pool's line
    release.countDown();

    assertThat(after.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(pendingRan).isFalse();
    assertThat(runningWasInterrupted).hasValue(false);
    await().atMost(Duration.ofSeconds(10))
        .until(() -> running.isDisposed() && direct.isDisposed() && onWorker.isDisposed());
  }

  @Test
  void disposeGracefullyIsLazy() {
    Mono<Void> graceful = scheduler.disposeGracefully();
    assertThat(scheduler.isDisposed()).isFalse();
    StepVerifier.create(Mono.fromCallable(() -> 1).subscribeOn(scheduler))
        .expectNext(1).verifyComplete();
    StepVerifier.create(graceful).expectComplete().verify(Duration.ofSeconds(10));
    assertThat(scheduler.isDisposed()).isTrue();
  }

  @Test
  void disposeGracefullyLetsAcceptedTasksRunAndCompletesWhenTheyAreDone() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean runningFinished = new AtomicBoolean();
    AtomicBoolean waitingRan = new AtomicBoolean();
    AtomicBoolean delayedRan = new AtomicBoolean();
    scheduler.schedule(() -> {
      started.countDown();
      Occupied.awaitQuietly(release);
      runningFinished.set(!Thread.currentThread().isInterrupted());
    });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    scheduler.createWorker().schedule(() -> waitingRan.set(true));
    scheduler.schedule(() -> delayedRan.set(true), 20, TimeUnit.MILLISECONDS);
    Disposable periodic = scheduler.schedulePeriodically(() -> {}, 10, 10, TimeUnit.MILLISECONDS);

    CompletableFuture<Void> done = scheduler.disposeGracefully().toFuture();
    assertThat(scheduler.isDisposed()).isTrue();
    assertThat(periodic.isDisposed()).as("periodic tasks stop").isTrue();
    assertThatThrownBy(() -> scheduler.schedule(() -> {}))
        .isInstanceOf(RejectedExecutionException.class);
    assertThat(done).isNotDone();

    release.countDown();
    done.get(10, TimeUnit.SECONDS);
    assertThat(runningFinished).isTrue();
    assertThat(waitingRan).isTrue();
    assertThat(delayedRan).isTrue();
    assertThat(pool.isShutdown()).isFalse();
  }

  @Test
  void disposeGracefullyCanBeRetriedAfterATimeout() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    scheduler.schedule(() -> {
      started.countDown();
      Occupied.awaitQuietly(release);
    });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

    StepVerifier.create(scheduler.disposeGracefully().timeout(Duration.ofMillis(100)))
        .expectError(TimeoutException.class).verify(Duration.ofSeconds(10));
    release.countDown();
    StepVerifier.create(scheduler.disposeGracefully()).expectComplete()
        .verify(Duration.ofSeconds(10));
  }

  @Test
  void disposeGracefullyCanBeFollowedByDispose() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean waitingRan = new AtomicBoolean();
    scheduler.schedule(() -> {
      started.countDown();
      Occupied.awaitQuietly(release);
    });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    Disposable waiting = scheduler.schedule(() -> waitingRan.set(true));

    CompletableFuture<Void> done = scheduler.disposeGracefully().toFuture();
    scheduler.dispose(); // forceful: the waiting task will not run
    assertThat(done).isNotDone();
    release.countDown();
    done.get(10, TimeUnit.SECONDS);
    assertThat(waitingRan).isFalse();
    assertThat(waiting.isDisposed()).isTrue();
  }

  @Test
  void initThrowsAfterDisposeOrGracefulDispose() {
    scheduler.init(); // a live scheduler: nothing to do
    scheduler.dispose();
    assertThatThrownBy(scheduler::init).isInstanceOf(IllegalStateException.class);

    Scheduler graceful = PoolSchedulers.from(pool);
    graceful.disposeGracefully().block(Duration.ofSeconds(10));
    assertThatThrownBy(graceful::init).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void anOwnedPoolIsShutDownByDispose() throws Exception {
    WorkerPool owned = WorkerPool.builder().name("owned").capacity(2).build();
    Scheduler s = PoolSchedulers.fromOwned(owned);
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch interrupted = new CountDownLatch(1);
    s.schedule(() -> {
      started.countDown();
      try {
        new CountDownLatch(1).await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        interrupted.countDown();
      }
    });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    s.dispose();
    assertThat(owned.isShutdown()).isTrue();
    assertThat(interrupted.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(owned.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    StepVerifier.create(s.disposeGracefully()).expectComplete().verify(Duration.ofSeconds(10));
  }

  @Test
  void anOwnedPoolIsClosedGracefullyAfterTheSchedulersTasks() throws Exception {
    Scheduler s = PoolSchedulers.newPool(WorkerPool.builder().name("fresh").capacity(2));
    assertThat(s.toString()).startsWith("workerPool(\"fresh\",capacity=2,");
    CountDownLatch release = new CountDownLatch(1);
    AtomicReference<String> thread = new AtomicReference<>();
    AtomicBoolean finished = new AtomicBoolean();
    s.schedule(() -> {
      thread.set(Thread.currentThread().getName());
      Occupied.awaitQuietly(release);
      finished.set(true);
    });
    CompletableFuture<Void> done = s.disposeGracefully().toFuture();
    assertThat(done).isNotDone();
    release.countDown();
    done.get(10, TimeUnit.SECONDS);
    assertThat(finished).isTrue();
    assertThat(thread.get()).startsWith("fresh-");
    assertRejectsEverything(s, s.createWorker());
  }

  /** Issue 21: core's whenTerminated() completes the wait; no thread is started for it. */
  @Test
  void disposeGracefullyOfAnOwnedPoolCompletesWithoutAThreadOfItsOwn() throws Exception {
    Scheduler s = PoolSchedulers.newPool(WorkerPool.builder().name("owned").capacity(1));
    CountDownLatch release = new CountDownLatch(1);
    s.schedule(() -> Occupied.awaitQuietly(release));
    AtomicReference<Thread> completedOn = new AtomicReference<>();
    CountDownLatch done = new CountDownLatch(1);
    try {
      s.disposeGracefully().subscribe(null, null, () -> {
        completedOn.set(Thread.currentThread());
        done.countDown();
      });
    } finally {
      release.countDown();
    }
    assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
    // the pool's own thread that ended the last task and terminated the pool, not a waiter's
    assertThat(completedOn.get().getName()).startsWith("owned-").doesNotEndWith("-dispose");
  }

  private static void assertRejectsEverything(Scheduler s, Scheduler.Worker w) {
    assertThatThrownBy(() -> s.schedule(() -> {})).isInstanceOf(RejectedExecutionException.class);
    assertThatThrownBy(() -> s.schedule(() -> {}, 1, TimeUnit.MILLISECONDS))
        .isInstanceOf(RejectedExecutionException.class);
    assertThatThrownBy(() -> s.schedulePeriodically(() -> {}, 1, 1, TimeUnit.MILLISECONDS))
        .isInstanceOf(RejectedExecutionException.class);
    assertThatThrownBy(() -> w.schedule(() -> {})).isInstanceOf(RejectedExecutionException.class);
    assertThatThrownBy(() -> w.schedule(() -> {}, 1, TimeUnit.MILLISECONDS))
        .isInstanceOf(RejectedExecutionException.class);
    assertThatThrownBy(() -> s.createWorker().schedule(() -> {}))
        .isInstanceOf(RejectedExecutionException.class);
  }
}
