package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.warmpool.PoolStats;
import dev.warmpool.WorkerPool;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Adversarial review (r2) of the restructured Reactor adapter: each test forces one interleaving
 * with latches and checks a guarantee of DESIGN sections 4 and 6.
 */
class AdapterReviewTest {
  private static final Duration SAFETY = Duration.ofSeconds(10);
  private final List<WorkerPool> pools = new CopyOnWriteArrayList<>();

  @AfterEach
  void tearDown() throws InterruptedException {
    Schedulers.resetOnHandleError();
    Schedulers.resetOnScheduleHooks();
    for (WorkerPool p : pools) {
      p.shutdownNow();
      p.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  private WorkerPool pool(WorkerPool.Builder b) {
    WorkerPool p = b.build();
    pools.add(p);
    return p;
  }

  private WorkerPool nonblocking(int capacity) {
    return pool(WorkerPool.builder().name("r2nb").capacity(capacity).nonblocking(true));
  }

  private static void awaitQuiet(WorkerPool p) {
    await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> p.stats().busy() == 0 && p.stats().waiting() == 0);
  }

  private static void assertExact(PoolStats s, long handedBack) {
    assertThat(s.submitted()).as("submitted == completed + failed + handed back: " + s)
        .isEqualTo(s.completed() + s.failed() + handedBack);
  }

  private static int buffered(Object scannable) {
    return (Integer) Scannable.from(scannable).scanUnsafe(Scannable.Attr.BUFFERED);
  }

  // ---- guarantee 6: admission once per Worker ----

  @Test
  void workerAdmittedByADelayedTaskIsNeverRejectedLater() throws Exception {
    WorkerPool p = nonblocking(1);
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    CountDownLatch ran = new CountDownLatch(1);
    w.schedule(ran::countDown, 1, TimeUnit.MILLISECONDS);
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    awaitQuiet(p);
    CountDownLatch later = new CountDownLatch(1);
    try (Occupied full = Occupied.all(p)) {
      w.schedule(later::countDown); // must wait its turn, not be rejected
    }
    assertThat(later.await(10, TimeUnit.SECONDS)).isTrue();
    w.dispose();
  }

  @Test
  void neverAdmittedWorkerIsRejectedSynchronouslyAndPublishOnGetsOnError() throws Exception {
    WorkerPool p = nonblocking(1);
    Scheduler s = PoolSchedulers.from(p);
    try (Occupied full = Occupied.all(p)) {
      assertThatThrownBy(() -> s.schedule(() -> { })).isInstanceOf(RejectedExecutionException.class);
      Scheduler.Worker w = s.createWorker();
      assertThatThrownBy(() -> w.schedule(() -> { }))
          .isInstanceOf(RejectedExecutionException.class);
      assertThatThrownBy(() -> Mono.just(1).publishOn(s).block(SAFETY))
          .hasCauseInstanceOf(RejectedExecutionException.class);
      assertThatThrownBy(() -> Mono.just(1).subscribeOn(s).block(SAFETY))
          .hasCauseInstanceOf(RejectedExecutionException.class);
      // a zero delay is a timer: never refused for load (guarantee 7)
      AtomicInteger ran = new AtomicInteger();
      Mono<Long> zero = Mono.delay(Duration.ZERO, s).doOnNext(x -> ran.incrementAndGet());
      Disposable d = zero.subscribe();
      assertThat(d.isDisposed()).isFalse();
      full.close();
      await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> ran.get() == 1);
      w.dispose();
    }
    awaitQuiet(p);
    assertExact(p.stats(), 0);
    assertThat(buffered(s)).isZero();
  }

  // ---- guarantee 7: timers at shutdown ----

