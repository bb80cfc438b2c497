package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitIdle;
import static dev.warmpool.PoolFixture.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Guarantee 7: a task that throws goes to the failure handler (by default the worker thread's
 * uncaught-exception handler); the worker survives and is reused; counters stay exact.
 */
@Timeout(60) // seconds per test: a hang fails the test instead of stalling the build
class FailureHandlerTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  /** What a handler received. */
  record Failure(Thread thread, Throwable error) { }

  private final List<Failure> failures = new CopyOnWriteArrayList<>();

  private void record(Thread t, Throwable e) {
    failures.add(new Failure(t, e));
  }

  /** Runs the task, waits until its worker is idle again, and returns that worker. */
  private static Thread runAndSettle(WorkerPool pool, Runnable task) {
    AtomicReference<Thread> ranOn = new AtomicReference<>();
    int idleBefore = pool.stats().idle();
    pool.execute(() -> {
      ranOn.set(Thread.currentThread());
      task.run();
    });
    awaitIdle(pool, Math.max(1, idleBefore));
    eventually().untilAsserted(() -> assertThat(ranOn.get()).isNotNull());
    return ranOn.get();
  }

  private static Runnable throwing(RuntimeException e) {
    return () -> {
      throw e;
    };
  }

  @Test
  void throwingTaskGoesToTheFailureHandlerOnItsWorkerThread() {
    WorkerPool pool = fixture.pool("fail", b -> b.capacity(2).failureHandler(this::record));
    IllegalStateException boom = new IllegalStateException("boom");

    Thread worker = runAndSettle(pool, throwing(boom));

    assertThat(failures).containsExactly(new Failure(worker, boom));
  }

  @Test
  void defaultFailureHandlerIsTheWorkerThreadsUncaughtExceptionHandler() {
    ThreadFactory withHandler = r -> {
      Thread t = new Thread(r);
      t.setDaemon(true);
      t.setUncaughtExceptionHandler(this::record);
      return t;
    };
    WorkerPool pool = fixture.pool("faildef", b -> b.capacity(1).threadFactory(withHandler));
    IllegalStateException boom = new IllegalStateException("boom");

    Thread worker = runAndSettle(pool, throwing(boom));

    assertThat(failures).containsExactly(new Failure(worker, boom));
    assertThat(worker.isAlive()).isTrue();
  }

  @Test
  void defaultFailureHandlerReachesTheJvmWideDefaultHandlerThroughTheThreadGroup() {
    Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
    IllegalStateException boom = new IllegalStateException("boom");
    Thread.setDefaultUncaughtExceptionHandler((t, e) -> {
      if (e == boom) {
        record(t, e);
      }
    });
    try {
      WorkerPool pool = fixture.pool("failjvm", b -> b.capacity(1));
      Thread worker = runAndSettle(pool, throwing(boom));
      assertThat(failures).containsExactly(new Failure(worker, boom));
    } finally {
      Thread.setDefaultUncaughtExceptionHandler(previous);
    }
  }

  @Test
  void workerSurvivesAFailingTaskAndIsReused() {
    WorkerPool pool = fixture.pool("failreuse", b -> b.capacity(4).failureHandler(this::record));

    Thread failedOn = runAndSettle(pool, throwing(new IllegalStateException("boom")));
    Thread nextOn = runAndSettle(pool, () -> { });
    Thread afterError = runAndSettle(pool, () -> {
      throw new AssertionError("an Error is a failure too");
    });
    Thread lastOn = runAndSettle(pool, () -> { });

    assertThat(List.of(nextOn, afterError, lastOn)).containsOnly(failedOn);
    assertThat(failedOn.isAlive()).isTrue();
    PoolStats stats = pool.stats();
    assertThat(stats.workersStarted()).isEqualTo(1);
    assertThat(stats.workersStopped()).isZero();
    assertThat(failures).hasSize(2);
  }

  @Test
  void failuresAreCountedAndOtherCountersStayExact() {
    WorkerPool pool = fixture.pool("failcount", b -> b.capacity(1).failureHandler(this::record));
    for (int i = 0; i < 30; i++) {
      runAndSettle(pool, i % 3 == 0 ? throwing(new IllegalStateException("#" + i)) : () -> { });
    }

    PoolStats stats = pool.stats();
    assertThat(stats.submitted()).isEqualTo(30);
    assertThat(stats.failed()).isEqualTo(10);
    assertThat(stats.completed()).isEqualTo(20);
    assertThat(stats.rejected()).isZero();
    assertThat(stats.workersStarted()).isEqualTo(1);
    assertThat(stats.workers()).isEqualTo(1);
    assertThat(failures).hasSize(10);
  }

  @Test
  void failedCountMovesJustBeforeTheFailureHandlerIsCalled() {
    // PoolStats#failed: "moves when the task threw, just before the failure handler is called",
    // so a handler (or a test waiting for failed()) never sees a failure that is not counted yet.
    AtomicReference<WorkerPool> self = new AtomicReference<>();
    AtomicLong failedSeenByHandler = new AtomicLong(-1);
    WorkerPool pool = fixture.pool("failorder", b -> b.capacity(1)
        .failureHandler((t, e) -> failedSeenByHandler.set(self.get().stats().failed())));
    self.set(pool);

    runAndSettle(pool, throwing(new IllegalStateException("boom")));

    assertThat(failedSeenByHandler.get()).as("failed() seen inside the handler").isEqualTo(1);
    assertThat(pool.stats().failed()).isEqualTo(1);
    assertThat(pool.stats().completed()).isZero();
  }

  @Test
  void failureHandlerThatThrowsStopsOnlyThatWorker() {
    List<Thread> deaths = new CopyOnWriteArrayList<>();
    ThreadFactory quietDeaths = r -> {
      Thread t = new Thread(r);
      t.setDaemon(true);
      t.setUncaughtExceptionHandler((thread, e) -> deaths.add(thread));
      return t;
    };
    WorkerPool pool = fixture.pool("failfatal", b -> b.capacity(2).threadFactory(quietDeaths)
        .maxIdle(Duration.ofMinutes(5))
        .failureHandler((t, e) -> {
          throw new IllegalStateException("handler gives up");
        }));
    PoolFixture.Gate other = fixture.occupy(pool);
    Thread survivor = other.thread();

    PoolFixture.Gate dying = fixture.gate();
    pool.execute(() -> {
      dying.pass();
      throw new IllegalStateException("boom");
    });
    Thread doomed = dying.awaitArrival();
    dying.open();

    PoolFixture.awaitDead(doomed);
    assertThat(deaths).containsExactly(doomed);
    assertThat(survivor.isAlive()).isTrue();
    eventually().untilAsserted(() -> assertThat(pool.stats().workers()).isEqualTo(1));
    PoolStats stats = pool.stats();
    assertThat(stats.failed()).isEqualTo(1);
    assertThat(stats.workersStopped()).isEqualTo(1);
    assertThat(stats.workersStarted() - stats.workersExpired() - stats.workersStopped())
        .isEqualTo(stats.workers());

    // The pool replaces the dead worker on demand.
    PoolFixture.Gate next = fixture.gate();
    pool.execute(next.task());
    assertThat(next.awaitArrival()).isNotIn(doomed, survivor);
    other.open();
    next.open();
  }
}
