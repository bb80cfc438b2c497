package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The general {@link Scheduler} contract that Reactor's own scheduler test suite holds every scheduler
 * to, checked black-box against {@link PoolSchedulers#from} (on a blocking and on a nonblocking pool)
 * and {@link PoolSchedulers#fromOwned}: lifecycle ({@code init}, {@code dispose},
 * {@code disposeGracefully}), rejection after disposal, per-task {@link Disposable}s, delayed and
 * periodic work (with zero and negative delays and periods), worker order, {@link Scannable}
 * attributes and the {@code Schedulers.onSchedule} / {@code onHandleError} hooks.
 *
 * <p>Deliberate deviations from some of Reactor's schedulers, asserted here as documented:
 * no restart (a disposed scheduler stays disposed, {@code init()} throws), {@code BUFFERED} of the
 * scheduler is the pool's waiting line (not running tasks), and a failing task passes Reactor's error
 * path through the {@code onSchedule} hooks once more (README, Reactor section).
 */
@Timeout(30)
class SchedulerContractTest {
  private static final long WAIT = 10;

  enum Kind {
    SHARED_BLOCKING(false, false),
    SHARED_NONBLOCKING(false, true),
    OWNED_BLOCKING(true, false),
    OWNED_NONBLOCKING(true, true);

    final boolean owned;
    final boolean nonblocking;

    Kind(boolean owned, boolean nonblocking) {
      this.owned = owned;
      this.nonblocking = nonblocking;
    }
  }

  private final List<WorkerPool> pools = new ArrayList<>();
  private final List<Scheduler> schedulers = new ArrayList<>();
  private WorkerPool pool;

  /**
   * A fresh scheduler of the given kind over a new pool of 4 quiet daemon workers. No failure
   * handler on the builder: one would see every failure instead of onHandleError (guarantee 8).
   */
  private Scheduler scheduler(Kind kind) {
    pool = WorkerPool.builder()
        .name("contract-" + kind.name().toLowerCase())
        .capacity(4)
        .nonblocking(kind.nonblocking)
        .threadFactory(r -> {
          Thread t = new Thread(r);
          t.setDaemon(true);
          t.setUncaughtExceptionHandler((th, e) -> { });
          return t;
        })
        .build();
    pools.add(pool);
    Scheduler s = kind.owned ? PoolSchedulers.fromOwned(pool) : PoolSchedulers.from(pool);
    schedulers.add(s);
    return s;
  }

  @AfterEach
  void cleanUp() throws InterruptedException {
    Schedulers.resetOnScheduleHooks();
    Schedulers.resetOnHandleError();
    schedulers.forEach(Scheduler::dispose);
    for (WorkerPool p : pools) {
      p.shutdownNow();
      assertThat(p.awaitTermination(WAIT, TimeUnit.SECONDS)).as("%s terminated", p).isTrue();
    }
  }

  static Stream<Arguments> kindsAndDisposals() {
    return Stream.of(Kind.values())
        .flatMap(k -> Stream.of(Arguments.of(k, true), Arguments.of(k, false)));
  }

  // ---------------------------------------------------------------------------------------------
  // init, dispose, no restart

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aNewSchedulerIsLiveAndMayBeInitializedRepeatedly(Kind kind) {
    Scheduler s = scheduler(kind);

    assertThat(s.isDisposed()).isFalse();
    assertThatCode(() -> {
      s.init();
      s.init();
    }).doesNotThrowAnyException();
    assertThat(s.isDisposed()).isFalse();
    assertThat(Scannable.from(s).scan(Scannable.Attr.TERMINATED)).isFalse();
  }

  @ParameterizedTest
  @MethodSource("kindsAndDisposals")
  void initAfterDisposalThrowsIllegalState(Kind kind, boolean forced) {
    Scheduler s = scheduler(kind);
    if (forced) {
      s.dispose();
    } else {
      s.disposeGracefully().block(Duration.ofSeconds(WAIT));
    }

    assertThatExceptionOfType(IllegalStateException.class).isThrownBy(s::init);
    assertThat(s.isDisposed()).isTrue();
  }

  /** Deliberate: no restart. The deprecated start() does not revive a disposed scheduler. */
  @ParameterizedTest
  @EnumSource(Kind.class)
  @SuppressWarnings("deprecation")
  void startAfterDisposeDoesNotRestart(Kind kind) {
    Scheduler s = scheduler(kind);
    s.dispose();

    try {
      s.start();
    } catch (UnsupportedOperationException acceptable) {
      // the other answer Reactor allows a scheduler without restart
    }

    assertThat(s.isDisposed()).isTrue();
    assertThatExceptionOfType(RejectedExecutionException.class).isThrownBy(() -> s.schedule(() -> { }));
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void disposeIsIdempotentAndRejectsEveryKindOfLaterWork(Kind kind) {
    Scheduler s = scheduler(kind);
    Scheduler.Worker live = s.createWorker();
    s.dispose();
    s.dispose();

    assertThat(s.isDisposed()).isTrue();
    assertThatExceptionOfType(RejectedExecutionException.class)
        .isThrownBy(() -> s.schedule(() -> { }));
    assertThatExceptionOfType(RejectedExecutionException.class)
        .isThrownBy(() -> s.schedule(() -> { }, 10, TimeUnit.MILLISECONDS));
    assertThatExceptionOfType(RejectedExecutionException.class)
        .isThrownBy(() -> s.schedulePeriodically(() -> { }, 10, 10, TimeUnit.MILLISECONDS));
    assertThatExceptionOfType(RejectedExecutionException.class)
        .isThrownBy(() -> live.schedule(() -> { }));
    // createWorker() must not throw (publishOn calls it outside any try); its tasks are rejected
    Scheduler.Worker late = s.createWorker();
    assertThatExceptionOfType(RejectedExecutionException.class)
        .isThrownBy(() -> late.schedule(() -> { }));
    assertThat(pool.isShutdown()).isEqualTo(kind.owned);
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void operatorsOnADisposedSchedulerSignalOnErrorRejected(Kind kind) {
    Scheduler s = scheduler(kind);
    s.dispose();

    StepVerifier.create(Flux.range(1, 3).hide().publishOn(s))
        .expectError(RejectedExecutionException.class)
        .verify(Duration.ofSeconds(WAIT));
    StepVerifier.create(Mono.just(1).hide().subscribeOn(s))
        .expectError(RejectedExecutionException.class)
        .verify(Duration.ofSeconds(WAIT));
    StepVerifier.create(Mono.delay(Duration.ofMillis(5), s))
        .expectError(RejectedExecutionException.class)
        .verify(Duration.ofSeconds(WAIT));
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void nullTasksAreRefusedWithNullPointerException(Kind kind) {
    Scheduler s = scheduler(kind);
    Scheduler.Worker w = s.createWorker();

    assertThatNullPointerException().isThrownBy(() -> s.schedule(null));
    assertThatNullPointerException().isThrownBy(() -> s.schedule(null, 1, TimeUnit.MILLISECONDS));
    assertThatNullPointerException().isThrownBy(() -> w.schedule(null));
    assertThatNullPointerException().isThrownBy(() -> w.schedule(null, 1, TimeUnit.MILLISECONDS));
    assertThatNullPointerException()
        .isThrownBy(() -> w.schedulePeriodically(null, 1, 1, TimeUnit.MILLISECONDS));
    w.dispose();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void nowReadsTheWallClock(Kind kind) {
    Scheduler s = scheduler(kind);
    long before = System.currentTimeMillis();

    long fromScheduler = s.now(TimeUnit.MILLISECONDS);

    long after = System.currentTimeMillis();
    assertThat(fromScheduler).isBetween(before, after);
  }

  // ---------------------------------------------------------------------------------------------
  // Direct tasks and their Disposable

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aDirectTaskIsLiveWhileRunningAndDisposingItFromOutsideInterruptsIt(Kind kind)
      throws Exception {
    Scheduler s = scheduler(kind);
    BlockingProbe task = new BlockingProbe();

    Disposable d = s.schedule(task);

    task.awaitStarted();
    assertThat(d.isDisposed()).as("running").isFalse();
    d.dispose();
    d.dispose();
    assertThat(d.isDisposed()).isTrue();
    assertThat(task.ended.await(WAIT, TimeUnit.SECONDS)).isTrue();
    assertThat(task.interrupted).isTrue();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aDirectTaskIsDisposedOnceItRan(Kind kind) throws Exception {
    Scheduler s = scheduler(kind);
    CountDownLatch ran = new CountDownLatch(1);

    Disposable d = s.schedule(ran::countDown);

    assertThat(ran.await(WAIT, TimeUnit.SECONDS)).isTrue();
    await().atMost(Duration.ofSeconds(WAIT)).until(d::isDisposed);
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aTaskDisposingItselfIsNotInterruptedAndLeavesNoInterruptBehind(Kind kind) throws Exception {
    Scheduler s = scheduler(kind);
    Scheduler.Worker w = s.createWorker();
    AtomicReference<Disposable> self = new AtomicReference<>();
    CountDownLatch go = new CountDownLatch(1);
    AtomicBoolean interruptedInside = new AtomicBoolean(true);
    AtomicBoolean disposedInside = new AtomicBoolean();
    InterruptCheck next = new InterruptCheck();

    self.set(w.schedule(() -> {
      Occupied.awaitQuietly(go);
      self.get().dispose();
      disposedInside.set(self.get().isDisposed());
      interruptedInside.set(Thread.currentThread().isInterrupted());
    }));
    w.schedule(next);
    go.countDown();

    assertThat(next.ran.await(WAIT, TimeUnit.SECONDS)).isTrue();
    assertThat(disposedInside).isTrue();
    assertThat(interruptedInside).isFalse();
    assertThat(next.interrupted).isFalse();
    w.dispose();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void theInterruptOfADisposedTaskDoesNotReachTheNextTaskOfItsWorker(Kind kind) throws Exception {
    Scheduler s = scheduler(kind);
    Scheduler.Worker w = s.createWorker();
    BlockingProbe firstTask = new BlockingProbe();
    InterruptCheck next = new InterruptCheck();

    Disposable first = w.schedule(firstTask);
    w.schedule(next);
    firstTask.awaitStarted();
    first.dispose();

    assertThat(next.ran.await(WAIT, TimeUnit.SECONDS)).isTrue();
    assertThat(firstTask.interrupted).isTrue();
    assertThat(next.interrupted).isFalse();
    w.dispose();
  }

  // ---------------------------------------------------------------------------------------------
  // Workers

  @ParameterizedTest
  @EnumSource(Kind.class)
  void disposingAWorkerDisposesAllItsTasksAndRejectsLaterOnesWithReactorsRejection(Kind kind)
      throws Exception {
    Scheduler s = scheduler(kind);
    Scheduler.Worker w = s.createWorker();
    BlockingProbe blockerTask = new BlockingProbe();
    AtomicInteger pendingRan = new AtomicInteger();

    assertThat(w.isDisposed()).isFalse();
    Disposable blocker = w.schedule(blockerTask);
    blockerTask.awaitStarted();
    List<Disposable> pending = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      pending.add(w.schedule(pendingRan::incrementAndGet));
    }
    pending.add(w.schedule(pendingRan::incrementAndGet, 1, TimeUnit.HOURS));
    pending.add(w.schedulePeriodically(pendingRan::incrementAndGet, 1, 1, TimeUnit.HOURS));
    assertThat(pending).noneMatch(Disposable::isDisposed);

    w.dispose();
    w.dispose();

    assertThat(w.isDisposed()).isTrue();
    assertThat(blocker.isDisposed()).isTrue();
    assertThat(pending).allMatch(Disposable::isDisposed);
    // Reactor's workers refuse with its shared "Scheduler unavailable" rejection, whatever the call
    assertThatExceptionOfType(RejectedExecutionException.class)
        .isThrownBy(() -> w.schedule(() -> { }))
        .isSameAs(Exceptions.failWithRejected());
    assertThatExceptionOfType(RejectedExecutionException.class)
        .isThrownBy(() -> w.schedule(() -> { }, 10, TimeUnit.MILLISECONDS))
        .isSameAs(Exceptions.failWithRejected());
    assertThatExceptionOfType(RejectedExecutionException.class)
        .isThrownBy(() -> w.schedulePeriodically(() -> { }, 10, 10, TimeUnit.MILLISECONDS))
        .isSameAs(Exceptions.failWithRejected());
    // the lane gives its thread back: nothing of the disposed worker runs any more
    await().atMost(Duration.ofSeconds(WAIT)).until(() -> pool.stats().busy() == 0);
    assertThat(blockerTask.interrupted).isTrue();
    assertThat(pendingRan).hasValue(0);
    assertThat(s.isDisposed()).as("the scheduler lives on").isFalse();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aPendingWorkerTaskDisposedBeforeItsTurnNeverRuns(Kind kind) throws Exception {
    Scheduler s = scheduler(kind);
    Scheduler.Worker w = s.createWorker();
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean disposedRan = new AtomicBoolean();
    CountDownLatch afterRan = new CountDownLatch(1);

    w.schedule(() -> Occupied.awaitQuietly(release));
    Disposable doomed = w.schedule(() -> disposedRan.set(true));
    w.schedule(afterRan::countDown);
    doomed.dispose();
    assertThat(doomed.isDisposed()).isTrue();
    release.countDown();

    assertThat(afterRan.await(WAIT, TimeUnit.SECONDS)).isTrue();
    assertThat(disposedRan).isFalse();
    w.dispose();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aWorkerRunsItsTasksOneAtATimeInSubmissionOrder(Kind kind) throws Exception {
    Scheduler s = scheduler(kind);
    Scheduler.Worker w = s.createWorker();
    List<Integer> order = new CopyOnWriteArrayList<>();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger maxInside = new AtomicInteger();
    CountDownLatch done = new CountDownLatch(1);
    int n = 500;

    for (int i = 0; i < n; i++) {
      int value = i;
      w.schedule(() -> {
        maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
        order.add(value);
        inside.decrementAndGet();
      });
    }
    w.schedule(done::countDown);

    assertThat(done.await(WAIT, TimeUnit.SECONDS)).isTrue();
    assertThat(order).containsExactlyElementsOf(IntStream.range(0, n).boxed().toList());
    assertThat(maxInside).hasValue(1);
    w.dispose();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aWorkersDelayedTasksWithEqualDelaysRunInSubmissionOrder(Kind kind) throws Exception {
    Scheduler s = scheduler(kind);
    Scheduler.Worker w = s.createWorker();
    List<Integer> order = new CopyOnWriteArrayList<>();
    int n = 50;
    CountDownLatch done = new CountDownLatch(n);

    for (int i = 0; i < n; i++) {
      int value = i;
      w.schedule(() -> {
        order.add(value);
        done.countDown();
      }, 20, TimeUnit.MILLISECONDS);
    }

    assertThat(done.await(WAIT, TimeUnit.SECONDS)).isTrue();
    assertThat(order).containsExactlyElementsOf(IntStream.range(0, n).boxed().toList());
    w.dispose();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void disposingOneWorkerLeavesTheOthersAlone(Kind kind) throws Exception {
    Scheduler s = scheduler(kind);
    Scheduler.Worker doomed = s.createWorker();
    Scheduler.Worker other = s.createWorker();
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch otherRan = new CountDownLatch(1);

    other.schedule(() -> Occupied.awaitQuietly(release));
    Disposable otherPending = other.schedule(otherRan::countDown);
    doomed.schedule(() -> { });
    doomed.dispose();
    release.countDown();

    assertThat(otherRan.await(WAIT, TimeUnit.SECONDS)).isTrue();
    assertThat(other.isDisposed()).isFalse();
    await().atMost(Duration.ofSeconds(WAIT)).until(otherPending::isDisposed);
    other.dispose();
  }

  // ---------------------------------------------------------------------------------------------
  // Time: delayed and periodic work, zero and negative values

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aDelayedDirectTaskIsLiveWhileRunningAndTheSchedulerRejectsAfterDispose(Kind kind)
      throws Exception {
    Scheduler s = scheduler(kind);
    BlockingProbe task = new BlockingProbe();

    Disposable d = s.schedule(task, 10, TimeUnit.MILLISECONDS);

    task.awaitStarted();
    assertThat(d.isDisposed()).isFalse();
    d.dispose();
    assertThat(d.isDisposed()).isTrue();
    assertThat(task.ended.await(WAIT, TimeUnit.SECONDS)).isTrue();
    assertThat(task.interrupted).isTrue();

    s.dispose();
    assertThat(s.isDisposed()).isTrue();
    assertThatExceptionOfType(RejectedExecutionException.class).isThrownBy(() -> s.schedule(() -> { }));
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aDelayedWorkerTaskIsLiveWhileRunningAndTheWorkerRejectsAfterDispose(Kind kind)
      throws Exception {
    Scheduler s = scheduler(kind);
    Scheduler.Worker w = s.createWorker();
    BlockingProbe task = new BlockingProbe();

    Disposable d = w.schedule(task, 10, TimeUnit.MILLISECONDS);

    task.awaitStarted();
    assertThat(d.isDisposed()).isFalse();
    d.dispose();
    assertThat(d.isDisposed()).isTrue();
    assertThat(task.ended.await(WAIT, TimeUnit.SECONDS)).isTrue();

    w.dispose();
    assertThat(w.isDisposed()).isTrue();
    assertThatExceptionOfType(RejectedExecutionException.class)
        .isThrownBy(() -> w.schedule(() -> { }))
        .isSameAs(Exceptions.failWithRejected());
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void disposedPendingTimersNeverRunAndDoNotHoldAGracefulDisposal(Kind kind) throws Exception {
    Scheduler s = scheduler(kind);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger ran = new AtomicInteger();

    List<Disposable> timers = List.of(
        s.schedule(ran::incrementAndGet, 1, TimeUnit.HOURS),
        s.schedulePeriodically(ran::incrementAndGet, 1, 1, TimeUnit.HOURS),
        w.schedule(ran::incrementAndGet, 1, TimeUnit.HOURS),
        w.schedulePeriodically(ran::incrementAndGet, 1, 1, TimeUnit.HOURS),
        s.schedule(ran::incrementAndGet, Long.MAX_VALUE, TimeUnit.NANOSECONDS),
        w.schedulePeriodically(ran::incrementAndGet, Long.MAX_VALUE, Long.MAX_VALUE, TimeUnit.DAYS));
    assertThat(timers).noneMatch(Disposable::isDisposed);
    timers.forEach(Disposable::dispose);

    assertThat(timers).allMatch(Disposable::isDisposed);
    s.disposeGracefully().block(Duration.ofSeconds(WAIT));
    assertThat(ran).hasValue(0);
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void disposingTheSchedulerDisposesItsPendingTimersAtOnce(Kind kind) {
    Scheduler s = scheduler(kind);
    Scheduler.Worker w = s.createWorker();

    List<Disposable> timers = List.of(
        s.schedule(() -> { }, 1, TimeUnit.HOURS),
        s.schedulePeriodically(() -> { }, 1, 1, TimeUnit.HOURS),
        w.schedule(() -> { }, 1, TimeUnit.HOURS),
        w.schedulePeriodically(() -> { }, 1, 1, TimeUnit.HOURS));
    s.dispose();

    assertThat(timers).allMatch(Disposable::isDisposed);
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void directPeriodicWorkRepeatsUntilDisposed(Kind kind) throws Exception {
    Scheduler s = scheduler(kind);
    assertPeriodicRepeatsUntilDisposed(s,
        r -> s.schedulePeriodically(r, 10, 10, TimeUnit.MILLISECONDS));
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void workerPeriodicWorkRepeatsUntilDisposed(Kind kind) throws Exception {
    Scheduler s = scheduler(kind);
    Scheduler.Worker w = s.createWorker();
    assertPeriodicRepeatsUntilDisposed(s,
        r -> w.schedulePeriodically(r, 10, 10, TimeUnit.MILLISECONDS));
    assertThat(w.isDisposed()).isFalse();
  }

  /**
   * The third run blocks; disposing the task from here interrupts it; once a graceful disposal of
   * the scheduler has completed nothing of it runs any more, so the count is final.
   */
  private static void assertPeriodicRepeatsUntilDisposed(Scheduler s,
      Function<Runnable, Disposable> periodic) throws Exception {
    AtomicInteger runs = new AtomicInteger();
    CountDownLatch third = new CountDownLatch(1);
    AtomicBoolean interrupted = new AtomicBoolean();

    Disposable d = periodic.apply(() -> {
      if (runs.incrementAndGet() == 3) {
        third.countDown();
        interrupted.set(!awaitOrInterrupted(new CountDownLatch(1)));
      }
    });

    assertThat(d.isDisposed()).isFalse();
    assertThat(third.await(WAIT, TimeUnit.SECONDS)).isTrue();
    assertThat(d.isDisposed()).as("running").isFalse();
    d.dispose();
    assertThat(d.isDisposed()).isTrue();
    s.disposeGracefully().block(Duration.ofSeconds(WAIT));
    assertThat(interrupted).isTrue();
    assertThat(runs).hasValue(3);
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void zeroAndNegativeDelaysMeanNow(Kind kind) throws Exception {
    Scheduler s = scheduler(kind);
    Scheduler.Worker w = s.createWorker();
    CountDownLatch ran = new CountDownLatch(4);

    s.schedule(ran::countDown, 0, TimeUnit.MILLISECONDS);
    s.schedule(ran::countDown, -5, TimeUnit.SECONDS);
    w.schedule(ran::countDown, 0, TimeUnit.NANOSECONDS);
    w.schedule(ran::countDown, -1, TimeUnit.DAYS);

    assertThat(ran.await(WAIT, TimeUnit.SECONDS)).isTrue();
    w.dispose();
  }

  static Stream<Arguments> kindsAndPeriodicShapes() {
    long[][] shapes = {{0, 0}, {-5, 0}, {0, -3}, {-1, -1}, {5, 0}, {-5, 5}};
    return Stream.of(Kind.values()).flatMap(k -> Stream.of(shapes)
        .flatMap(p -> Stream.of(Arguments.of(k, p[0], p[1], true),
            Arguments.of(k, p[0], p[1], false))));
  }

  /** Reactor: an initial delay <= 0 means now, a period <= 0 means again as soon as a run returns. */
  @ParameterizedTest(name = "{0} initialDelay={1}ms period={2}ms onWorker={3}")
  @MethodSource("kindsAndPeriodicShapes")
  void zeroAndNegativeInitialDelaysAndPeriodsRepeatAtOnce(Kind kind, long initialDelay,
      long period, boolean onWorker) throws Exception {
    Scheduler s = scheduler(kind);
    Scheduler.Worker w = s.createWorker();
    CountDownLatch runs = new CountDownLatch(5);

    Disposable d = onWorker
        ? w.schedulePeriodically(runs::countDown, initialDelay, period, TimeUnit.MILLISECONDS)
        : s.schedulePeriodically(runs::countDown, initialDelay, period, TimeUnit.MILLISECONDS);

    assertThat(runs.await(WAIT, TimeUnit.SECONDS)).isTrue();
    d.dispose();
    assertThat(d.isDisposed()).isTrue();
    w.dispose();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void reactorTimeOperatorsWork(Kind kind) {
    Scheduler s = scheduler(kind);

    StepVerifier.create(Flux.interval(Duration.ofMillis(5), s).take(3))
        .expectNext(0L, 1L, 2L)
        .expectComplete()
        .verify(Duration.ofSeconds(WAIT));
    StepVerifier.create(Mono.delay(Duration.ofMillis(5), s))
        .expectNext(0L)
        .expectComplete()
        .verify(Duration.ofSeconds(WAIT));
    StepVerifier.create(Flux.range(0, 100).publishOn(s).subscribeOn(s))
        .expectNextCount(100)
        .expectComplete()
        .verify(Duration.ofSeconds(WAIT));
  }

  // ---------------------------------------------------------------------------------------------
  // disposeGracefully

  @ParameterizedTest
  @EnumSource(Kind.class)
  void disposeGracefullyOfAnIdleSchedulerCompletes(Kind kind) {
    Scheduler s = scheduler(kind);
    s.createWorker();

    s.disposeGracefully().block(Duration.ofSeconds(WAIT));

    assertThat(s.isDisposed()).isTrue();
    assertThat(pool.isTerminated()).isEqualTo(kind.owned);
    assertThat(pool.isShutdown()).isEqualTo(kind.owned);
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void disposeGracefullyIsLazyAndCompletesEveryCallerOnceTheLastTaskEnded(Kind kind)
      throws Exception {
    Scheduler s = scheduler(kind);
    HeldTask held = new HeldTask(); // ignores interrupts
    s.schedule(held);
    held.awaitStarted();

    Mono<Void> first = s.disposeGracefully();
    Mono<Void> second = s.disposeGracefully();
    assertThat(s.isDisposed()).as("nothing happens before subscription").isFalse();

    StepVerifier.create(first).expectSubscription().expectTimeout(Duration.ofMillis(50)).verify();
    StepVerifier.create(second).expectSubscription().expectTimeout(Duration.ofMillis(50)).verify();
    assertThat(s.isDisposed()).isTrue();
    assertThatExceptionOfType(RejectedExecutionException.class)
        .isThrownBy(() -> s.schedule(() -> { }));
    held.release();

    StepVerifier.create(first).expectComplete().verify(Duration.ofSeconds(WAIT));
    StepVerifier.create(second).expectComplete().verify(Duration.ofSeconds(WAIT));
    StepVerifier.create(s.disposeGracefully()).expectComplete().verify(Duration.ofSeconds(WAIT));
    assertThat(pool.isTerminated()).isEqualTo(kind.owned);
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void disposeGracefullyLetsAcceptedWorkRunButStopsPeriodicWork(Kind kind) throws Exception {
    Scheduler s = scheduler(kind);
    Scheduler.Worker w = s.createWorker();
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger ran = new AtomicInteger();

    w.schedule(() -> Occupied.awaitQuietly(release));
    w.schedule(ran::incrementAndGet);
    s.schedule(ran::incrementAndGet, 20, TimeUnit.MILLISECONDS);
    w.schedule(ran::incrementAndGet, 20, TimeUnit.MILLISECONDS);
    Disposable periodic = s.schedulePeriodically(() -> { }, 1, 1, TimeUnit.HOURS);
    Mono<Void> graceful = s.disposeGracefully();
    graceful.subscribe();

    assertThat(periodic.isDisposed()).isTrue();
    release.countDown();
    graceful.block(Duration.ofSeconds(WAIT));
    assertThat(ran).hasValue(3);
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aTimedOutDisposeGracefullyMayBeRetriedAndFollowedByDispose(Kind kind) throws Exception {
    Scheduler s = scheduler(kind);
    HeldTask held = new HeldTask();
    s.schedule(held);
    held.awaitStarted();

    for (int i = 0; i < 2; i++) {
      assertThatThrownBy(() -> s.disposeGracefully().timeout(Duration.ofMillis(40)).block())
          .hasCauseExactlyInstanceOf(TimeoutException.class);
    }
    s.dispose();
    assertThat(s.isDisposed()).isTrue();
    held.release();

    StepVerifier.create(s.disposeGracefully()).expectComplete().verify(Duration.ofSeconds(WAIT));
    assertThat(pool.isTerminated()).isEqualTo(kind.owned);
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void concurrentDisposeGracefullyCallsTimeOutTogetherAndCompleteTogether(Kind kind)
      throws Exception {
    Scheduler s = scheduler(kind);
    HeldTask held = new HeldTask();
    s.schedule(held);
    held.awaitStarted();
    int callers = 8;
    ExecutorService threads = Executors.newFixedThreadPool(callers);
    try {
      List<Future<Throwable>> timedOut = new ArrayList<>();
      for (int i = 0; i < callers; i++) {
        timedOut.add(threads.submit(() -> {
          try {
            s.disposeGracefully().timeout(Duration.ofMillis(40)).block();
            return null;
          } catch (RuntimeException e) {
            return e;
          }
        }));
      }
      for (Future<Throwable> f : timedOut) {
        assertThat(f.get(WAIT, TimeUnit.SECONDS)).hasCauseExactlyInstanceOf(TimeoutException.class);
      }
      held.release();
      List<Future<?>> completed = new ArrayList<>();
      for (int i = 0; i < callers; i++) {
        completed.add(threads.submit(() -> s.disposeGracefully().block(Duration.ofSeconds(WAIT))));
      }
      for (Future<?> f : completed) {
        f.get(WAIT, TimeUnit.SECONDS);
      }
    } finally {
      threads.shutdownNow();
    }
    assertThat(s.isDisposed()).isTrue();
    assertThatExceptionOfType(RejectedExecutionException.class)
        .isThrownBy(() -> s.schedule(() -> { }));
    assertThat(pool.isTerminated()).isEqualTo(kind.owned);
  }

  // ---------------------------------------------------------------------------------------------
  // Scannable

  @ParameterizedTest
  @EnumSource(Kind.class)
  void theSchedulerAnswersNameCapacityBufferedAndTerminated(Kind kind) throws Exception {
    Scheduler s = scheduler(kind);
    Scannable scan = Scannable.from(s);

    assertThat(scan.isScanAvailable()).isTrue();
    assertThat(scan.scan(Scannable.Attr.NAME)).isEqualTo(s.toString()).contains(pool.name());
    assertThat(scan.name()).isEqualTo(s.toString());
    assertThat(scan.scan(Scannable.Attr.CAPACITY)).isEqualTo(4);
    assertThat(scan.scan(Scannable.Attr.BUFFERED)).isZero();
    assertThat(scan.scan(Scannable.Attr.TERMINATED)).isFalse();
    assertThat(scan.scan(Scannable.Attr.CANCELLED)).isFalse();

    if (!kind.nonblocking) {
      // documented: BUFFERED counts entries in the pool's waiting line, not running tasks
      try (Occupied busy = Occupied.all(pool)) {
        assertThat(scan.scan(Scannable.Attr.BUFFERED)).isZero();
        Disposable waiting = s.schedule(() -> { });
        assertThat(scan.scan(Scannable.Attr.BUFFERED)).isOne();
        waiting.dispose();
        assertThat(scan.scan(Scannable.Attr.BUFFERED)).isZero();
      }
    }

    s.dispose();
    assertThat(scan.scan(Scannable.Attr.TERMINATED)).isTrue();
    assertThat(scan.scan(Scannable.Attr.CANCELLED)).isTrue();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aWorkerAnswersNameParentBufferedAndTerminated(Kind kind) throws Exception {
    Scheduler s = scheduler(kind);
    Scheduler.Worker w = s.createWorker();
    Scannable scan = Scannable.from(w);
    HeldTask held = new HeldTask();

    assertThat(scan.isScanAvailable()).isTrue();
    assertThat(scan.scan(Scannable.Attr.NAME)).isEqualTo(s + ".worker");
    assertThat(scan.scan(Scannable.Attr.PARENT)).isSameAs(s);
    assertThat(scan.parents().anyMatch(p -> p == s)).isTrue();
    assertThat(scan.scan(Scannable.Attr.BUFFERED)).isZero();
    assertThat(scan.scan(Scannable.Attr.TERMINATED)).isFalse();

    w.schedule(held);
    held.awaitStarted();
    w.schedule(() -> { });
    w.schedule(() -> { }, 1, TimeUnit.HOURS);
    // running, pending and delayed tasks of this worker
    assertThat(scan.scan(Scannable.Attr.BUFFERED)).isEqualTo(3);

    w.dispose();
    assertThat(scan.scan(Scannable.Attr.BUFFERED)).isZero();
    assertThat(scan.scan(Scannable.Attr.TERMINATED)).isTrue();
    assertThat(scan.scan(Scannable.Attr.CANCELLED)).isTrue();
    held.release();
  }

  // ---------------------------------------------------------------------------------------------
  // Hooks

  /** Counts when a decorated task runs, as Reactor's hook tests do. */
  private static Function<Runnable, Runnable> adding(AtomicInteger tracker, int amount) {
    return r -> () -> {
      tracker.addAndGet(amount);
      r.run();
    };
  }

  /** Records each application of the hook (at schedule time). */
  private static Function<Runnable, Runnable> recording(List<String> log, String key) {
    return r -> {
      log.add(key);
      return r;
    };
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void scheduleHooksAreAdditiveAndWrapEveryKindOfTask(Kind kind) throws Exception {
    AtomicInteger tracker = new AtomicInteger();
    Schedulers.onScheduleHook("k1", adding(tracker, 1));
    Schedulers.onScheduleHook("k2", adding(tracker, 10));
    Schedulers.onScheduleHook("k3", adding(tracker, 100));
    Scheduler s = scheduler(kind);
    Scheduler.Worker w = s.createWorker();
    CountDownLatch ran = new CountDownLatch(4);

    s.schedule(ran::countDown);
    w.schedule(ran::countDown);
    s.schedule(ran::countDown, 1, TimeUnit.MILLISECONDS);
    w.schedule(ran::countDown, 1, TimeUnit.MILLISECONDS);

    assertThat(ran.await(WAIT, TimeUnit.SECONDS)).isTrue();
    // the decoration runs before the task itself: each of the 4 tasks added 111 before counting down
    assertThat(tracker).hasValue(4 * 111);
    w.dispose();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void scheduleHooksAreAppliedOncePerScheduleCallInOrder(Kind kind) throws Exception {
    List<String> log = new CopyOnWriteArrayList<>();
    Schedulers.onScheduleHook("k1", recording(log, "k1"));
    Schedulers.onScheduleHook("k2", recording(log, "k2"));
    Schedulers.onScheduleHook("k3", recording(log, "k3"));
    Scheduler s = scheduler(kind);
    Scheduler.Worker w = s.createWorker();
    CountDownLatch ran = new CountDownLatch(4 + 2 * 3);

    s.schedule(ran::countDown);
    w.schedule(ran::countDown);
    s.schedule(ran::countDown, 1, TimeUnit.MILLISECONDS);
    w.schedule(ran::countDown, 1, TimeUnit.MILLISECONDS);
    Disposable p1 = s.schedulePeriodically(ran::countDown, 0, 1, TimeUnit.MILLISECONDS);
    Disposable p2 = w.schedulePeriodically(ran::countDown, 0, 1, TimeUnit.MILLISECONDS);

    assertThat(ran.await(WAIT, TimeUnit.SECONDS)).isTrue();
    p1.dispose();
    p2.dispose();
    List<String> once = List.of("k1", "k2", "k3");
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      expected.addAll(once);
    }
    assertThat(log).containsExactlyElementsOf(expected);
    w.dispose();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void scheduleHooksWithTheSameKeyReplaceAndMayBeResetOneByOne(Kind kind) throws Exception {
    AtomicInteger tracker = new AtomicInteger();
    Schedulers.onScheduleHook("k1", adding(tracker, 1));
    Schedulers.onScheduleHook("k1", adding(tracker, 10));
    Schedulers.onScheduleHook("k2", adding(tracker, 100));
    Schedulers.onScheduleHook("k3", adding(tracker, 1000));
    Schedulers.resetOnScheduleHook("k3");
    Scheduler s = scheduler(kind);
    CountDownLatch ran = new CountDownLatch(1);

    s.schedule(ran::countDown);
    assertThat(ran.await(WAIT, TimeUnit.SECONDS)).isTrue();
    assertThat(tracker).hasValue(110);

    Schedulers.resetOnScheduleHooks();
    CountDownLatch again = new CountDownLatch(1);
    s.createWorker().schedule(again::countDown);
    assertThat(again.await(WAIT, TimeUnit.SECONDS)).isTrue();
    assertThat(tracker).hasValue(110);
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aFailingTaskOfAnyKindReachesOnHandleErrorAndThePoolKeepsWorking(Kind kind)
      throws Exception {
    List<Throwable> handled = new CopyOnWriteArrayList<>();
    List<Thread> on = new CopyOnWriteArrayList<>();
    CountDownLatch reported = new CountDownLatch(6);
    Schedulers.onHandleError("contract", (thread, error) -> {
      on.add(thread);
      handled.add(error);
      reported.countDown();
    });
    Scheduler s = scheduler(kind);
    Scheduler.Worker w = s.createWorker();

    s.schedule(failing("direct"));
    w.schedule(failing("worker"));
    s.schedule(failing("delayed"), 1, TimeUnit.MILLISECONDS);
    w.schedule(failing("workerDelayed"), 1, TimeUnit.MILLISECONDS);
    AtomicInteger periodicRuns = new AtomicInteger();
    CountDownLatch periodicTwice = new CountDownLatch(2);
    Disposable periodic = s.schedulePeriodically(() -> {
      if (periodicRuns.incrementAndGet() <= 2) {
        periodicTwice.countDown();
        throw new IllegalStateException("periodic");
      }
    }, 0, 1, TimeUnit.MILLISECONDS);

    assertThat(reported.await(WAIT, TimeUnit.SECONDS)).isTrue();
    assertThat(periodicTwice.await(WAIT, TimeUnit.SECONDS)).isTrue();
    periodic.dispose();
    assertThat(handled).extracting(Throwable::getMessage)
        .contains("direct", "worker", "delayed", "workerDelayed", "periodic");
    assertThat(handled.stream().filter(e -> "periodic".equals(e.getMessage())).count())
        .as("a periodic task keeps running after a failed run").isGreaterThanOrEqualTo(2);
    assertThat(on).doesNotContain(Thread.currentThread());

    CountDownLatch stillWorks = new CountDownLatch(2);
    s.schedule(stillWorks::countDown);
    w.schedule(stillWorks::countDown);
    assertThat(stillWorks.await(WAIT, TimeUnit.SECONDS)).isTrue();
    w.dispose();
  }

  /**
   * Issue 21, fault 5: a failing task passes through the onSchedule hooks once, like every task,
   * also on its way to the onHandleError hook (version 2 reached that hook through a rethrowing
   * runnable on a Reactor scheduler, which passed the hooks once more).
   */
  @ParameterizedTest
  @EnumSource(Kind.class)
  void aFailingTaskPassesTheScheduleHooksOnceOnItsWayToOnHandleError_guarantee8(Kind kind)
      throws Exception {
    List<String> log = new CopyOnWriteArrayList<>();
    Schedulers.onScheduleHook("k1", recording(log, "k1"));
    CountDownLatch reported = new CountDownLatch(1);
    Schedulers.onHandleError("contract", (thread, error) -> reported.countDown());
    Scheduler s = scheduler(kind);

    s.schedule(failing("boom"));

    assertThat(reported.await(WAIT, TimeUnit.SECONDS)).isTrue();
    assertThat(log).containsExactly("k1");
  }

  // ---------------------------------------------------------------------------------------------

  private static Runnable failing(String message) {
    return () -> {
      throw new IllegalStateException(message);
    };
  }

  /**
   * A task that says it started, then waits until it is interrupted (for 30 s at the most), and
   * records whether it was interrupted before it says it ended.
   */
  private static final class BlockingProbe implements Runnable {
    final CountDownLatch started = new CountDownLatch(1);
    final CountDownLatch ended = new CountDownLatch(1);
    final AtomicBoolean interrupted = new AtomicBoolean();

    @Override
    public void run() {
      started.countDown();
      interrupted.set(!awaitOrInterrupted(new CountDownLatch(1)));
      ended.countDown();
    }

    void awaitStarted() throws InterruptedException {
      assertThat(started.await(WAIT, TimeUnit.SECONDS)).as("task started").isTrue();
    }
  }

  /** A task that records whether its thread was interrupted when it ran. */
  private static final class InterruptCheck implements Runnable {
    final CountDownLatch ran = new CountDownLatch(1);
    final AtomicBoolean interrupted = new AtomicBoolean(true);

    @Override
    public void run() {
      interrupted.set(Thread.currentThread().isInterrupted());
      ran.countDown();
    }
  }

  /** A task that says it started, then holds its thread until released, ignoring interrupts. */
  private static final class HeldTask implements Runnable {
    private final CountDownLatch started = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);

    @Override
    public void run() {
      started.countDown();
      Occupied.awaitQuietly(release);
    }

    void awaitStarted() throws InterruptedException {
      assertThat(started.await(WAIT, TimeUnit.SECONDS)).as("task started").isTrue();
    }

    void release() {
      release.countDown();
    }
  }

  /** Waits on the latch; false if interrupted while waiting (the interrupt is consumed). */
  private static boolean awaitOrInterrupted(CountDownLatch latch) {
    try {
      latch.await(WAIT * 3, TimeUnit.SECONDS);
      return true;
    } catch (InterruptedException e) {
      return false;
    }
  }
}