  @Test
  void dueDelayWaitingInLineRunsUnderGracefulShutdown() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2due").capacity(1));
    Scheduler s = PoolSchedulers.from(p);
    Occupied full = Occupied.all(p);
    AtomicReference<Long> got = new AtomicReference<>();
    Mono.delay(Duration.ofMillis(1), s).subscribe(got::set);
    Scheduler.Worker w = s.createWorker();
    CountDownLatch workerTimer = new CountDownLatch(1);
    w.schedule(workerTimer::countDown, 1, TimeUnit.MILLISECONDS);
    await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> p.stats().waiting() == 2); // both due, in line
    p.shutdown();
    full.close();
    await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> got.get() != null);
    assertThat(workerTimer.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(p.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertExact(p.stats(), 0);
    assertThat(buffered(w)).isZero();
  }

  @Test
  void notDueDelayIsSignalledAndNotHeldWhenThePoolShutsDown() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2nd").capacity(1));
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    Disposable direct = s.schedule(() -> { }, 1, TimeUnit.HOURS);
    Disposable ofWorker = w.schedule(() -> { }, 1, TimeUnit.HOURS);
    Disposable periodic = w.schedulePeriodically(() -> { }, 1, 1, TimeUnit.HOURS);
    p.shutdown();
    assertThat(p.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(direct.isDisposed()).isTrue();
    assertThat(ofWorker.isDisposed()).isTrue();
    assertThat(periodic.isDisposed()).isTrue();
    assertThat(buffered(w)).isZero();
    // the scheduler's graceful disposal must not wait for them
    s.disposeGracefully().block(SAFETY);
  }

  @Test
  void periodicRunningWhenThePoolShutsDownEnds() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2per").capacity(2));
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    CountDownLatch inRun = new CountDownLatch(2);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger runs = new AtomicInteger();
    Runnable body = () -> {
      if (runs.incrementAndGet() <= 2) {
        inRun.countDown();
        Occupied.awaitQuietly(release);
      }
    };
    Disposable d1 = s.schedulePeriodically(body, 0, 1, TimeUnit.MILLISECONDS);
    Disposable d2 = w.schedulePeriodically(body, 0, 1, TimeUnit.MILLISECONDS);
    assertThat(inRun.await(10, TimeUnit.SECONDS)).isTrue();
    p.shutdown();
    release.countDown();
    assertThat(p.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(d1.isDisposed()).isTrue();
    assertThat(d2.isDisposed()).isTrue();
    assertThat(buffered(w)).isZero();
    s.disposeGracefully().block(SAFETY);
  }

  // ---- guarantee 8: failures counted once, reported once ----

  private interface Scheduling {
    Disposable apply(Scheduler s, Scheduler.Worker w, Runnable r);
  }

  private void failureRule(Scheduling how, boolean periodic, boolean explicitHandler)
      throws Exception {
    AtomicInteger hook = new AtomicInteger();
    AtomicInteger handler = new AtomicInteger();
    AtomicInteger onSchedule = new AtomicInteger();
    Schedulers.onHandleError((t, e) -> hook.incrementAndGet());
    Schedulers.onScheduleHook("r2count", r -> {
      onSchedule.incrementAndGet();
      return r;
    });
    WorkerPool.Builder b = WorkerPool.builder().name("r2fail").capacity(2);
    if (explicitHandler) {
      b.failureHandler((t, e) -> handler.incrementAndGet());
    }
    WorkerPool p = pool(b);
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger runs = new AtomicInteger();
    int want = periodic ? 3 : 1;
    Disposable d = how.apply(s, w, () -> {
      runs.incrementAndGet();
      throw new IllegalStateException("boom");
    });
    await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> runs.get() >= want && p.stats().failed() >= want);
    d.dispose();
    awaitQuiet(p);
    long failed = p.stats().failed();
    assertThat(failed).as("failed counted once per run").isEqualTo(runs.get());
    if (explicitHandler) {
      assertThat(handler.get()).as("explicit handler: each failure once").isEqualTo(runs.get());
      assertThat(hook.get()).as("hook not called when a handler is set").isZero();
    } else {
      assertThat(hook.get()).as("onHandleError once per failure").isEqualTo(runs.get());
    }
    assertThat(onSchedule.get()).as("onSchedule once per schedule call").isEqualTo(1);
    assertExact(p.stats(), 0);
    w.dispose();
    assertThat(buffered(w)).isZero();
  }

  @Test
  void failuresOfEveryKindAreCountedAndReportedOnce() throws Exception {
    for (boolean handler : new boolean[] {false, true}) {
      failureRule((s, w, r) -> s.schedule(r), false, handler);
      failureRule((s, w, r) -> s.schedule(r, 1, TimeUnit.MILLISECONDS), false, handler);
      failureRule((s, w, r) -> s.schedulePeriodically(r, 0, 1, TimeUnit.MILLISECONDS), true,
          handler);
      failureRule((s, w, r) -> w.schedule(r), false, handler);
      failureRule((s, w, r) -> w.schedule(r, 1, TimeUnit.MILLISECONDS), false, handler);
      failureRule((s, w, r) -> w.schedulePeriodically(r, 0, 1, TimeUnit.MILLISECONDS), true,
          handler);
      failureRule((s, w, r) -> w.schedulePeriodically(r, 0, 0, TimeUnit.MILLISECONDS), true,
          handler);
    }
  }

  // ---- dispose at each step ----

  /** Disposes the task from another thread while the scheduling thread is inside the hand-off. */
  @Test
  void disposeDuringTheHandOffWithdrawsTheTask() throws Exception {
    for (int kind = 0; kind < 4; kind++) {
      CountDownLatch inHandOff = new CountDownLatch(1);
      CountDownLatch disposed = new CountDownLatch(1);
      AtomicReference<Runnable> seen = new AtomicReference<>();
      WorkerPool p = pool(WorkerPool.builder().name("r2ho").capacity(1).taskDecorator(r -> {
        if (r instanceof Disposable && seen.compareAndSet(null, r)) {
          inHandOff.countDown();
          Occupied.awaitQuietly(disposed);
        }
        return r;
      }));
      Scheduler s = PoolSchedulers.from(p);
      Scheduler.Worker w = s.createWorker();
      Occupied full = Occupied.all(p);
      AtomicInteger ran = new AtomicInteger();
      int k = kind;
      Thread t = new Thread(() -> {
        switch (k) {
          case 0 -> s.schedule(ran::incrementAndGet);
          case 1 -> w.schedule(ran::incrementAndGet);
          case 2 -> s.schedule(ran::incrementAndGet, 1, TimeUnit.MILLISECONDS);
          default -> w.schedule(ran::incrementAndGet, 1, TimeUnit.MILLISECONDS);
        }
      });
      t.start();
      assertThat(inHandOff.await(10, TimeUnit.SECONDS)).isTrue();
      ((Disposable) seen.get()).dispose();
      disposed.countDown();
      t.join(10_000);
      full.close();
      awaitQuiet(p);
      assertThat(ran.get()).as("kind " + k).isZero();
      assertThat(p.stats().waiting()).isZero();
      assertThat(buffered(w)).as("kind " + k).isZero();
      assertExact(p.stats(), 0);
      s.disposeGracefully().block(SAFETY);
    }
  }

  @Test
  void disposingAQueuedWorkerTaskLeavesTheLineAtOnceAndTheNextRuns() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2q").capacity(1));
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger ran = new AtomicInteger();
    try (Occupied full = Occupied.all(p)) {
      Disposable a = w.schedule(() -> ran.addAndGet(1));
      Disposable b = w.schedule(() -> ran.addAndGet(10));
      Disposable c = s.schedule(() -> ran.addAndGet(100));
      assertThat(buffered(w)).isEqualTo(2);
      a.dispose();
      c.dispose();
      assertThat(a.isDisposed()).isTrue();
      assertThat(buffered(w)).isEqualTo(1);
      await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> p.stats().waiting() == 1);
      assertThat(b.isDisposed()).isFalse();
    }
    await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> ran.get() == 10);
    awaitQuiet(p);
    assertThat(buffered(w)).isZero();
    assertThat(buffered(s)).isZero();
    assertExact(p.stats(), 0);
  }

  /**
   * A worker's only task, waiting in line (its lane waits for admission), is disposed: the lane
   * must give up its place in line at once (guarantee 13, last sentence; PoolTask's Javadoc: "a
   * disposed task also withdraws its core handle (it leaves the line ... at once)"), so that a
   * dead task neither shows in {@code waiting} nor takes the place of live work under maxWaiting.
   */
  @Test
  void disposedOnlyTaskOfAWorkerGivesUpTheLanesPlaceInLine() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2line").capacity(1).maxWaiting(1));
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger ran = new AtomicInteger();
    try (Occupied full = Occupied.all(p)) {
      Disposable a = w.schedule(() -> ran.addAndGet(1));
      assertThat(p.stats().waiting()).isEqualTo(1);
      a.dispose();
      assertThat(buffered(w)).isZero();
      // the line holds no live work: accepted (today: PoolOverloadedException, line full)
      assertThatCode(() -> s.schedule(() -> ran.addAndGet(10))).doesNotThrowAnyException();
      assertThat(p.stats().waiting()).as("only the direct task waits").isEqualTo(1);
    }
    await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> ran.get() == 10);
    awaitQuiet(p);
    assertExact(p.stats(), 0);
  }

  /** Guarantee 13: a cancelled lane task counts in none of submitted, completed, failed. */
  @Test
  void disposedWorkerTaskCountsInNoneOfTheCounters() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2cnt").capacity(1));
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger ran = new AtomicInteger();
    try (Occupied full = Occupied.all(p)) {
      Disposable a = w.schedule(ran::incrementAndGet);
      w.schedule(ran::incrementAndGet);
      a.dispose();
    }
    await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> ran.get() == 1);
    awaitQuiet(p);
    PoolStats st = p.stats();
    assertExact(st, 0);
    assertThat(st.completed()).as("the blockers and the one task that ran: " + st)
        .isEqualTo(p.capacity() + 1);
  }

  /** Disposing a worker whose lane waits in line gives up the lane's place at once. */
  @Test
  void disposedWorkerLeavesTheLineAtOnce() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2wl").capacity(1));
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger ran = new AtomicInteger();
    try (Occupied full = Occupied.all(p)) {
      w.schedule(ran::incrementAndGet);
      w.schedule(ran::incrementAndGet, 1, TimeUnit.MILLISECONDS);
      await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> p.stats().waiting() >= 1);
      w.dispose();
      assertThat(p.stats().waiting()).isZero();
      assertThat(buffered(w)).isZero();
    }
    awaitQuiet(p);
    assertThat(ran.get()).isZero();
    assertExact(p.stats(), 0);
  }

  /**
   * Disposing a scheduler over a shared pool: "its tasks that have not started never start". They
   * should leave the pool's line too, as a disposed task does, instead of holding places in it.
   */
  @Test
  void disposedSchedulersQueuedTasksLeaveTheSharedPoolsLine() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2sd").capacity(1).maxWaiting(2));
    Scheduler s = PoolSchedulers.from(p);
    Scheduler other = PoolSchedulers.from(p);
    AtomicInteger ran = new AtomicInteger();
    try (Occupied full = Occupied.all(p)) {
      s.schedule(ran::incrementAndGet);
      s.createWorker().schedule(ran::incrementAndGet);
      assertThat(p.stats().waiting()).isEqualTo(2);
      s.dispose();
      assertThatCode(() -> other.schedule(() -> ran.addAndGet(10))).doesNotThrowAnyException();
    }
    await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> ran.get() == 10);
    s.disposeGracefully().block(SAFETY);
  }

  /** A ThreadFactory that fails once costs at most the task that needed the thread (guarantee 11). */
  @Test
  void hostileThreadFactoryCostsAtMostOneTask() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    WorkerPool p = pool(WorkerPool.builder().name("r2tf").capacity(2).threadFactory(r -> {
      if (calls.incrementAndGet() == 1) {
        throw new IllegalStateException("no thread for you");
      }
      return new Thread(r);
    }));
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger ran = new AtomicInteger();
    int refused = 0;
    try {
      w.schedule(ran::incrementAndGet);
    } catch (RejectedExecutionException e) {
      refused++;
    }
    int lost = refused;
    if (lost == 1) {
      assertThat(buffered(w)).isZero();
    }
    w.schedule(ran::incrementAndGet);
    s.schedule(ran::incrementAndGet);
    await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> ran.get() == 3 - lost);
    awaitQuiet(p);
    assertThat(buffered(w)).isZero();
    assertExact(p.stats(), 0);
    s.disposeGracefully().block(SAFETY);
  }

  /** A delayed task that came due and waits in line leaves the line at once when disposed. */
  @Test
  void disposedDueTimerLeavesTheLineAtOnce() throws Exception {
    for (int kind = 0; kind < 4; kind++) {
      WorkerPool p = pool(WorkerPool.builder().name("r2dt").capacity(1));
      Scheduler s = PoolSchedulers.from(p);
      Scheduler.Worker w = s.createWorker();
      AtomicInteger ran = new AtomicInteger();
      try (Occupied full = Occupied.all(p)) {
        Disposable d = switch (kind) {
          case 0 -> s.schedule(ran::incrementAndGet, 1, TimeUnit.MILLISECONDS);
          case 1 -> w.schedule(ran::incrementAndGet, 1, TimeUnit.MILLISECONDS);
          case 2 -> s.schedulePeriodically(ran::incrementAndGet, 1, 1, TimeUnit.MILLISECONDS);
          default -> w.schedulePeriodically(ran::incrementAndGet, 1, 1, TimeUnit.MILLISECONDS);
        };
        await().dontCatchUncaughtExceptions().atMost(SAFETY)
            .until(() -> p.stats().waiting() == 1);
        d.dispose();
        assertThat(d.isDisposed()).isTrue();
        assertThat(p.stats().waiting()).as("kind " + kind).isZero();
        assertThat(buffered(w)).isZero();
      }
      awaitQuiet(p);
      assertThat(ran.get()).as("kind " + kind).isZero();
      assertExact(p.stats(), 0);
      s.disposeGracefully().block(SAFETY);
    }
  }

  /** Disposing a task from its own thread does not interrupt it (Reactor's rule). */
  @Test
  void selfDisposeDoesNotInterrupt() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2self").capacity(1));
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    for (Scheduler.Worker target : new Scheduler.Worker[] {null, w}) {
      AtomicReference<Disposable> self = new AtomicReference<>();
      CountDownLatch go = new CountDownLatch(1);
      CountDownLatch done = new CountDownLatch(1);
      AtomicInteger interrupted = new AtomicInteger(-1);
      Runnable body = () -> {
        Occupied.awaitQuietly(go);
        self.get().dispose();
        interrupted.set(Thread.currentThread().isInterrupted() ? 1 : 0);
        done.countDown();
      };
      self.set(target == null ? s.schedule(body) : target.schedule(body));
      go.countDown();
      assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(interrupted.get()).isZero();
      await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> self.get().isDisposed());
    }
    assertThat(buffered(w)).isZero();
  }

  /** Guarantee 6 through an operator: a publishOn stream admitted earlier is never rejected. */
  @Test
  void publishOnStreamAdmittedBeforeThePoolFilledKeepsGoing() throws Exception {
    WorkerPool p = nonblocking(1);
    Scheduler s = PoolSchedulers.from(p);
    reactor.core.publisher.Sinks.Many<Integer> sink =
        reactor.core.publisher.Sinks.many().unicast().onBackpressureBuffer();
    List<Integer> got = new CopyOnWriteArrayList<>();
    AtomicReference<Throwable> error = new AtomicReference<>();
    CountDownLatch done = new CountDownLatch(1);
    sink.asFlux().publishOn(s).subscribe(got::add, e -> {
      error.set(e);
      done.countDown();
    }, done::countDown);
    sink.tryEmitNext(1);
    await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> got.size() == 1);
    awaitQuiet(p);
    try (Occupied full = Occupied.all(p)) {
      sink.tryEmitNext(2);
      sink.tryEmitComplete();
      assertThat(error.get()).isNull();
    }
    assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(error.get()).isNull();
    assertThat(got).containsExactly(1, 2);
  }

  /** A factory-made boundedElastic: bounded by threadCap and queuedTaskCap, terminated on dispose. */
  @Test
  void factoryMadeBoundedElasticRejectsPastItsQueueCapAndTerminatesItsPool() throws Exception {
    List<WorkerPool> made = new CopyOnWriteArrayList<>();
    Schedulers.setFactory(PoolSchedulers.factory(made::add));
    try {
      Scheduler be = Schedulers.newBoundedElastic(1, 1, "r2be");
      assertThat(made).hasSize(1);
      WorkerPool p = made.get(0);
      pools.add(p);
      CountDownLatch release = new CountDownLatch(1);
      CountDownLatch started = new CountDownLatch(1);
      AtomicInteger ran = new AtomicInteger();
      be.schedule(() -> {
        started.countDown();
        Occupied.awaitQuietly(release);
      });
      assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
      be.schedule(ran::incrementAndGet);
      assertThatThrownBy(() -> be.schedule(ran::incrementAndGet))
          .isInstanceOf(RejectedExecutionException.class);
      Mono<Void> g = be.disposeGracefully().cache();
      g.subscribe();
      assertThatThrownBy(be::init).isInstanceOf(IllegalStateException.class);
      release.countDown();
      g.block(SAFETY);
      assertThat(ran.get()).isEqualTo(1);
      assertThat(p.isTerminated()).isTrue();
      assertExact(p.stats(), 0);
    } finally {
      Schedulers.resetFactory();
    }
  }

  /**
   * DESIGN section 6 (Reactor): "a pending timer is signalled when the pool closes"; guarantee 7:
   * a timer not yet due completes cancelled "so an adapter can signal its subscriber". Mono.delay
   * must not hang on a shut-down shared pool.
   */
  @Test
  void pendingMonoDelayIsSignalledWhenThePoolShutsDown() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2sig").capacity(1));
    Scheduler s = PoolSchedulers.from(p);
    AtomicReference<Object> signal = new AtomicReference<>();
    CountDownLatch ended = new CountDownLatch(1);
    Mono.delay(Duration.ofHours(1), s).subscribe(v -> signal.set(v), e -> {
      signal.set(e);
      ended.countDown();
    }, ended::countDown);
    p.shutdown();
    assertThat(p.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ended.await(5, TimeUnit.SECONDS)).as("Mono.delay signalled").isTrue();
    assertThat(signal.get()).isInstanceOf(RejectedExecutionException.class);
  }

  /**
   * The scheduling thread is paused inside the hand-off (the pool's task decorator) while the
   * worker, the scheduler or the pool is closed: the task is refused or runs or ends; nothing stays
   * pending, the line empties and counters stay exact.
   */
  @Test
  void closeDuringTheHandOff() throws Exception {
    for (int closer = 0; closer < 4; closer++) {
      for (int kind = 0; kind < 4; kind++) {
        CountDownLatch inHandOff = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        AtomicReference<Runnable> seen = new AtomicReference<>();
        WorkerPool p = pool(WorkerPool.builder().name("r2cl").capacity(1).taskDecorator(r -> {
          if (r instanceof Disposable && seen.compareAndSet(null, r)) {
            inHandOff.countDown();
            Occupied.awaitQuietly(go);
          }
          return r;
        }));
        Scheduler s = PoolSchedulers.from(p);
        Scheduler.Worker w = s.createWorker();
        AtomicInteger ran = new AtomicInteger();
        AtomicReference<Object> outcome = new AtomicReference<>();
        int k = kind;
        Thread t = new Thread(() -> {
          try {
            outcome.set(switch (k) {
              case 0 -> s.schedule(ran::incrementAndGet);
              case 1 -> w.schedule(ran::incrementAndGet);
              case 2 -> s.schedule(ran::incrementAndGet, 1, TimeUnit.MILLISECONDS);
              default -> w.schedule(ran::incrementAndGet, 1, TimeUnit.MILLISECONDS);
            });
          } catch (RuntimeException e) {
            outcome.set(e);
          }
        });
        t.start();
        assertThat(inHandOff.await(10, TimeUnit.SECONDS)).isTrue();
        List<Runnable> back = List.of();
        switch (closer) {
          case 0 -> w.dispose();
          case 1 -> s.dispose();
          case 2 -> p.shutdown();
          default -> back = p.shutdownNow();
        }
        go.countDown();
        t.join(10_000);
        String where = "closer " + closer + " kind " + kind + " outcome " + outcome.get();
        assertThat(outcome.get()).as(where).isNotNull();
        if (outcome.get() instanceof Disposable d) {
          Scheduler.Worker ww = w;
          await().dontCatchUncaughtExceptions().atMost(SAFETY).alias(where)
              .until(() -> d.isDisposed() || ww.isDisposed() && ran.get() == 0);
        }
        if (closer >= 2) {
          assertThat(p.awaitTermination(10, TimeUnit.SECONDS)).as(where).isTrue();
        } else {
          awaitQuiet(p);
        }
        assertThat(ran.get()).as(where).isLessThanOrEqualTo(1);
        if (closer == 1 || closer == 0 && (kind & 1) == 1) { // its scheduler or worker disposed
          assertThat(ran.get()).as(where).isZero();
        }
        assertThat(buffered(w)).as(where).isZero();
        assertExact(p.stats(), back.size());
        assertThat(p.stats().waiting()).as(where).isZero();
      }
    }
  }

  /** A failing periodic task when the pool shuts down: counted once per run, ends, not held. */
  @Test
  void failingPeriodicUnderShutdownEnds() throws Exception {
    for (boolean ofWorker : new boolean[] {false, true}) {
      AtomicInteger hook = new AtomicInteger();
      Schedulers.onHandleError((t, e) -> hook.incrementAndGet());
      WorkerPool p = pool(WorkerPool.builder().name("r2fps").capacity(1));
      Scheduler s = PoolSchedulers.from(p);
      Scheduler.Worker w = s.createWorker();
      CountDownLatch inRun = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      AtomicInteger runs = new AtomicInteger();
      Runnable body = () -> {
        if (runs.incrementAndGet() == 2) {
          inRun.countDown();
          Occupied.awaitQuietly(release);
        }
        throw new IllegalStateException("periodic boom");
      };
      Disposable d = ofWorker
          ? w.schedulePeriodically(body, 0, 1, TimeUnit.MILLISECONDS)
          : s.schedulePeriodically(body, 0, 1, TimeUnit.MILLISECONDS);
      assertThat(inRun.await(10, TimeUnit.SECONDS)).isTrue();
      p.shutdown(); // during the second (failing) run: its re-arm meets a closed pool
      release.countDown();
      assertThat(p.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      assertThat(d.isDisposed()).isTrue();
      assertThat(runs.get()).isEqualTo(2);
      assertThat(p.stats().failed()).isEqualTo(2);
      assertThat(hook.get()).isEqualTo(2);
      assertThat(buffered(w)).isZero();
      assertExact(p.stats(), 0);
      s.disposeGracefully().block(SAFETY);
    }
  }

  /** An uncaught-exception handler that throws must not cost the pool a worker or a count. */
  @Test
  void throwingUncaughtHandlerDoesNotBreakTheFailureRule() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2ueh").capacity(1).threadFactory(r -> {
      Thread t = new Thread(r);
      t.setUncaughtExceptionHandler((th, e) -> {
        throw new IllegalStateException("handler broke");
      });
      return t;
    }));
    Scheduler s = PoolSchedulers.from(p);
    for (int i = 0; i < 3; i++) {
      s.schedule(() -> {
        throw new IllegalArgumentException("boom");
      });
    }
    CountDownLatch after = new CountDownLatch(1);
    s.schedule(after::countDown);
    assertThat(after.await(10, TimeUnit.SECONDS)).isTrue();
    awaitQuiet(p);
    assertThat(p.stats().failed()).isEqualTo(3);
    assertExact(p.stats(), 0);
  }

  /**
   * disposeGracefully() followed by dispose() on a shared pool, with a direct task waiting in line:
   * the waiting task will never start, so the disposal should complete without waiting for a seat
   * (as Reactor's own schedulers complete a graceful disposal once dispose() forced it).
   */
  @Test
  void disposeAfterDisposeGracefullyCompletesWithoutASeat() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2dd").capacity(1));
    Scheduler s = PoolSchedulers.from(p);
    AtomicInteger ran = new AtomicInteger();
    try (Occupied full = Occupied.all(p)) {
      s.schedule(ran::incrementAndGet);
      s.createWorker().schedule(ran::incrementAndGet);
      CountDownLatch done = new CountDownLatch(1);
      s.disposeGracefully().subscribe(null, e -> done.countDown(), done::countDown);
      s.dispose();
      assertThat(done.await(5, TimeUnit.SECONDS)).as("graceful disposal done after dispose()")
          .isTrue();
    }
    awaitQuiet(p);
    assertThat(ran.get()).isZero();
  }

  /**
   * "Worker tasks and timers never expire": under maxWaitInLine, a task of an admitted worker and a
   * due timer that waited longer than the deadline still run. The clock is a direct task queued after them,
   * which does expire: once it did, their deadlines have passed too.
   */
  @Test
  void workerTasksAndDueTimersNeverExpireInLine() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2exp").capacity(1)
        .maxWaitInLine(Duration.ofMillis(20)));
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger ran = new AtomicInteger();
    // A worker that never had a seat does expire waiting for its first (DESIGN section 6): this
    // one had its seat, so it is an admitted unit.
    CountDownLatch admitted = new CountDownLatch(1);
    w.schedule(admitted::countDown);
    assertThat(admitted.await(10, TimeUnit.SECONDS)).isTrue();
    awaitQuiet(p);
    try (Occupied full = Occupied.all(p)) {
      w.schedule(() -> ran.addAndGet(1));
      s.schedule(() -> ran.addAndGet(10), 1, TimeUnit.MILLISECONDS);
      Mono.delay(Duration.ZERO, s).subscribe(x -> ran.addAndGet(100));
      await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> p.stats().waiting() == 3);
      Disposable clock = s.schedule(() -> ran.addAndGet(1000));
      await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> p.stats().expired() == 1);
      // the counter moves before the task hears of its expiry (on a helper thread)
      await().dontCatchUncaughtExceptions().atMost(SAFETY).until(clock::isDisposed);
    }
    await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> ran.get() == 111);
    awaitQuiet(p);
    assertThat(p.stats().expired()).isEqualTo(1);
    assertExact(p.stats(), 0);
  }

  /** A timer scheduled while its worker is being disposed is refused or disposed, never left armed. */
  @Test
  @Tag("stress")
  void timerScheduledRacingWorkerDisposeIsNeverLeftArmed() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2arm").capacity(2));
    Scheduler s = PoolSchedulers.from(p);
    Object root = groupOf(s, PoolScheduler.class);
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1_500);
    int rounds = 0;
    int refused = 0;
    while (System.nanoTime() < end) {
      rounds++;
      Scheduler.Worker w = s.createWorker();
      CountDownLatch start = new CountDownLatch(1);
      Thread disposer = new Thread(() -> {
        Occupied.awaitQuietly(start);
        w.dispose();
      });
      disposer.start();
      start.countDown();
      Disposable d = null;
      try {
        d = (rounds & 1) == 0 ? w.schedule(() -> { }, 1, TimeUnit.HOURS)
            : w.schedulePeriodically(() -> { }, 1, 1, TimeUnit.HOURS);
      } catch (RejectedExecutionException e) {
        refused++;
      }
      disposer.join();
      if (d != null) {
        assertThat(d.isDisposed()).as("round " + rounds).isTrue();
      }
      assertThat(buffered(w)).isZero();
    }
    assertThat(members(root).size()).as("leaked in " + rounds + " rounds, " + refused + " refused")
        .isZero();
    assertThat(((TaskGroup) root).size()).isZero();
  }

  /** An interrupt from disposing a running task must never reach the thread's next task. */
  @Test
  @Tag("stress")
  void interruptOfADisposedRunNeverReachesTheNextTask() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2int").capacity(1));
    Scheduler s = PoolSchedulers.from(p);
    AtomicInteger leaked = new AtomicInteger();
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2_000);
    int rounds = 0;
    while (System.nanoTime() < end) {
      rounds++;
      CountDownLatch started = new CountDownLatch(1);
      Scheduler.Worker w = s.createWorker();
      Disposable d = switch (rounds % 4) {
        case 0 -> w.schedule(started::countDown);
        case 1 -> s.schedule(started::countDown);
        case 2 -> w.schedulePeriodically(started::countDown, 0, 1, TimeUnit.MICROSECONDS);
        default -> s.schedulePeriodically(started::countDown, 0, 0, TimeUnit.MICROSECONDS);
      };
      CountDownLatch checked = new CountDownLatch(1);
      started.await();
      d.dispose(); // races the end of the run
      s.schedule(() -> {
        if (Thread.currentThread().isInterrupted()) {
          leaked.incrementAndGet();
        }
        checked.countDown();
      });
      assertThat(checked.await(10, TimeUnit.SECONDS)).isTrue();
      w.dispose();
    }
    assertThat(leaked.get()).as("leaked interrupts in " + rounds + " rounds").isZero();
  }

  @Test
  void disposingARunningWorkerTaskInterruptsIt() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2ir").capacity(1));
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch interrupted = new CountDownLatch(1);
    Disposable d = w.schedule(() -> {
      started.countDown();
      try {
        new CountDownLatch(1).await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        interrupted.countDown();
      }
    });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    d.dispose();
    assertThat(interrupted.await(10, TimeUnit.SECONDS)).isTrue();
    CountDownLatch next = new CountDownLatch(1);
    AtomicInteger flag = new AtomicInteger();
    w.schedule(() -> {
      flag.set(Thread.currentThread().isInterrupted() ? 1 : 2);
      next.countDown();
    });
    assertThat(next.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(flag.get()).isEqualTo(2);
  }

  // ---- graceful disposal races ----

  @Test
  void disposeGracefullyEndsWhenTheSharedPoolIsShutDownNowUnderAWaitingTask() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2dg").capacity(1));
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    Occupied full = Occupied.all(p);
    s.schedule(() -> { });
    w.schedule(() -> { });
    Mono<Void> graceful = s.disposeGracefully();
    graceful.subscribe();
    List<Runnable> back = p.shutdownNow();
    full.close();
    assertThat(back).hasSize(2);
    graceful.block(SAFETY);
    s.disposeGracefully().block(SAFETY);
    assertThat(s.isDisposed()).isTrue();
    assertThatThrownBy(s::init).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> s.schedule(() -> { })).isInstanceOf(RejectedExecutionException.class);
  }

  @Test
  void disposeGracefullyOfAnOwnedPoolWaitsForAWaitingTaskAndThenTerminatesThePool()
      throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2own").capacity(1));
    Scheduler s = PoolSchedulers.fromOwned(p);
    Occupied full = Occupied.all(p);
    AtomicInteger ran = new AtomicInteger();
    s.schedule(ran::incrementAndGet);
    s.createWorker().schedule(ran::incrementAndGet);
    Mono<Void> g = s.disposeGracefully().cache();
    g.subscribe();
    assertThatThrownBy(() -> s.schedule(() -> { })).isInstanceOf(RejectedExecutionException.class);
    full.close();
    g.block(SAFETY);
    assertThat(ran.get()).isEqualTo(2);
    assertThat(p.isTerminated()).isTrue();
  }

  // ---- Scannable and counters ----

  @Test
  void scannableIsExactAtQuiescence() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2scan").capacity(3));
    Scheduler s = PoolSchedulers.from(p);
    assertThat(Scannable.from(s).scanUnsafe(Scannable.Attr.CAPACITY)).isEqualTo(3);
    assertThat(Scannable.from(s).scanUnsafe(Scannable.Attr.NAME)).isNotNull();
    Scheduler.Worker w = s.createWorker();
    try (Occupied full = Occupied.all(p)) {
      w.schedule(() -> { });
      w.schedule(() -> { });
      s.schedule(() -> { });
      assertThat(buffered(w)).isEqualTo(2);
    }
    awaitQuiet(p);
    assertThat(buffered(w)).isZero();
    assertThat(buffered(s)).isZero();
    assertExact(p.stats(), 0);
  }

  @SuppressWarnings("unchecked")
  private static Set<Object> members(Object group) throws ReflectiveOperationException {
    if (group instanceof MemberSet worker) { // a worker: its compact set
      return Set.of(worker.snapshot());
    }
    Field f = TaskGroup.class.getDeclaredField("members");
    f.setAccessible(true);
    Set<Object> all = new java.util.HashSet<>((Set<Object>) f.get(group)); // direct tasks
    all.addAll(((TaskGroup) group).workers()); // and the live workers
    return all;
  }

  private static Object groupOf(Object owner, Class<?> type) throws ReflectiveOperationException {
    if (owner instanceof PoolWorker worker) {
      return worker; // a worker is the group of its tasks
    }
    Field f = type.getDeclaredField("tasks");
    f.setAccessible(true);
    return f.get(owner);
  }

  @Test
  @Tag("stress")
  void hundredThousandTasksThroughOneWorkerLeaveNothingBehind() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2mem").capacity(2));
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger ran = new AtomicInteger();
    int n = 100_000;
    for (int i = 0; i < n; i++) {
      if (i % 1000 == 0) {
        w.schedule(ran::incrementAndGet, 0, TimeUnit.MILLISECONDS);
      } else {
        Disposable d = w.schedule(ran::incrementAndGet);
        if (i % 7 == 0) {
          d.dispose();
        }
      }
    }
    awaitQuiet(p);
    await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> buffered(w) == 0);
    Object wg = groupOf(w, PoolWorker.class);
    Object root = groupOf(s, PoolScheduler.class);
    assertThat(members(wg)).isEmpty();
    assertThat(members(root)).as("no task; only the live worker's group").containsOnly(wg);
    assertThat(((TaskGroup) root).size()).isZero();
    assertExact(p.stats(), 0);
    // submitted vs ran: see workerTaskDisposedInLine*
  }

  /** Dispose racing every step of a task's life: counters stay exact, containers empty. */
  @Test
  @Tag("stress")
  void disposeRacingTheTaskLifeKeepsCountersExact() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("r2race").capacity(2));
    Scheduler s = PoolSchedulers.from(p);
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2_000);
    int rounds = 0;
    while (System.nanoTime() < end) {
      rounds++;
      Scheduler.Worker w = s.createWorker();
      Disposable[] ds = new Disposable[6];
      ds[0] = w.schedule(() -> { });
      ds[1] = w.schedule(() -> { }, 0, TimeUnit.NANOSECONDS);
      ds[2] = w.schedule(() -> { }, 50, TimeUnit.MICROSECONDS);
      ds[3] = s.schedule(() -> { });
      ds[4] = s.schedule(() -> { }, 50, TimeUnit.MICROSECONDS);
      ds[5] = w.schedulePeriodically(() -> { }, 0, 10, TimeUnit.MICROSECONDS);
      Thread t = new Thread(() -> {
        for (Disposable d : ds) {
          d.dispose();
        }
      });
      t.start();
      if ((rounds & 1) == 0) {
        w.dispose();
      }
      t.join();
      w.dispose();
      for (Disposable d : ds) {
        assertThat(d.isDisposed()).isTrue();
      }
      assertThat(buffered(w)).isZero();
    }
    awaitQuiet(p);
    Object root = groupOf(s, PoolScheduler.class);
    await().dontCatchUncaughtExceptions().atMost(SAFETY).until(() -> ((TaskGroup) root).size() == 0);
    assertThat(members(root)).as("after " + rounds + " rounds").isEmpty();
    assertExact(p.stats(), 0);
    s.disposeGracefully().block(SAFETY);
  }
}
