package dev.warmpool.rxjava3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.PoolStats;
import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.observers.TestObserver;
import io.reactivex.rxjava3.plugins.RxJavaPlugins;
import io.reactivex.rxjava3.subscribers.TestSubscriber;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Adversarial review (r2) of the restructured RxJava adapter: each test forces one interleaving
 * with latches and checks a guarantee of DESIGN sections 4 and 6.
 */
class AdapterReviewTest {
  @RegisterExtension final RxFixture fx = new RxFixture();

  private static ConditionFactory waiting() {
    return await().dontCatchUncaughtExceptions().atMost(Duration.ofSeconds(10));
  }

  private static void quiet(WorkerPool p) {
    waiting().until(() -> p.stats().busy() == 0 && p.stats().waiting() == 0);
  }

  private static void assertExact(PoolStats s, long handedBack) {
    assertThat(s.submitted()).as("submitted == completed + failed + handed back: " + s)
        .isEqualTo(s.completed() + s.failed() + handedBack);
  }

  // ---- guarantee 6: admission once per Worker ----

  @Test
  void workerAdmittedByADelayedTaskIsNeverRejectedLater() throws Exception {
    WorkerPool p = fx.nonblocking(1);
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    CountDownLatch ran = new CountDownLatch(1);
    w.schedule(ran::countDown, 1, TimeUnit.MILLISECONDS);
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    quiet(p);
    CountDownLatch later = new CountDownLatch(1);
    CountDownLatch hold = fx.saturate(p);
    Disposable d = w.schedule(later::countDown);
    assertThat(d.isDisposed()).isFalse();
    hold.countDown();
    assertThat(later.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(fx.errors).isEmpty();
    w.dispose();
  }

  @Test
  void conventionalRejectionIsReportedOncePerWorkerAndReturnsDisposed() throws Exception {
    WorkerPool p = fx.nonblocking(1);
    Scheduler s = PoolSchedulers.from(p);
    CountDownLatch hold = fx.saturate(p);
    assertThat(s.scheduleDirect(() -> { }).isDisposed()).isTrue();
    assertThat(fx.errors).hasSize(1);
    assertThat(fx.errors.get(0)).hasCauseInstanceOf(PoolOverloadedException.class);
    Scheduler.Worker w = s.createWorker();
    assertThat(w.schedule(() -> { }).isDisposed()).isTrue();
    assertThat(w.schedule(() -> { }).isDisposed()).isTrue();
    assertThat(fx.errors).as("one unit, refused once").hasSize(2);
    assertThat(w.isDisposed()).isTrue();
    hold.countDown();
    quiet(p);
    assertExact(p.stats(), 0);
  }

  @Test
  void transformersSurfaceARejectionAsOnError() throws Exception {
    WorkerPool p = fx.nonblocking(1);
    CountDownLatch hold = fx.saturate(p);
    TestObserver<Integer> single = Single.just(1)
        .compose(PoolTransformers.<Integer>subscribeOn(p)).test();
    TestSubscriber<Integer> flow = Flowable.just(1, 2)
        .compose(PoolTransformers.<Integer>observeOn(p)).test();
    single.awaitDone(10, TimeUnit.SECONDS).assertError(PoolOverloadedException.class);
    flow.awaitDone(10, TimeUnit.SECONDS).assertError(PoolOverloadedException.class);
    hold.countDown();
    assertThat(fx.errors).isEmpty();
  }

  /**
   * Guarantee 7: a timer is never refused for load. {@code Single.timer(0, ...)} is a timer whose
   * delay is zero; the Reactor adapter treats {@code Mono.delay(ZERO)} as a timer (it waits its
   * turn), the RxJava adapter as an immediate task.
   */
  @Test
  void zeroDelayTimerIsNotRefusedForLoad() throws Exception {
    WorkerPool p = fx.nonblocking(1);
    Scheduler s = PoolSchedulers.from(p);
    CountDownLatch hold = fx.saturate(p);
    TestObserver<Long> timer = Single.timer(0, TimeUnit.MILLISECONDS, s).test();
    assertThat(fx.errors).as("a zero-delay timer refused for load").isEmpty();
    hold.countDown();
    timer.awaitDone(10, TimeUnit.SECONDS).assertValue(0L);
  }

  // ---- guarantee 7: timers at shutdown ----

  @Test
  void dueTimersWaitingInLineRunUnderGracefulShutdown() throws Exception {
    WorkerPool p = fx.pool(b -> b.capacity(1));
    Scheduler s = PoolSchedulers.from(p);
    CountDownLatch hold = fx.saturate(p);
    TestObserver<Long> timer = Single.timer(1, TimeUnit.MILLISECONDS, s).test();
    Scheduler.Worker w = s.createWorker();
    CountDownLatch workerTimer = new CountDownLatch(1);
    w.schedule(workerTimer::countDown, 1, TimeUnit.MILLISECONDS);
    waiting().until(() -> p.stats().waiting() == 2);
    p.shutdown();
    hold.countDown();
    timer.awaitDone(10, TimeUnit.SECONDS).assertValue(0L);
    assertThat(workerTimer.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(p.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertExact(p.stats(), 0);
    assertThat(fx.errors).isEmpty();
  }

  @Test
  void timersNotDueAreReleasedWhenThePoolShutsDown() throws Exception {
    WorkerPool p = fx.pool(b -> b.capacity(1));
    PoolScheduler s = (PoolScheduler) PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    Disposable direct = s.scheduleDirect(() -> { }, 1, TimeUnit.HOURS);
    Disposable periodic = s.schedulePeriodicallyDirect(() -> { }, 1, 1, TimeUnit.HOURS);
    Disposable ofWorker = w.schedule(() -> { }, 1, TimeUnit.HOURS);
    Disposable workerPeriodic = w.schedulePeriodically(() -> { }, 1, 1, TimeUnit.HOURS);
    p.shutdown();
    assertThat(p.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(direct.isDisposed()).isTrue();
    assertThat(periodic.isDisposed()).isTrue();
    assertThat(ofWorker.isDisposed()).isTrue();
    assertThat(workerPeriodic.isDisposed()).isTrue();
    assertThat(s.liveCount()).as("direct timers still tracked").isEqualTo(1); // the worker
    // PoolScope streams hear of it
    TestObserver<Long> scoped = PoolScope.single(p, sch -> Single.timer(1, TimeUnit.HOURS, sch))
        .test();
    scoped.awaitDone(10, TimeUnit.SECONDS).assertError(RuntimeException.class);
  }

  private void periodicAtShutdown(boolean ofWorker) throws Exception {
    WorkerPool p = fx.pool(b -> b.capacity(1));
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    CountDownLatch inRun = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger runs = new AtomicInteger();
    Runnable body = () -> {
      if (runs.incrementAndGet() == 1) {
        inRun.countDown();
        RxFixture.awaitQuietly(release);
      }
    };
    Disposable d = ofWorker
        ? w.schedulePeriodically(body, 0, 1, TimeUnit.MILLISECONDS)
        : s.schedulePeriodicallyDirect(body, 0, 1, TimeUnit.MILLISECONDS);
    assertThat(inRun.await(10, TimeUnit.SECONDS)).isTrue();
    p.shutdown(); // while the first run is in progress
    release.countDown();
    assertThat(p.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    waiting().until(d::isDisposed);
    assertThat(runs.get()).isEqualTo(1);
    // guarantee 7: the next run, not yet due, completes cancelled; the conventional scheduler
    // drops a timer cancelled by the shutdown (PoolScheduler.cancelledByPool): no error either
    assertThat(fx.errors).as("a graceful shutdown is not an error").isEmpty();
  }

  @Test
  void directPeriodicRunningWhenThePoolShutsDownEndsQuietly() throws Exception {
    periodicAtShutdown(false);
  }

  @Test
  void workerPeriodicRunningWhenThePoolShutsDownEndsQuietly() throws Exception {
    periodicAtShutdown(true);
  }

  // ---- guarantee 8: failures ----

  private interface Scheduling {
    Disposable apply(Scheduler s, Scheduler.Worker w, Runnable r);
  }

  private void failureRule(Scheduling how, boolean explicitHandler) throws Exception {
    fx.errors.clear();
    AtomicInteger handler = new AtomicInteger();
    AtomicInteger onSchedule = new AtomicInteger();
    RxJavaPlugins.setScheduleHandler(r -> {
      onSchedule.incrementAndGet();
      return r;
    });
    WorkerPool p = fx.pool(b -> {
      b.capacity(2);
      return explicitHandler ? b.failureHandler((t, e) -> handler.incrementAndGet()) : b;
    });
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger runs = new AtomicInteger();
    Disposable d = how.apply(s, w, () -> {
      runs.incrementAndGet();
      throw new IllegalStateException("boom");
    });
    waiting().until(() -> runs.get() >= 1 && p.stats().failed() >= 1);
    quiet(p);
    d.dispose();
    w.dispose();
    assertThat(runs.get()).as("a failed run ends the task, periodic too").isEqualTo(1);
    assertThat(p.stats().failed()).isEqualTo(1);
    if (explicitHandler) {
      assertThat(handler.get()).isEqualTo(1);
      assertThat(fx.errors).isEmpty();
    } else {
      assertThat(fx.errors).hasSize(1);
    }
    assertThat(onSchedule.get()).isEqualTo(1);
    assertExact(p.stats(), 0);
    RxJavaPlugins.setScheduleHandler(null);
  }

  @Test
  void failuresOfEveryKindAreCountedAndReportedOnce() throws Exception {
    for (boolean h : new boolean[] {false, true}) {
      failureRule((s, w, r) -> s.scheduleDirect(r), h);
      failureRule((s, w, r) -> s.scheduleDirect(r, 1, TimeUnit.MILLISECONDS), h);
      failureRule((s, w, r) -> s.schedulePeriodicallyDirect(r, 0, 1, TimeUnit.MILLISECONDS), h);
      failureRule((s, w, r) -> w.schedule(r), h);
      failureRule((s, w, r) -> w.schedule(r, 1, TimeUnit.MILLISECONDS), h);
      failureRule((s, w, r) -> w.schedulePeriodically(r, 0, 1, TimeUnit.MILLISECONDS), h);
    }
  }

  // ---- dispose at each step ----

  @Test
  void disposeDuringTheHandOffWithdrawsTheTask() throws Exception {
    for (int kind = 0; kind < 4; kind++) {
      CountDownLatch inHandOff = new CountDownLatch(1);
      CountDownLatch disposed = new CountDownLatch(1);
      AtomicReference<Runnable> seen = new AtomicReference<>();
      WorkerPool p = fx.pool(b -> b.capacity(1).taskDecorator(r -> {
        if (r instanceof Disposable && seen.compareAndSet(null, r)) {
          inHandOff.countDown();
          RxFixture.awaitQuietly(disposed);
        }
        return r;
      }));
      Scheduler s = PoolSchedulers.from(p);
      Scheduler.Worker w = s.createWorker();
      CountDownLatch hold = fx.saturate(p);
      AtomicInteger ran = new AtomicInteger();
      int k = kind;
      Thread t = new Thread(() -> {
        switch (k) {
          case 0 -> s.scheduleDirect(ran::incrementAndGet);
          case 1 -> w.schedule(ran::incrementAndGet);
          case 2 -> s.scheduleDirect(ran::incrementAndGet, 1, TimeUnit.MILLISECONDS);
          default -> w.schedule(ran::incrementAndGet, 1, TimeUnit.MILLISECONDS);
        }
      });
      t.start();
      assertThat(inHandOff.await(10, TimeUnit.SECONDS)).isTrue();
      ((Disposable) seen.get()).dispose();
      disposed.countDown();
      t.join(10_000);
      hold.countDown();
      quiet(p);
      assertThat(ran.get()).as("kind " + k).isZero();
      assertThat(((PoolScheduler) s).liveCount()).as("kind " + k).isLessThanOrEqualTo(1);
      assertExact(p.stats(), 0);
    }
    assertThat(fx.errors).isEmpty();
  }

  /** The worker's only queued task is disposed: the lane must leave the line (guarantee 13). */
  @Test
  void disposedOnlyTaskOfAWorkerGivesUpTheLanesPlaceInLine() throws Exception {
    WorkerPool p = fx.pool(b -> b.capacity(1).maxWaiting(1));
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger ran = new AtomicInteger();
    CountDownLatch hold = fx.saturate(p);
    Disposable a = w.schedule(() -> ran.addAndGet(1));
    a.dispose();
    assertThat(a.isDisposed()).isTrue();
    Disposable b = s.scheduleDirect(() -> ran.addAndGet(10));
    assertThat(fx.errors).as("a live task refused for a dead one's place in line").isEmpty();
    assertThat(b.isDisposed()).isFalse();
    hold.countDown();
    waiting().until(() -> ran.get() == 10);
  }

  @Test
  void disposedDueTimerLeavesTheLineAtOnce() throws Exception {
    for (int kind = 0; kind < 4; kind++) {
      WorkerPool p = fx.pool(b -> b.capacity(1));
      PoolScheduler s = (PoolScheduler) PoolSchedulers.from(p);
      Scheduler.Worker w = s.createWorker();
      AtomicInteger ran = new AtomicInteger();
      CountDownLatch hold = fx.saturate(p);
      Disposable d = switch (kind) {
        case 0 -> s.scheduleDirect(ran::incrementAndGet, 1, TimeUnit.MILLISECONDS);
        case 1 -> w.schedule(ran::incrementAndGet, 1, TimeUnit.MILLISECONDS);
        case 2 -> s.schedulePeriodicallyDirect(ran::incrementAndGet, 1, 1, TimeUnit.MILLISECONDS);
        default -> w.schedulePeriodically(ran::incrementAndGet, 1, 1, TimeUnit.MILLISECONDS);
      };
      waiting().until(() -> p.stats().waiting() == 1);
      d.dispose();
      assertThat(d.isDisposed()).isTrue();
      assertThat(p.stats().waiting()).as("kind " + kind).isZero();
      hold.countDown();
      quiet(p);
      assertThat(ran.get()).as("kind " + kind).isZero();
      assertExact(p.stats(), 0);
      w.dispose();
      assertThat(s.liveCount()).as("kind " + kind).isZero();
    }
    assertThat(fx.errors).isEmpty();
  }

  @Test
  void disposedWorkerLeavesTheLineAtOnce() throws Exception {
    WorkerPool p = fx.pool(b -> b.capacity(1));
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger ran = new AtomicInteger();
    CountDownLatch hold = fx.saturate(p);
    Disposable a = w.schedule(ran::incrementAndGet);
    w.schedule(ran::incrementAndGet, 1, TimeUnit.MILLISECONDS);
    assertThat(p.stats().waiting()).isEqualTo(1);
    w.dispose();
    assertThat(a.isDisposed()).isTrue();
    assertThat(p.stats().waiting()).isZero();
    hold.countDown();
    quiet(p);
    assertThat(ran.get()).isZero();
    assertExact(p.stats(), 0);
    assertThat(fx.errors).isEmpty();
  }

  /** Guarantee 13: a cancelled lane task counts in none of submitted, completed, failed. */
  @Test
  void disposedWorkerTaskCountsInNoneOfTheCounters() throws Exception {
    WorkerPool p = fx.pool(b -> b.capacity(1));
    Scheduler.Worker w = PoolSchedulers.from(p).createWorker();
    AtomicInteger ran = new AtomicInteger();
    CountDownLatch hold = fx.saturate(p);
    Disposable a = w.schedule(ran::incrementAndGet);
    w.schedule(ran::incrementAndGet);
    a.dispose();
    hold.countDown();
    waiting().until(() -> ran.get() == 1);
    quiet(p);
    PoolStats st = p.stats();
    assertExact(st, 0);
    assertThat(st.completed()).as("the blocker and the one task that ran: " + st).isEqualTo(2);
  }

  @Test
  void hostileThreadFactoryCostsAtMostOneTask() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    WorkerPool p = fx.pool(b -> b.capacity(2).threadFactory(r -> {
      if (calls.incrementAndGet() == 1) {
        throw new IllegalStateException("no thread for you");
      }
      return new Thread(r);
    }));
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger ran = new AtomicInteger();
    Disposable first = w.schedule(ran::incrementAndGet);
    int lost = fx.errors.size();
    assertThat(lost).isLessThanOrEqualTo(1);
    Scheduler.Worker w2 = lost == 1 ? s.createWorker() : w;
    w2.schedule(ran::incrementAndGet);
    s.scheduleDirect(ran::incrementAndGet);
    waiting().until(() -> ran.get() == 3 - lost);
    quiet(p);
    assertThat(first.isDisposed()).isTrue();
    assertExact(p.stats(), 0);
  }

  /** Guarantee 6 through the transformer: a stream admitted earlier is never rejected. */
  @Test
  void observeOnStreamAdmittedBeforeThePoolFilledKeepsGoing() throws Exception {
    WorkerPool p = fx.nonblocking(1);
    io.reactivex.rxjava3.processors.PublishProcessor<Integer> src =
        io.reactivex.rxjava3.processors.PublishProcessor.create();
    TestSubscriber<Integer> ts = src.compose(PoolTransformers.<Integer>observeOn(p)).test();
    src.onNext(1);
    waiting().until(() -> ts.values().size() == 1);
    quiet(p);
    CountDownLatch hold = fx.saturate(p);
    src.onNext(2);
    src.onComplete();
    ts.assertNoErrors();
    hold.countDown();
    ts.awaitDone(10, TimeUnit.SECONDS).assertValues(1, 2).assertComplete();
    assertThat(fx.errors).isEmpty();
  }

  /** Guarantee 7 inside a PoolScope: a positive delay on a full nonblocking pool waits its turn. */
  @Test
  void scopedTimersOnAFullPoolWaitTheirTurn() throws Exception {
    WorkerPool p = fx.nonblocking(1);
    CountDownLatch hold = fx.saturate(p);
    TestObserver<Long> t = PoolScope.single(p, s -> Single.timer(1, TimeUnit.MILLISECONDS, s))
        .test();
    TestSubscriber<Long> iv = PoolScope.flowable(p, s -> Flowable.interval(1, 1,
        TimeUnit.MILLISECONDS, s).take(3)).test();
    waiting().until(() -> p.stats().waiting() >= 1);
    t.assertNoErrors();
    iv.assertNoErrors();
    hold.countDown();
    t.awaitDone(10, TimeUnit.SECONDS).assertValue(0L);
    iv.awaitDone(10, TimeUnit.SECONDS).assertValues(0L, 1L, 2L);
    assertThat(fx.errors).isEmpty();
  }

  /**
   * The scheduling thread is paused inside the hand-off (the pool's task decorator) while the
   * worker, the scheduler or the pool is closed: the task is refused, runs, or ends; the line
   * empties and counters stay exact.
   */
  @Test
  void closeDuringTheHandOff() throws Exception {
    for (int closer = 0; closer < 4; closer++) {
      for (int kind = 0; kind < 4; kind++) {
        CountDownLatch inHandOff = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        AtomicReference<Runnable> seen = new AtomicReference<>();
        WorkerPool p = fx.pool(b -> b.capacity(1).taskDecorator(r -> {
          if (r instanceof Disposable && seen.compareAndSet(null, r)) {
            inHandOff.countDown();
            RxFixture.awaitQuietly(go);
          }
          return r;
        }));
        PoolScheduler s = (PoolScheduler) PoolSchedulers.from(p);
        Scheduler.Worker w = s.createWorker();
        AtomicInteger ran = new AtomicInteger();
        AtomicReference<Disposable> outcome = new AtomicReference<>();
        int k = kind;
        Thread t = new Thread(() -> outcome.set(switch (k) {
          case 0 -> s.scheduleDirect(ran::incrementAndGet);
          case 1 -> w.schedule(ran::incrementAndGet);
          case 2 -> s.scheduleDirect(ran::incrementAndGet, 1, TimeUnit.MILLISECONDS);
          default -> w.schedule(ran::incrementAndGet, 1, TimeUnit.MILLISECONDS);
        }));
        t.start();
        assertThat(inHandOff.await(10, TimeUnit.SECONDS)).isTrue();
        java.util.List<Runnable> back = java.util.List.of();
        switch (closer) {
          case 0 -> w.dispose();
          case 1 -> s.shutdown();
          case 2 -> p.shutdown();
          default -> back = p.shutdownNow();
        }
        go.countDown();
        t.join(10_000);
        String where = "closer " + closer + " kind " + kind + " outcome " + outcome.get();
        assertThat(outcome.get()).as(where).isNotNull();
        if (closer >= 2) {
          assertThat(p.awaitTermination(10, TimeUnit.SECONDS)).as(where).isTrue();
        } else {
          quiet(p);
        }
        assertThat(ran.get()).as(where).isLessThanOrEqualTo(1);
        if (closer == 0 && (kind & 1) == 1) {
          assertThat(ran.get()).as(where).isZero();
        }
        if (back.isEmpty()) {
          waiting().alias(where).until(() -> outcome.get().isDisposed());
        }
        assertExact(p.stats(), back.size());
        assertThat(p.stats().waiting()).as(where).isZero();
        w.dispose();
        waiting().alias(where).until(() -> s.liveCount() == 0);
      }
    }
    assertThat(fx.errors).allMatch(e -> e.getCause() instanceof
        java.util.concurrent.RejectedExecutionException);
  }

  /** An owning scheduler: shutdown lets accepted work run, start() reopens it once terminated. */
  @Test
  void owningSchedulerShutdownAndRestart() throws Exception {
    WorkerPool p = fx.pool(b -> b.capacity(1));
    Scheduler s = PoolSchedulers.fromOwned(p);
    Scheduler.Worker w = s.createWorker();
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch started = new CountDownLatch(1);
    AtomicInteger ran = new AtomicInteger();
    s.scheduleDirect(() -> {
      started.countDown();
      RxFixture.awaitQuietly(release);
    });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    w.schedule(ran::incrementAndGet); // accepted: waits in line
    s.scheduleDirect(ran::incrementAndGet, 1, TimeUnit.MILLISECONDS);
    waiting().until(() -> p.stats().waiting() == 2); // the timer came due
    s.shutdown();
    s.start(); // not terminated yet: stays shut down
    assertThat(s.scheduleDirect(ran::incrementAndGet).isDisposed()).isTrue();
    release.countDown();
    assertThat(p.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ran.get()).as("accepted work and the due timer ran").isEqualTo(2);
    s.start();
    CountDownLatch again = new CountDownLatch(1);
    s.createWorker().schedule(again::countDown);
    assertThat(again.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(fx.errors).isEmpty();
  }

  /**
   * Worker tasks and due timers never expire in line (PoolTransformers' doc: a worker does not
   * expire; guarantee 7: a due timer is admitted work). The clock is a direct task queued after
   * them, which does expire.
   */
  @Test
  void workerTasksAndDueTimersNeverExpireInLine() throws Exception {
    WorkerPool p = fx.pool(b -> b.capacity(1).maxWaitInLine(Duration.ofMillis(20)));
    Scheduler s = PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger ran = new AtomicInteger();
    CountDownLatch hold = fx.saturate(p);
    w.schedule(() -> ran.addAndGet(1));
    s.scheduleDirect(() -> ran.addAndGet(10), 1, TimeUnit.MILLISECONDS);
    w.schedule(() -> ran.addAndGet(100), 1, TimeUnit.MILLISECONDS);
    waiting().until(() -> p.stats().waiting() == 2); // the lane holds one place
    Disposable clock = s.scheduleDirect(() -> ran.addAndGet(1000));
    waiting().until(() -> p.stats().expired() >= 1);
    hold.countDown();
    quiet(p);
    assertThat(ran.get()).as("expired " + p.stats().expired() + " clock " + clock.isDisposed())
        .isEqualTo(111);
    // The expiry is counted at once; the task hears of it on a helper thread (no user code on the
    // timer thread), so its Disposable reads disposed a moment later (1.4 and 38 ms seen).
    waiting().until(clock::isDisposed);
    quiet(p);
    assertExact(p.stats(), 0);
  }

  /** Two threads rejected on one never-admitted worker: the unit is reported once. */
  @Test
  @Tag("stress")
  void concurrentRejectionsOfOneWorkerAreReportedOnce() throws Exception {
    WorkerPool p = fx.nonblocking(1);
    Scheduler s = PoolSchedulers.from(p);
    CountDownLatch hold = fx.saturate(p);
    for (int round = 0; round < 300; round++) {
      fx.errors.clear();
      Scheduler.Worker w = s.createWorker();
      CountDownLatch start = new CountDownLatch(1);
      Thread other = new Thread(() -> {
        RxFixture.awaitQuietly(start);
        w.schedule(() -> { });
      });
      other.start();
      start.countDown();
      w.schedule(() -> { });
      other.join();
      assertThat(fx.errors).as("round " + round).hasSize(1);
      assertThat(w.isDisposed()).isTrue();
    }
    hold.countDown();
  }

  /** A timer scheduled while its worker is being disposed is refused or disposed, never armed. */
  @Test
  @Tag("stress")
  void timerScheduledRacingWorkerDisposeIsNeverLeftArmed() throws Exception {
    WorkerPool p = fx.pool(b -> b.capacity(2));
    PoolScheduler s = (PoolScheduler) PoolSchedulers.from(p);
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    int rounds = 0;
    while (System.nanoTime() < end) {
      rounds++;
      Scheduler.Worker w = s.createWorker();
      CountDownLatch start = new CountDownLatch(1);
      Thread disposer = new Thread(() -> {
        RxFixture.awaitQuietly(start);
        w.dispose();
      });
      disposer.start();
      start.countDown();
      Disposable d = (rounds & 1) == 0 ? w.schedule(() -> { }, 1, TimeUnit.HOURS)
          : w.schedulePeriodically(() -> { }, 1, 1, TimeUnit.HOURS);
      disposer.join();
      assertThat(d.isDisposed()).as("round " + rounds).isTrue();
    }
    assertThat(s.liveCount()).as(rounds + " rounds").isZero();
    assertThat(fx.errors).isEmpty();
  }

  @Test
  @Tag("stress")
  void hundredThousandTasksThroughOneWorkerLeaveNothingBehind() throws Exception {
    WorkerPool p = fx.pool(b -> b.capacity(2));
    PoolScheduler s = (PoolScheduler) PoolSchedulers.from(p);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger ran = new AtomicInteger();
    for (int i = 0; i < 100_000; i++) {
      if (i % 1000 == 0) {
        w.schedule(ran::incrementAndGet, 1, TimeUnit.MICROSECONDS);
        s.scheduleDirect(ran::incrementAndGet, 1, TimeUnit.MICROSECONDS);
      } else {
        Disposable d = w.schedule(ran::incrementAndGet);
        if (i % 7 == 0) {
          d.dispose();
        }
      }
    }
    quiet(p);
    waiting().until(() -> s.liveCount() <= 1);
    assertExact(p.stats(), 0);
    w.dispose();
    assertThat(s.liveCount()).isZero();
    assertThat(fx.errors).isEmpty();
  }

  @Test
  @Tag("stress")
  void disposeRacingTheTaskLifeKeepsCountersExact() throws Exception {
    WorkerPool p = fx.pool(b -> b.capacity(2));
    PoolScheduler s = (PoolScheduler) PoolSchedulers.from(p);
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
    int rounds = 0;
    while (System.nanoTime() < end) {
      rounds++;
      Scheduler.Worker w = s.createWorker();
      Disposable[] ds = new Disposable[6];
      ds[0] = w.schedule(() -> { });
      ds[1] = w.schedule(() -> { }, 50, TimeUnit.MICROSECONDS);
      ds[2] = w.schedulePeriodically(() -> { }, 0, 10, TimeUnit.MICROSECONDS);
      ds[3] = s.scheduleDirect(() -> { });
      ds[4] = s.scheduleDirect(() -> { }, 50, TimeUnit.MICROSECONDS);
      ds[5] = s.schedulePeriodicallyDirect(() -> { }, 0, 10, TimeUnit.MICROSECONDS);
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
    }
    quiet(p);
    waiting().until(() -> s.liveCount() == 0);
    assertExact(p.stats(), 0);
    assertThat(fx.errors).as("after " + rounds + " rounds").isEmpty();
  }

  @Test
  void shutdownThenStartReopensTheScheduler() throws Exception {
    WorkerPool p = fx.pool(b -> b.capacity(1));
    Scheduler s = PoolSchedulers.from(p);
    Disposable pending = s.scheduleDirect(() -> { }, 1, TimeUnit.HOURS);
    s.shutdown();
    assertThat(pending.isDisposed()).isTrue();
    assertThat(s.scheduleDirect(() -> { }).isDisposed()).isTrue();
    s.start();
    CountDownLatch ran = new CountDownLatch(1);
    s.scheduleDirect(ran::countDown);
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    quiet(p);
    assertExact(p.stats(), 0);
  }
}
