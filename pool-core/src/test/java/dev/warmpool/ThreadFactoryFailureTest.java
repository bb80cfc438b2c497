package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitWaiting;
import static dev.warmpool.PoolFixture.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.TestFactories.ScriptedFactory;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Guarantee 10: a thread factory that throws or returns null, or a thread that cannot start, rejects
 * the one task that needed the thread, with the cause attached; counters are restored and the pool
 * keeps working.
 */
@Timeout(60) // seconds per test: a hang fails the test instead of stalling the build
class ThreadFactoryFailureTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private final AtomicInteger ran = new AtomicInteger();
  private final Runnable counted = ran::incrementAndGet;

  /** The ways a worker thread can fail to come to life. */
  enum Breakage {
    FACTORY_THROWS {
      @Override
      Thread make(Runnable r) {
        throw new IllegalStateException("no threads today");
      }
    },
    FACTORY_RETURNS_NULL {
      @Override
      Thread make(Runnable r) {
        return null;
      }
    },
    THREAD_CANNOT_START {
      @Override
      Thread make(Runnable r) {
        Thread spent = new Thread(() -> { });
        spent.start();
        try {
          spent.join();
        } catch (InterruptedException e) {
          throw new AssertionError(e);
        }
        return spent; // starting it again throws IllegalThreadStateException
      }
    };

    abstract Thread make(Runnable r);
  }

  /**
   * enqueue never blocks its caller, so it never calls the factory on the caller's thread and a
   * failed start cannot reject it (version 3): the task stays accepted, the start is retried in the
   * background, and the task runs once a thread can be made (guarantee 11: "kept in line and
   * retried").
   */
  @Test
  void enqueueKeepsItsTaskAndRetriesTheStartWhenTheFactoryFails_guarantee11() {
    String name = PoolFixture.uniqueName("factoryenq");
    ScriptedFactory factory = new ScriptedFactory(name).onCall(1, ScriptedFactory::fails);
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(2)
        .threadFactory(factory).build());

    TaskHandle handle = pool.enqueue(counted);
    PoolFixture.eventually().untilAsserted(() -> assertThat(ran.get()).isEqualTo(1));
    PoolFixture.eventually().untilAsserted(() -> assertThat(pool.stats().completed()).isEqualTo(1));
    assertThat(handle.cancel()).isFalse();
    assertThat(pool.stats().submitted()).isEqualTo(1);
    assertThat(pool.stats().rejected()).isZero();
  }

  /** The ways to submit a task that needs a new worker. */
  enum Submission {
    EXECUTE, ENQUEUE, TRY_EXECUTE, TRY_EXECUTE_TIMED;

    void submit(WorkerPool pool, Runnable task) throws InterruptedException {
      switch (this) {
        case EXECUTE -> pool.execute(task);
        case ENQUEUE -> pool.enqueue(task);
        case TRY_EXECUTE -> pool.tryExecute(task);
        case TRY_EXECUTE_TIMED -> pool.tryExecute(task, Duration.ofSeconds(1));
      }
    }
  }

  private Throwable rejectionOf(WorkerPool pool, Submission how) {
    try {
      how.submit(pool, counted);
    } catch (RejectedExecutionException e) {
      return e;
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
    throw new AssertionError(how + " was not rejected");
  }

  @ParameterizedTest
  @EnumSource(Breakage.class)
  void brokenThreadRejectsThatOneTaskWithTheCauseAndThePoolKeepsWorking(Breakage breakage) {
    String name = PoolFixture.uniqueName("factory");
    ScriptedFactory factory = new ScriptedFactory(name).onCall(2, breakage::make);
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(3)
        .threadFactory(factory).build());
    PoolFixture.Gate first = fixture.occupy(pool);
    Thread firstWorker = first.thread();
    PoolStats before = pool.stats();

    Throwable rejection = rejectionOf(pool, Submission.EXECUTE);

    assertThat(rejection).isExactlyInstanceOf(RejectedExecutionException.class)
        .hasMessageContaining(name);
    assertThat(rejection.getCause()).as("cause").isNotNull();
    switch (breakage) {
      case FACTORY_THROWS -> assertThat(rejection.getCause())
          .isInstanceOf(IllegalStateException.class).hasMessage("no threads today");
      case FACTORY_RETURNS_NULL -> assertThat(rejection.getCause())
          .isInstanceOf(NullPointerException.class).hasMessageContaining("null");
      case THREAD_CANNOT_START -> assertThat(rejection.getCause())
          .isInstanceOf(IllegalThreadStateException.class);
    }
    PoolStats after = pool.stats();
    assertThat(after.workers()).as("workers restored").isEqualTo(before.workers());
    assertThat(after.workersStarted()).isEqualTo(before.workersStarted());
    assertThat(after.submitted()).isEqualTo(before.submitted());
    assertThat(after.rejected()).isEqualTo(before.rejected() + 1);
    assertThat(PoolFixture.liveThreadsOf(name)).containsExactly(firstWorker);

    // The next call that needs a thread gets one, and capacity was not lost.
    PoolFixture.Gate second = fixture.gate();
    PoolFixture.Gate third = fixture.gate();
    pool.execute(second.task());
    pool.execute(third.task());
    assertThat(second.awaitArrival()).isNotSameAs(firstWorker);
    third.awaitArrival();
    assertThat(pool.stats().workers()).isEqualTo(3);
    assertThat(ran.get()).as("the rejected task never ran").isZero();
  }

  @ParameterizedTest
  @EnumSource(value = Submission.class, names = {"EXECUTE", "TRY_EXECUTE", "TRY_EXECUTE_TIMED"})
  void everyCallThatAnswersAtOnceIsRejectedWithTheCause(Submission how) {
    String name = PoolFixture.uniqueName("factoryhow");
    IllegalStateException cause = new IllegalStateException("no threads today");
    ScriptedFactory factory = new ScriptedFactory(name).onCall(1, r -> {
      throw cause;
    });
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(2)
        .threadFactory(factory).build());

    assertThat(rejectionOf(pool, how)).isInstanceOf(RejectedExecutionException.class)
        .hasCause(cause);
    assertThat(pool.stats().workers()).isZero();
    assertThat(pool.stats().waiting()).isZero();

    PoolFixture.Gate works = fixture.gate();
    works.open();
    pool.execute(works.task());
    works.awaitArrival();
    assertThat(ran.get()).isZero();
  }

  // ---------------------------------------------------------------------------------------------
  // A worker that cannot be started for an entry already waiting in line

  /**
   * A pool of one whose only worker dies (its failure handler throws) while an entry waits in line,
   * and whose factory fails once, on the call that would replace that worker.
   */
  private WorkerPool poolWhoseReplacementWorkerFailsOnce(PoolFixture.Gate dying) {
    String name = PoolFixture.uniqueName("strand");
    ScriptedFactory factory = new ScriptedFactory(name).onCall(2, ScriptedFactory::fails);
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(1)
        .threadFactory(factory)
        .failureHandler((t, e) -> {
          throw new IllegalStateException("handler gives up");
        }).build());
    pool.execute(() -> {
      dying.pass();
      throw new IllegalStateException("task fails");
    });
    dying.awaitArrival();
    return pool;
  }

  @Test
  void enqueuedTaskIsNotStrandedWhenTheWorkerForItCannotStart() {
    PoolFixture.Gate dying = fixture.gate();
    WorkerPool pool = poolWhoseReplacementWorkerFailsOnce(dying);
    pool.enqueue(counted);
    awaitWaiting(pool, 1);

    dying.open(); // the worker dies; its replacement cannot be created (only this once)

    // Accepted means it runs: the factory works again, the pool has room, nothing is busy.
    eventually().atMost(Duration.ofSeconds(5))
        .untilAsserted(() -> assertThat(ran.get()).as("enqueued task ran").isEqualTo(1));
  }

  @Test
  void blockedCallerIsNotStrandedWhenTheWorkerForItCannotStart() {
    PoolFixture.Gate dying = fixture.gate();
    WorkerPool pool = poolWhoseReplacementWorkerFailsOnce(dying);
    PoolFixture.Caller<Void> caller = fixture.call("stranded", () -> pool.execute(counted));
    awaitWaiting(pool, 1);

    dying.open();

    // Either the task runs on a later worker, or the caller is rejected with the cause; it must not
    // stay blocked with the pool empty and free to start a worker.
    eventually().atMost(Duration.ofSeconds(5))
        .untilAsserted(() -> assertThat(caller.isDone()).as("caller returned").isTrue());
    Throwable outcome = caller.outcome();
    if (outcome == null) {
      eventually().untilAsserted(() -> assertThat(ran.get()).isEqualTo(1));
    } else {
      assertThat(outcome).isInstanceOf(RejectedExecutionException.class)
          .hasRootCauseMessage("no threads today");
      assertThat(ran.get()).isZero();
    }
  }

  @Test
  void timedCallerToldItsTaskWasAcceptedSeesItRunEvenIfThePoolThenShutsDown() throws Exception {
    String name = PoolFixture.uniqueName("told");
    CountDownLatch callerDone = new CountDownLatch(1);
    ScriptedFactory factory = new ScriptedFactory(name).onCall(2, r -> {
      // Slow to fail: the waiting caller's timeout runs out while its worker is being made.
      try {
        callerDone.await(1, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      throw new IllegalStateException("no threads today");
    });
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(1)
        .threadFactory(factory).build());
    PoolFixture.Gate busy = fixture.occupy(pool);
    PoolFixture.Caller<Boolean> caller = fixture.call("timed", () -> {
      try {
        return pool.tryExecute(counted, Duration.ofMillis(300));
      } finally {
        callerDone.countDown();
      }
    });
    awaitWaiting(pool, 1);

    PoolFixture.Caller<Void> grow = fixture.call("grow", () -> pool.resize(2));
    Throwable callerOutcome = caller.outcome();
    grow.result();
    boolean toldAccepted = callerOutcome == null && caller.result();

    pool.shutdown();
    busy.open();
    assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue();

    assertThat(ran.get())
        .as("runs of a task whose tryExecute returned %s (threw %s)", toldAccepted, callerOutcome)
        .isEqualTo(toldAccepted ? 1 : 0);
  }
}
