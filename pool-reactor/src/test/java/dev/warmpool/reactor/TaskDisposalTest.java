package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/** Contract 2: per-task Disposable semantics and worker disposal. */
@SuppressWarnings("try") // try (Occupied busy = ...) scopes a full pool
class TaskDisposalTest {
  /** The ways to submit one task; delayed kinds use a short delay. */
  enum Kind {
    DIRECT, DIRECT_DELAYED, WORKER, WORKER_DELAYED;

    Disposable submit(Scheduler s, Runnable task) {
      switch (this) {
        case DIRECT:
          return s.schedule(task);
        case DIRECT_DELAYED:
          return s.schedule(task, 10, TimeUnit.MILLISECONDS);
        case WORKER:
          return s.createWorker().schedule(task);
        default:
          return s.createWorker().schedule(task, 10, TimeUnit.MILLISECONDS);
      }
    }
  }

  /** Blocking, one worker: FIFO through the waiting line makes "it never ran" observable. */
  private final WorkerPool pool = WorkerPool.builder().name("disposal").capacity(1).build();
  private final Scheduler scheduler = PoolSchedulers.from(pool);

  @AfterEach
  void close() {
    scheduler.dispose();
    pool.shutdownNow();
    pool.close();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aTaskIsNotDisposedWhileItRunsAndIsDisposedAfterwards(Kind kind) throws Exception {
    AtomicReference<Disposable> self = new AtomicReference<>();
    CountDownLatch known = new CountDownLatch(1);
    AtomicReference<Boolean> disposedWhileRunning = new AtomicReference<>();
    CountDownLatch ran = new CountDownLatch(1);
    Disposable d = kind.submit(scheduler, () -> {
      Occupied.awaitQuietly(known);
      disposedWhileRunning.set(self.get().isDisposed());
      ran.countDown();
    });
    self.set(d);
    known.countDown();
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(disposedWhileRunning).hasValue(false);
    await().atMost(Duration.ofSeconds(10)).until(d::isDisposed);
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void disposingAPendingTaskMeansItNeverRuns(Kind kind) throws Exception {
    AtomicBoolean ran = new AtomicBoolean();
    CountDownLatch later = new CountDownLatch(1);
    try (Occupied busy = Occupied.all(pool)) {
      Disposable d = kind.submit(scheduler, () -> ran.set(true));
      assertThat(d.isDisposed()).isFalse();
      d.dispose();
      assertThat(d.isDisposed()).isTrue();
      // submitted after it, due after it: runs after the cancelled task would have run
      scheduler.schedule(later::countDown, 30, TimeUnit.MILLISECONDS);
    }
    assertThat(later.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ran).isFalse();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void disposingFromAnotherThreadInterruptsTheRunningTask(Kind kind) throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch interrupted = new CountDownLatch(1);
    Disposable d = kind.submit(scheduler, () -> {
      started.countDown();
      try {
        new CountDownLatch(1).await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        interrupted.countDown();
      }
    });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    d.dispose();
    assertThat(d.isDisposed()).isTrue();
    assertThat(interrupted.await(10, TimeUnit.SECONDS)).isTrue();
    assertNextTaskOnTheThreadIsNotInterrupted();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void anInterruptThatArrivesAfterTheTasksOwnWorkIsNotLeftOnTheThread(Kind kind)
      throws Exception {
    AtomicReference<Boolean> flagAtEnd = new AtomicReference<>();
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch disposed = new CountDownLatch(1);
    CountDownLatch ended = new CountDownLatch(1);
    Scheduler.Worker sameLane = scheduler.createWorker();
    Runnable ignoringInterrupts = () -> {
      started.countDown();
      Occupied.awaitQuietly(disposed); // restores the interrupt it swallowed
      flagAtEnd.set(Thread.currentThread().isInterrupted());
    };
    Disposable d = kind == Kind.WORKER ? sameLane.schedule(ignoringInterrupts)
        : kind.submit(scheduler, ignoringInterrupts);
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    d.dispose();
    disposed.countDown();
    // the next task of the same lane, on the same pool thread (capacity 1)
    AtomicReference<Boolean> nextSeesInterrupt = new AtomicReference<>();
    sameLane.schedule(() -> {
      nextSeesInterrupt.set(Thread.currentThread().isInterrupted());
      ended.countDown();
    });
    assertThat(ended.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(flagAtEnd).hasValue(true); // the task did see its interrupt
    assertThat(nextSeesInterrupt).hasValue(false);
    sameLane.dispose();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void disposingFromItsOwnThreadDoesNotInterrupt(Kind kind) throws Exception {
    AtomicReference<Disposable> self = new AtomicReference<>();
    CountDownLatch known = new CountDownLatch(1);
    AtomicReference<Boolean> interruptedAfterSelfDispose = new AtomicReference<>();
    AtomicReference<Boolean> disposedAfterSelfDispose = new AtomicReference<>();
    CountDownLatch ran = new CountDownLatch(1);
    Disposable d = kind.submit(scheduler, () -> {
      Occupied.awaitQuietly(known);
      self.get().dispose();
      interruptedAfterSelfDispose.set(Thread.currentThread().isInterrupted());
      disposedAfterSelfDispose.set(self.get().isDisposed());
      ran.countDown();
    });
    self.set(d);
    known.countDown();
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(interruptedAfterSelfDispose).hasValue(false);
    assertThat(disposedAfterSelfDispose).hasValue(true);
    assertNextTaskOnTheThreadIsNotInterrupted();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aTaskRunningWhenItsSchedulerIsDisposedFinishesAndIsDisposedOnlyAfterwards(Kind kind)
      throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicReference<Boolean> interrupted = new AtomicReference<>();
    Disposable d = kind.submit(scheduler, () -> {
      started.countDown();
      Occupied.awaitQuietly(release);
      interrupted.set(Thread.currentThread().isInterrupted());
    });
    try {
      assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
      scheduler.dispose();
      assertThat(d.isDisposed()).as("still running").isFalse();
    } finally {
      release.countDown();
    }
    await().atMost(Duration.ofSeconds(10)).until(d::isDisposed);
    assertThat(interrupted).hasValue(false);
  }

  @Test
  void disposingAWorkerCancelsItsPendingTasksButNotOtherWorkers() throws Exception {
    Scheduler.Worker a = scheduler.createWorker();
    Scheduler.Worker b = scheduler.createWorker();
    AtomicBoolean aRan = new AtomicBoolean();
    CountDownLatch bRan = new CountDownLatch(2);
    CountDownLatch later = new CountDownLatch(1);
    Disposable a1;
    Disposable a2;
    Disposable a3;
    Disposable b1;
    try (Occupied busy = Occupied.all(pool)) {
      a1 = a.schedule(() -> aRan.set(true));
      a2 = a.schedule(() -> aRan.set(true), 10, TimeUnit.MILLISECONDS);
      a3 = a.schedulePeriodically(() -> aRan.set(true), 10, 10, TimeUnit.MILLISECONDS);
      b1 = b.schedule(bRan::countDown);
      b.schedule(bRan::countDown, 10, TimeUnit.MILLISECONDS);
      a.dispose();
      assertThat(a.isDisposed()).isTrue();
      assertThat(b.isDisposed()).isFalse();
      assertThat(a1.isDisposed()).isTrue();
      assertThat(a2.isDisposed()).isTrue();
      assertThat(a3.isDisposed()).isTrue();
      assertThat(b1.isDisposed()).isFalse();
      scheduler.schedule(later::countDown, 40, TimeUnit.MILLISECONDS);
    }
    assertThat(bRan.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(later.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(aRan).isFalse();
    assertThatThrownBy(() -> a.schedule(() -> {})).isInstanceOf(RejectedExecutionException.class);
    assertThatThrownBy(() -> a.schedule(() -> {}, 1, TimeUnit.MILLISECONDS))
        .isInstanceOf(RejectedExecutionException.class);
    assertThatThrownBy(() -> a.schedulePeriodically(() -> {}, 1, 1, TimeUnit.MILLISECONDS))
        .isInstanceOf(RejectedExecutionException.class);
    b.dispose();
  }

  @Test
  void disposingAWorkerFromAnotherThreadInterruptsItsRunningTask() throws Exception {
    Scheduler.Worker worker = scheduler.createWorker();
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch interrupted = new CountDownLatch(1);
    Disposable d = worker.schedule(() -> {
      started.countDown();
      try {
        new CountDownLatch(1).await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        interrupted.countDown();
      }
    });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    worker.dispose();
    assertThat(interrupted.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(d.isDisposed()).isTrue();
  }

  @Test
  void disposingAPeriodicTaskStopsIt() throws Exception {
    Scheduler.Worker worker = scheduler.createWorker();
    List<Function<Runnable, Disposable>> periodics = List.of(
        r -> scheduler.schedulePeriodically(r, 0, 5, TimeUnit.MILLISECONDS),
        r -> worker.schedulePeriodically(r, 0, 5, TimeUnit.MILLISECONDS));
    for (Function<Runnable, Disposable> periodic : periodics) {
      CountDownLatch threeRuns = new CountDownLatch(3);
      AtomicBoolean disposed = new AtomicBoolean();
      AtomicBoolean ranAfterDispose = new AtomicBoolean();
      Disposable d = periodic.apply(() -> {
        if (disposed.get()) {
          ranAfterDispose.set(true);
        }
        threeRuns.countDown();
      });
      assertThat(threeRuns.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(d.isDisposed()).as("not disposed between runs").isFalse();
      d.dispose();
      // a run in progress may finish; mark only after it can no longer start a new one
      await().atMost(Duration.ofSeconds(10)).until(() -> pool.stats().busy() == 0);
      disposed.set(true);
      assertThat(d.isDisposed()).isTrue();
      CountDownLatch later = new CountDownLatch(1);
      scheduler.schedule(later::countDown, 30, TimeUnit.MILLISECONDS);
      assertThat(later.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(ranAfterDispose).isFalse();
    }
    worker.dispose();
  }

  /** Capacity 1: the next task runs on the same pool thread. */
  private void assertNextTaskOnTheThreadIsNotInterrupted() throws Exception {
    AtomicReference<Boolean> interrupted = new AtomicReference<>();
    CountDownLatch ran = new CountDownLatch(1);
    scheduler.schedule(() -> {
      interrupted.set(Thread.currentThread().isInterrupted());
      ran.countDown();
    });
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(interrupted).hasValue(false);
  }
}
