package dev.warmpool.rxjava3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.disposables.SerialDisposable;
import io.reactivex.rxjava3.exceptions.UndeliverableException;
import io.reactivex.rxjava3.internal.functions.Functions;
import io.reactivex.rxjava3.plugins.RxJavaPlugins;
import io.reactivex.rxjava3.schedulers.SchedulerRunnableIntrospection;
import io.reactivex.rxjava3.subscribers.TestSubscriber;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What RxJava's own scheduler test suites expect of any {@link Scheduler} (the abstract scheduler
 * and concurrency suites, and the executor-scheduler suite run with this scheduler in place of
 * {@code Schedulers.from(executor)}), checked against {@code PoolSchedulers.from(pool)}. Each test
 * states one expectation in its name; correctness waits on latches and pool quiescence only.
 */
class SchedulerContractTest {
  @RegisterExtension
  final RxFixture fx = new RxFixture();

  private Scheduler scheduler() {
    return PoolSchedulers.from(fx.pool(b -> b.capacity(4)));
  }

  private static void await5s(CountDownLatch latch) {
    try {
      assertThat(latch.await(5, TimeUnit.SECONDS)).as("latch released within 5 s").isTrue();
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  // ---- worker ordering ----------------------------------------------------------------------

  @Test
  void aTaskScheduledFromAWorkerTaskRunsAfterItNotInsideIt() {
    Scheduler.Worker w = scheduler().createWorker();
    List<String> log = new CopyOnWriteArrayList<>();
    CountDownLatch done = new CountDownLatch(1);
    Runnable innermost = () -> {
      log.add("c+");
      log.add("c-");
      done.countDown();
    };
    Runnable middle = () -> {
      log.add("b+");
      w.schedule(innermost);
      log.add("b-");
    };
    w.schedule(() -> {
      log.add("a+");
      w.schedule(middle);
      log.add("a-");
    });
    await5s(done);
    assertThat(log).containsExactly("a+", "a-", "b+", "b-", "c+", "c-");
    w.dispose();
  }

  @Test
  void nestedSubscribeOnInsideFlatMapDeliversEveryItem() {
    Scheduler s = scheduler();
    List<String> out = Flowable.just(1, 2).subscribeOn(s)
        .flatMap(id -> Flowable.just("x" + id, "y" + id).subscribeOn(s).map(v -> v + "!"))
        .toList().blockingGet();
    assertThat(out).containsExactlyInAnyOrder("x1!", "y1!", "x2!", "y2!");
  }

  @Test
  void delayedWorkerTasksRunInDeadlineOrderAfterImmediateOnes() {
    Scheduler.Worker w = scheduler().createWorker();
    List<String> log = new CopyOnWriteArrayList<>();
    CountDownLatch done = new CountDownLatch(1);
    w.schedule(() -> {
      w.schedule(() -> log.add("now1"));
      w.schedule(() -> log.add("late"), 90, TimeUnit.MILLISECONDS);
      w.schedule(() -> log.add("soon"), 30, TimeUnit.MILLISECONDS);
      w.schedule(() -> log.add("now2"));
      w.schedule(done::countDown, 120, TimeUnit.MILLISECONDS);
    });
    await5s(done);
    assertThat(log).containsExactly("now1", "now2", "soon", "late");
    w.dispose();
  }

  @Test
  void aWorkerTaskReschedulingItselfRunsAHundredTimes() {
    Scheduler.Worker w = scheduler().createWorker();
    assertReschedulingItselfRunsAHundredTimes(w, w::schedule);
    w.dispose();
  }

  @Test
  void aWorkerTaskReschedulingItselfWithADelayRunsAHundredTimes() {
    Scheduler.Worker w = scheduler().createWorker();
    assertReschedulingItselfRunsAHundredTimes(w, r -> w.schedule(r, 1, TimeUnit.MILLISECONDS));
    w.dispose();
  }

  /** Schedules a task on the worker that schedules itself again with {@code reschedule} 99 times. */
  private static void assertReschedulingItselfRunsAHundredTimes(Scheduler.Worker w,
      Function<Runnable, Disposable> reschedule) {
    AtomicInteger n = new AtomicInteger();
    CountDownLatch done = new CountDownLatch(1);
    w.schedule(new Runnable() {
      @Override
      public void run() {
        if (n.incrementAndGet() < 100) {
          reschedule.apply(this);
        } else {
          done.countDown();
        }
      }
    });
    await5s(done);
    assertThat(n).hasValue(100);
  }

  @Test
  void tasksOfOneWorkerNeverOverlapEvenWhenScheduledFromManyThreads() throws Exception {
    Scheduler.Worker w = scheduler().createWorker();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    int threads = 4;
    int perThread = 2_000;
    CountDownLatch done = new CountDownLatch(threads * perThread);
    List<Thread> producers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread p = new Thread(() -> {
        for (int i = 0; i < perThread; i++) {
          w.schedule(() -> {
            if (inside.incrementAndGet() != 1) {
              overlaps.incrementAndGet();
            }
            Thread.onSpinWait();
            inside.decrementAndGet();
            done.countDown();
          });
        }
      });
      producers.add(p);
      p.start();
    }
    for (Thread p : producers) {
      p.join();
    }
    await5s(done);
    assertThat(overlaps).hasValue(0);
    w.dispose();
  }

  @Test
  void observeOnNeverCallsOnNextConcurrently() {
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    TestSubscriber<Integer> ts = Flowable.range(0, 5_000).observeOn(scheduler())
        .doOnNext(v -> {
          if (inside.incrementAndGet() != 1) {
            overlaps.incrementAndGet();
          }
          inside.decrementAndGet();
        })
        .test();
    ts.awaitDone(5, TimeUnit.SECONDS).assertValueCount(5_000).assertComplete();
    assertThat(overlaps).hasValue(0);
  }

  @Test
  void subscribeOnRunsTheSourceAsynchronouslyOnAnotherThread() {
    Thread caller = Thread.currentThread();
    CountDownLatch gate = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(5);
    List<Thread> seen = new CopyOnWriteArrayList<>();
    Flowable.just(1, 2, 3, 4, 5).subscribeOn(scheduler()).subscribe(v -> {
      RxFixture.awaitQuietly(gate);
      seen.add(Thread.currentThread());
      done.countDown();
    });
    assertThat(seen).isEmpty(); // subscribe returned while the first item waits on the gate
    gate.countDown();
    await5s(done);
    assertThat(seen).hasSize(5).doesNotContain(caller);
  }

  // ---- worker disposal ----------------------------------------------------------------------

  @Test
  void disposingAWorkerFromOutsideStopsARecursiveTask() {
    WorkerPool pool = fx.pool(b -> b.capacity(4));
    Scheduler.Worker w = PoolSchedulers.from(pool).createWorker();
    Recursion recursion = new Recursion(w::schedule, Recursion::pause).start();
    await5s(recursion.tenth);
    w.dispose();
    recursion.resume();
    await().until(() -> recursion.afterDispose.get() != null);
    RxFixture.awaitQuiet(pool);
    assertThat(recursion.afterDispose.get()).isSameAs(Disposable.disposed());
    assertThat(recursion.count).hasValue(10);
  }

  @Test
  void disposingAWorkerFromItsOwnTaskStopsTheRecursion() {
    WorkerPool pool = fx.pool(b -> b.capacity(4));
    Scheduler.Worker w = PoolSchedulers.from(pool).createWorker();
    Recursion recursion = new Recursion(w::schedule, self -> w.dispose()).start();
    await().until(() -> recursion.afterDispose.get() != null);
    RxFixture.awaitQuiet(pool);
    assertThat(recursion.afterDispose.get()).isSameAs(Disposable.disposed());
    assertThat(recursion.count).hasValue(10);
    assertThat(w.isDisposed()).isTrue();
  }

  @Test
  void disposingAWorkerStopsADelayedRecursion() {
    WorkerPool pool = fx.pool(b -> b.capacity(4));
    Scheduler.Worker w = PoolSchedulers.from(pool).createWorker();
    Recursion recursion =
        new Recursion(r -> w.schedule(r, 1, TimeUnit.MILLISECONDS), Recursion::pause).start();
    await5s(recursion.tenth);
    w.dispose();
    recursion.resume();
    await().until(() -> recursion.afterDispose.get() != null);
    assertThat(recursion.afterDispose.get()).isSameAs(Disposable.disposed());
    assertThat(recursion.count).hasValue(10);
  }

  /**
   * A worker task that schedules itself again through {@code schedule}, from its first run on
   * ({@link #start}); its tenth run does {@code atTheTenthRun}, then schedules itself once more and
   * keeps that {@link Disposable} in {@link #afterDispose}, and stops.
   */
  private static final class Recursion implements Runnable {
    final AtomicInteger count = new AtomicInteger();
    final CountDownLatch tenth = new CountDownLatch(1);
    final AtomicReference<Disposable> afterDispose = new AtomicReference<>();
    private final CountDownLatch resumed = new CountDownLatch(1);
    private final Function<Runnable, Disposable> schedule;
    private final Consumer<Recursion> atTheTenthRun;

    Recursion(Function<Runnable, Disposable> schedule, Consumer<Recursion> atTheTenthRun) {
      this.schedule = schedule;
      this.atTheTenthRun = atTheTenthRun;
    }

    /** For the tenth run: counts {@link #tenth} down and waits for {@link #resume}. */
    void pause() {
      tenth.countDown();
      RxFixture.awaitQuietly(resumed);
    }

    Recursion start() {
      schedule.apply(this);
      return this;
    }

    void resume() {
      resumed.countDown();
    }

    @Override
    public void run() {
      if (count.incrementAndGet() == 10) {
        atTheTenthRun.accept(this);
        afterDispose.set(schedule.apply(this));
        return;
      }
      schedule.apply(this);
    }
  }

  @Test
  void cancellingASubscriptionDisposesTheWorkerOfARecursiveSource() {
    Scheduler.Worker w = scheduler().createWorker();
    CountDownLatch tenItems = new CountDownLatch(10);
    CountDownLatch cancelled = new CountDownLatch(1);
    Flowable<Integer> source = Flowable.unsafeCreate(sub -> {
      sub.onSubscribe(new org.reactivestreams.Subscription() {
        @Override
        public void request(long n) { }

        @Override
        public void cancel() {
          w.dispose();
          cancelled.countDown();
        }
      });
      w.schedule(new Runnable() {
        @Override
        public void run() {
          sub.onNext(1);
          tenItems.countDown();
          w.schedule(this);
        }
      });
    });
    TestSubscriber<Integer> ts = source.test();
    await5s(tenItems);
    ts.cancel();
    await5s(cancelled);
    assertThat(w.isDisposed()).isTrue();
    assertThat(w.schedule(() -> { })).isSameAs(Disposable.disposed());
  }

  @Test
  void disposedWorkerTasksNeverRun() {
    WorkerPool pool = fx.pool(b -> b.capacity(1));
    CountDownLatch hold = fx.saturate(pool);
    Scheduler.Worker w = PoolSchedulers.from(pool).createWorker();
    AtomicInteger calls = new AtomicInteger();
    Disposable d1 = w.schedule(calls::incrementAndGet);
    Disposable d2 = w.schedule(calls::incrementAndGet);
    Disposable d3 = w.schedule(calls::incrementAndGet);
    CountDownLatch marker = new CountDownLatch(1);
    w.schedule(marker::countDown); // runs after the three on the lane
    d1.dispose();
    d2.dispose();
    d3.dispose();
    hold.countDown();
    await5s(marker);
    assertThat(calls).hasValue(0);
    assertThat(d1.isDisposed() && d2.isDisposed() && d3.isDisposed()).isTrue();
    w.dispose();
  }

  @Test
  void aDisposedWorkerRunsNoneOfItsQueuedTasks() {
    WorkerPool pool = fx.pool(b -> b.capacity(1));
    CountDownLatch hold = fx.saturate(pool);
    Scheduler.Worker w = PoolSchedulers.from(pool).createWorker();
    AtomicInteger calls = new AtomicInteger();
    w.schedule(calls::incrementAndGet);
    w.schedule(calls::incrementAndGet);
    w.schedule(calls::incrementAndGet);
    w.dispose();
    hold.countDown();
    RxFixture.awaitQuiet(pool);
    assertThat(calls).hasValue(0);
  }

  @Test
  void disposingAWorkerRightAfterItsTaskRanIsSafe() {
    Scheduler s = scheduler();
    for (int i = 0; i < 500; i++) {
      Scheduler.Worker w = s.createWorker();
      AtomicInteger both = new AtomicInteger(2);
      w.schedule(() -> {
        both.decrementAndGet();
        while (both.get() != 0) {
          Thread.onSpinWait();
        }
      });
      both.decrementAndGet();
      while (both.get() != 0) {
        Thread.onSpinWait();
      }
      w.dispose();
      assertThat(w.isDisposed()).isTrue();
    }
    assertThat(fx.errors).isEmpty();
  }

  @Test
  void aWorkerRunsImmediateDelayedAndPeriodicTasksAndReportsItsDisposal() {
    Scheduler.Worker w = scheduler().createWorker();
    assertThat(w.isDisposed()).isFalse();
    CountDownLatch eight = new CountDownLatch(8);
    w.schedule(eight::countDown);
    w.schedule(eight::countDown, 10, TimeUnit.MILLISECONDS);
    Disposable periodic = w.schedulePeriodically(eight::countDown, 10, 10, TimeUnit.MILLISECONDS);
    await5s(eight);
    periodic.dispose();
    assertThat(periodic.isDisposed()).isTrue();
    w.dispose();
    assertThat(w.isDisposed()).isTrue();
  }

  // ---- direct and periodic tasks ------------------------------------------------------------

  @Test
  void directTasksRunImmediatelyAndAfterADelay() {
    Scheduler s = scheduler();
    CountDownLatch two = new CountDownLatch(2);
    s.scheduleDirect(two::countDown);
    s.scheduleDirect(two::countDown, 50, TimeUnit.MILLISECONDS);
    await5s(two);
  }

  @Test
  void aDirectDisposableReportsDisposedOnceTheTaskRanOrCrashed() {
    Scheduler s = scheduler();
    Disposable plain = s.scheduleDirect(() -> { });
    Disposable crashing = s.scheduleDirect(() -> {
      throw new IllegalStateException("boom");
    });
    Disposable timed = s.scheduleDirect(() -> { }, 1, TimeUnit.MILLISECONDS);
    await().until(() -> plain.isDisposed() && crashing.isDisposed() && timed.isDisposed());
    await().until(() -> fx.errors.size() == 1);
    assertThat(fx.errors.get(0)).isInstanceOf(IllegalStateException.class).hasMessage("boom");
  }

  @Test
  void aPeriodicDirectTaskRepeatsUntilDisposed() {
    Scheduler s = scheduler();
    CountDownLatch five = new CountDownLatch(5);
    Disposable d = s.schedulePeriodicallyDirect(five::countDown, 10, 10, TimeUnit.MILLISECONDS);
    try {
      await5s(five);
    } finally {
      d.dispose();
    }
    assertThat(d.isDisposed()).isTrue();
  }

  @ParameterizedTest(name = "initial delay {0} ms")
  @ValueSource(ints = {0, 1})
  void aZeroPeriodDirectTaskRepeatsAndCanDisposeItself(int initialDelay) {
    Scheduler s = scheduler();
    assertZeroPeriodRepeats(
        r -> s.schedulePeriodicallyDirect(r, initialDelay, 0, TimeUnit.MILLISECONDS));
  }

  @ParameterizedTest(name = "initial delay {0} ms")
  @ValueSource(ints = {0, 1})
  void aZeroPeriodWorkerTaskRepeatsAndCanDisposeItself(int initialDelay) {
    Scheduler.Worker w = scheduler().createWorker();
    try {
      assertZeroPeriodRepeats(r -> w.schedulePeriodically(r, initialDelay, 0, TimeUnit.MILLISECONDS));
    } finally {
      w.dispose();
    }
  }

  private void assertZeroPeriodRepeats(Function<Runnable, Disposable> schedule) {
    CountDownLatch tenth = new CountDownLatch(1);
    SerialDisposable self = new SerialDisposable();
    AtomicInteger runs = new AtomicInteger();
    try {
      self.replace(schedule.apply(() -> {
        if (runs.incrementAndGet() == 10) {
          self.dispose();
          tenth.countDown();
        }
      }));
      await5s(tenth);
    } finally {
      self.dispose();
    }
    assertThat(fx.errors).isEmpty();
  }

  // ---- hooks, introspection, argument checks ------------------------------------------------

  @Test
  void theScheduleHookDecoratesDirectDelayedAndPeriodicTasks() {
    Scheduler s = scheduler();
    AtomicInteger decoratedRuns = new AtomicInteger();
    RxJavaPlugins.setScheduleHandler(actual -> () -> {
      decoratedRuns.incrementAndGet();
      actual.run();
    });
    CountDownLatch three = new CountDownLatch(3);
    s.scheduleDirect(three::countDown);
    s.scheduleDirect(three::countDown, 1, TimeUnit.MILLISECONDS);
    Disposable periodic = s.schedulePeriodicallyDirect(three::countDown, 1, 10_000,
        TimeUnit.MILLISECONDS);
    await5s(three);
    periodic.dispose();
    assertThat(decoratedRuns).hasValue(3);
  }

  @Test
  void aDirectDisposableUnwrapsToItsRunnableAndReleasesItOnDispose() {
    Scheduler s = scheduler();
    Runnable r = () -> { };
    Disposable d = s.scheduleDirect(r, 100, TimeUnit.MILLISECONDS);
    SchedulerRunnableIntrospection unwrapped = (SchedulerRunnableIntrospection) d;
    assertThat(unwrapped.getWrappedRunnable()).isSameAs(r);
    d.dispose();
    // as RxJava's executor scheduler: a task disposed before it ran lets go of the user's runnable
    assertThat(unwrapped.getWrappedRunnable()).isSameAs(Functions.EMPTY_RUNNABLE);
  }

  @Test
  void aPeriodicDirectDisposableUnwrapsToItsRunnable() {
    Scheduler s = scheduler();
    CountDownLatch ran = new CountDownLatch(1);
    Runnable r = ran::countDown;
    Disposable d = s.schedulePeriodicallyDirect(r, 100, 100, TimeUnit.MILLISECONDS);
    assertThat(((SchedulerRunnableIntrospection) d).getWrappedRunnable()).isSameAs(r);
    await5s(ran);
    d.dispose();
  }

  @Test
  void nullTasksAreRefusedWithRunIsNull() {
    Scheduler s = scheduler();
    Scheduler.Worker w = s.createWorker();
    assertThatThrownBy(() -> s.scheduleDirect(null))
        .isInstanceOf(NullPointerException.class).hasMessage("run is null");
    assertThatThrownBy(() -> s.scheduleDirect(null, 10, TimeUnit.MILLISECONDS))
        .isInstanceOf(NullPointerException.class).hasMessage("run is null");
    assertThatThrownBy(() -> s.schedulePeriodicallyDirect(null, 5, 10, TimeUnit.MILLISECONDS))
        .isInstanceOf(NullPointerException.class).hasMessage("run is null");
    assertThatThrownBy(() -> w.schedule(null))
        .isInstanceOf(NullPointerException.class).hasMessage("run is null");
    w.dispose();
  }

  @Test
  void disposablesHaveADescriptionWhileTheirTaskRuns() {
    Scheduler s = scheduler();
    Scheduler.Worker w = s.createWorker();
    for (Function<Runnable, Disposable> schedule :
        List.<Function<Runnable, Disposable>>of(s::scheduleDirect, w::schedule)) {
      CountDownLatch inBody = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      Disposable d = schedule.apply(() -> {
        inBody.countDown();
        RxFixture.awaitQuietly(release);
      });
      await5s(inBody);
      assertThat(d.toString()).isNotEmpty();
      release.countDown();
    }
    w.dispose();
  }

  // ---- errors -------------------------------------------------------------------------------

  @Test
  void anErrorHandledByTheStreamReachesNeitherTheThreadHandlerNorOnError() {
    AtomicInteger uncaught = new AtomicInteger();
    WorkerPool pool = fx.pool(b -> b.capacity(2)
        .failureHandler((t, e) -> uncaught.incrementAndGet()));
    Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
    Thread.setDefaultUncaughtExceptionHandler((t, e) -> uncaught.incrementAndGet());
    try {
      IllegalStateException error = new IllegalStateException("handled");
      TestSubscriber<Object> ts = Flowable.error(error).subscribeOn(PoolSchedulers.from(pool))
          .test();
      ts.awaitDone(5, TimeUnit.SECONDS).assertError(error).assertNoValues();
      RxFixture.awaitQuiet(pool);
      assertThat(uncaught).hasValue(0);
      assertThat(fx.errors).isEmpty();
    } finally {
      Thread.setDefaultUncaughtExceptionHandler(previous);
    }
  }

  @Test
  void aClosedPoolMakesDirectSchedulesReturnDisposedAndReportEachRejection() {
    WorkerPool pool = fx.pool(b -> b.capacity(1));
    Scheduler s = PoolSchedulers.from(pool);
    pool.shutdown();
    assertThat(s.scheduleDirect(() -> { })).isSameAs(Disposable.disposed());
    assertThat(s.scheduleDirect(() -> { }, 10, TimeUnit.MILLISECONDS))
        .isSameAs(Disposable.disposed());
    assertThat(s.schedulePeriodicallyDirect(() -> { }, 10, 10, TimeUnit.MILLISECONDS))
        .isSameAs(Disposable.disposed());
    assertUndeliverableRejections(3);
  }

  @Test
  void aClosedPoolMakesWorkerSchedulesReturnDisposedAndReportEachRejection() {
    WorkerPool pool = fx.pool(b -> b.capacity(1));
    Scheduler s = PoolSchedulers.from(pool);
    pool.shutdown();
    assertThat(s.createWorker().schedule(() -> { })).isSameAs(Disposable.disposed());
    assertThat(s.createWorker().schedule(() -> { }, 10, TimeUnit.MILLISECONDS))
        .isSameAs(Disposable.disposed());
    assertThat(s.createWorker().schedulePeriodically(() -> { }, 10, 10, TimeUnit.MILLISECONDS))
        .isSameAs(Disposable.disposed());
    assertUndeliverableRejections(3);
  }

  private void assertUndeliverableRejections(int n) {
    assertThat(fx.errors).hasSize(n).allSatisfy(e -> {
      assertThat(e).isInstanceOf(UndeliverableException.class);
      assertThat(e.getCause()).isInstanceOf(RejectedExecutionException.class);
    });
  }

  // ---- scheduler shutdown -------------------------------------------------------------------

  @Test
  void shuttingTheSchedulerDownCancelsItsPendingWorkAndRefusesNewWorkUntilStart() {
    WorkerPool pool = fx.pool(b -> b.capacity(2));
    Scheduler s = PoolSchedulers.from(pool);
    Scheduler.Worker w = s.createWorker();
    AtomicInteger ran = new AtomicInteger();
    Disposable timed = s.scheduleDirect(ran::incrementAndGet, 1, TimeUnit.DAYS);
    Disposable periodic = s.schedulePeriodicallyDirect(ran::incrementAndGet, 1, 1, TimeUnit.DAYS);
    Disposable onWorker = w.schedule(ran::incrementAndGet, 1, TimeUnit.DAYS);
    s.shutdown();
    assertThat(timed.isDisposed() && periodic.isDisposed() && onWorker.isDisposed()).isTrue();
    assertThat(w.isDisposed()).isTrue();
    assertThat(s.scheduleDirect(ran::incrementAndGet)).isSameAs(Disposable.disposed());
    assertThat(s.createWorker().schedule(ran::incrementAndGet)).isSameAs(Disposable.disposed());
    assertThat(pool.isShutdown()).isFalse(); // from(pool) does not own the pool
    assertThat(fx.errors).isEmpty();

    s.start();
    CountDownLatch again = new CountDownLatch(1);
    s.scheduleDirect(again::countDown);
    await5s(again);
    assertThat(ran).hasValue(0);
  }
}
