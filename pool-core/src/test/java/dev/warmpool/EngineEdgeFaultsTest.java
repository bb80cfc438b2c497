package dev.warmpool;

import static dev.warmpool.PoolFixture.await;
import static dev.warmpool.PoolFixture.awaitIdle;
import static dev.warmpool.PoolFixture.awaitQuietly;
import static dev.warmpool.PoolFixture.awaitWaiting;
import static dev.warmpool.PoolFixture.eventually;
import static dev.warmpool.PoolFixture.uniqueName;
import static dev.warmpool.TestFactories.daemon;
import static dev.warmpool.TestFactories.quietDaemon;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.warmpool.TestFactories.ScriptedFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Regression tests for the engine faults of issue 11, which a reviewer found by attacking the pool
 * through its edges: thread factories that block, fail once or return a thread that is already
 * started, a {@code Thread} whose {@code start()} is slow, and shutdown, expiry and resize racing
 * the workers. Each test is named after the guarantee of DESIGN.md section 4 it protects and the fault
 * it reproduces.
 *
 * <p>Only the public API is used, so that the tests outlive the engine they were written against:
 * interleavings are forced by hostile thread factories, {@code Thread} subclasses, a ticker that
 * holds the worker that reads it, and latches; races bounded by time are repeated over many rounds.
 * Outcomes and counters are asserted exactly at quiescence.
 */
@Timeout(60) // seconds per test: a hang fails the test instead of stalling the build
class EngineEdgeFaultsTest {
  private static final Duration HOUR = Duration.ofHours(1);

  @AutoClose final PoolFixture fixture = new PoolFixture();

  // ---------------------------------------------------------------------------------------------
  // Guarantee 4: accepted means it runs

  @Test
  void terminationWaitsForAcceptedTaskWhenWorkerStartFailsDuringShutdown_fault4() throws Exception {
    String name = uniqueName("fault4-");
    ScriptedFactory factory = new ScriptedFactory(name);
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(1).maxIdle(HOUR)
        .threadFactory(factory).failureHandler(killsItsWorker()).build());
    PoolFixture.Gate dying = fixture.gate();
    pool.execute(() -> {
      dying.pass();
      throw new IllegalStateException("task fails");
    });
    dying.awaitArrival();
    AtomicInteger ran = new AtomicInteger();
    pool.enqueue(ran::incrementAndGet); // accepted: it waits in line for the only seat
    awaitWaiting(pool, 1);

    pool.shutdown();
    factory.onNextCall(ScriptedFactory::fails);
    dying.open(); // the only worker dies; the worker started for the waiting task fails, once

    assertThat(pool.awaitTermination(10, SECONDS)).as("terminated within 10 s").isTrue();
    PoolStats stats = pool.stats();
    assertThat(ran.get()).as("runs of the accepted task when the pool read terminated (%s)", stats)
        .isEqualTo(1);
    assertThat(stats.waiting()).as("waiting").isZero();
    assertThat(stats.workers()).as("workers").isZero();
    assertThat(stats.submitted()).as("submitted").isEqualTo(2);
    assertThat(stats.completed()).as("completed").isEqualTo(1);
    assertThat(stats.failed()).as("failed").isEqualTo(1);
    assertThat(stats.rejected()).as("rejected").isZero();
  }

  /**
   * Found by {@link ShutdownCycleStressTest}: a blocked {@code execute} whose entry got a seat and
   * was queued, then handed back by {@code shutdownNow} before its caller woke, threw
   * {@code PoolClosedException}: the task was both rejected and returned. The caller's wake-up is
   * a race, so the scenario runs for many rounds; each round must see the call return normally.
   */
  @Test
  void blockedExecuteWhoseTaskIsHandedBackReturnsNormally_guarantee4() throws Exception {
    for (int round = 0; round < 30; round++) {
      String name = uniqueName("handback-");
      AtomicBoolean noThreads = new AtomicBoolean();
      WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(1).maxIdle(HOUR)
          .threadFactory(r -> {
            if (noThreads.get()) {
              throw new IllegalStateException("no threads today");
            }
            return daemon(r, name + "-worker");
          }).build());
      CountDownLatch release = new CountDownLatch(1);
      pool.execute(() -> await(release));
      Runnable task = () -> { };
      PoolFixture.Caller<Void> caller = fixture.call("blocked-" + round, () -> {
        pool.execute(task); // blocks in line: the only seat is taken
        return null;
      });
      awaitWaiting(pool, 1);
      noThreads.set(true); // the entry gets a seat but no worker: it stays queued
      pool.resize(2);
      List<Runnable> back = pool.shutdownNow();
      release.countDown();
      assertThat(back).as("round %d: handed back", round).containsExactly(task);
      assertThat(caller.result()).as("round %d: the blocked call returns normally", round)
          .isNull();
      assertThat(pool.awaitTermination(10, SECONDS)).isTrue();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Guarantee 11 (fault 5): a factory that returns a thread that is already started

  /** What the thread that a factory returns already started is running. */
  enum StartedThread {
    /** {@code Thread t = new Thread(r); t.start(); return t;}: the worker runs before start(). */
    RUNS_THE_WORKER,
    /** A started thread that runs something else (until the test lets it end), never the worker. */
    RUNS_SOMETHING_ELSE;

    Thread make(Runnable worker, PoolFixture.Gate hold) {
      Thread t = quietDaemon(this == RUNS_THE_WORKER ? worker : hold::pass, "started-" + this);
      t.start();
      return t;
    }
  }

  @ParameterizedTest
  @EnumSource(StartedThread.class)
  void startedThreadFromFactoryCostsAtMostThatTaskAndNeverExceedsCapacity_fault5(
      StartedThread kind) {
    String name = uniqueName("fault5direct-");
    PoolFixture.Gate hold = fixture.gate();
    ScriptedFactory factory = new ScriptedFactory(name);
    factory.onNextCall(r -> kind.make(r, hold));
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(1)
        .maxIdle(Duration.ofMillis(100)).threadFactory(factory).build());
    Probe probe = new Probe();
    PoolFixture.Gate firstGate = fixture.gate();
    Probe.Task first = probe.task(firstGate);

    // On its own thread: a pool that waited for the started thread to check in would hang here.
    Throwable outcome = fixture.call("execute", () -> pool.execute(first))
        .outcome(Duration.ofSeconds(5));
    Thread started = factory.made.get(0);
    hold.open();
    if (outcome == null) {
      firstGate.awaitArrival(); // accepted: it runs, at once or on a worker started later
    } else {
      eventually().atMost(Duration.ofSeconds(5))
          .until(() -> !started.isAlive() || firstGate.hasArrived());
    }
    Aftermath after = secondThenLaterTask(pool, factory, probe, firstGate);
    PoolStats end = after.end();

    boolean firstAccepted = outcome == null;
    SoftAssertions.assertSoftly(s -> {
      if (firstAccepted) {
        s.assertThat(first.runs()).as("runs of the first task, accepted").isEqualTo(1);
      } else {
        s.assertThat(outcome).as("the first task's rejection")
            .isInstanceOf(RejectedExecutionException.class);
        s.assertThat(outcome.getCause()).as("its cause")
            .isInstanceOf(IllegalThreadStateException.class);
        s.assertThat(first.runs()).as("runs of the first task, rejected").isZero();
      }
      s.assertThat(after.secondAccepted())
          .as("tryExecute of a second task while the first %s the only seat",
              firstAccepted ? "held" : "(rejected) did not hold")
          .isEqualTo(!firstAccepted);
      s.assertThat(after.second().runs()).as("runs of the second task")
          .isEqualTo(after.secondAccepted() ? 1 : 0);
      s.assertThat(probe.mostAtOnce()).as("most tasks running at once, capacity 1").isEqualTo(1);
      after.assertThePoolRecovered(s);
      int accepted = (firstAccepted ? 1 : 0) + (after.secondAccepted() ? 1 : 0) + 1;
      s.assertThat(end.submitted()).as("submitted at quiescence (%s)", end).isEqualTo(accepted);
      s.assertThat(end.completed()).as("completed at quiescence (%s)", end).isEqualTo(accepted);
      s.assertThat(end.rejected()).as("rejected at quiescence (%s)", end)
          .isEqualTo((firstAccepted ? 0 : 1) + (after.secondAccepted() ? 0 : 1));
      s.assertThat(end.workers()).as("workers at quiescence (%s)", end).isBetween(0, 1);
    });
  }

  @ParameterizedTest
  @EnumSource(StartedThread.class)
  void startedThreadFromFactoryRunsAWaitingTaskExactlyOnceWithinCapacity_fault5(
      StartedThread kind) {
    String name = uniqueName("fault5line-");
    PoolFixture.Gate hold = fixture.gate();
    ScriptedFactory factory = new ScriptedFactory(name);
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(1)
        .maxIdle(Duration.ofMillis(100)).threadFactory(factory)
        .failureHandler(killsItsWorker()).build());
    PoolFixture.Gate dying = fixture.gate();
    pool.execute(() -> {
      dying.pass();
      throw new IllegalStateException("task fails");
    });
    dying.awaitArrival();
    Probe probe = new Probe();
    PoolFixture.Gate waitingGate = fixture.gate();
    Probe.Task waiting = probe.task(waitingGate);
    pool.enqueue(waiting); // accepted; waits in line without a thread
    awaitWaiting(pool, 1);

    factory.onNextCall(r -> kind.make(r, hold));
    dying.open(); // the worker dies; the thread for the waiting task comes already started
    waitingGate.awaitArrival();
    hold.open();
    // the second task: the only seat is taken, so its tryExecute must be false
    Aftermath after = secondThenLaterTask(pool, factory, probe, waitingGate);
    PoolStats end = after.end();

    SoftAssertions.assertSoftly(s -> {
      s.assertThat(waiting.runs()).as("runs of the task that waited in line").isEqualTo(1);
      s.assertThat(after.secondAccepted())
          .as("tryExecute while the waiting task held the only seat").isFalse();
      s.assertThat(probe.mostAtOnce()).as("most tasks running at once, capacity 1").isEqualTo(1);
      after.assertThePoolRecovered(s);
      s.assertThat(end.failed()).as("failed at quiescence (%s)", end).isEqualTo(1);
      s.assertThat(end.completed()).as("completed at quiescence (%s)", end).isEqualTo(2);
      s.assertThat(end.submitted()).as("submitted at quiescence (%s)", end).isEqualTo(3);
      s.assertThat(end.rejected()).as("rejected at quiescence (%s)", end).isEqualTo(1);
      s.assertThat(end.waiting()).as("waiting at quiescence (%s)", end).isZero();
      s.assertThat(end.workers()).as("workers at quiescence (%s)", end).isBetween(0, 1);
    });
  }

  /**
   * The rest of a fault-5 scenario, once the thread from the factory has run a task that now waits
   * at {@code heldGate} in the only seat: tries a second task, lets both end and every worker die,
   * then executes a later task and waits until the pool is quiescent. Records the stats in between.
   */
  private Aftermath secondThenLaterTask(WorkerPool pool, ScriptedFactory factory, Probe probe,
      PoolFixture.Gate heldGate) {
    List<PoolStats> seen = new ArrayList<>();
    seen.add(pool.stats());
    PoolFixture.Gate secondGate = fixture.gate();
    Probe.Task second = probe.task(secondGate);
    boolean secondAccepted = pool.tryExecute(second);
    if (secondAccepted) {
      secondGate.awaitArrival();
    }
    seen.add(pool.stats());
    heldGate.open();
    secondGate.open();
    factory.awaitAllDead(); // every worker expires (maxIdle 100 ms) or exits
    seen.add(pool.stats());
    boolean shutDown = pool.isShutdown();
    Probe.Task later = probe.task();
    Throwable laterOutcome = outcomeOf(() -> pool.execute(later));
    if (laterOutcome == null) {
      eventually().atMost(Duration.ofSeconds(5)).until(() -> later.runs() == 1
          && pool.stats().completed() + pool.stats().failed() == pool.stats().submitted());
    }
    return new Aftermath(seen, second, secondAccepted, shutDown, later, laterOutcome,
        pool.stats());
  }

  /** What {@link #secondThenLaterTask} saw; {@code end} is the pool's stats at quiescence. */
  private record Aftermath(List<PoolStats> seen, Probe.Task second, boolean secondAccepted,
      boolean shutDown, Probe.Task later, Throwable laterOutcome, PoolStats end) {
    /** Nobody closed the pool: it reads open, runs a later task, and its gauges stayed in range. */
    void assertThePoolRecovered(SoftAssertions s) {
      s.assertThat(shutDown).as("pool reads shut down, though nobody closed it (%s)", seen)
          .isFalse();
      s.assertThat(laterOutcome).as("a later execute").isNull();
      s.assertThat(later.runs()).as("runs of the later task").isEqualTo(1);
      seen.forEach(st -> assertSane(s, st, 1));
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Guarantee 9 (fault 6): shutdownNow and awaitTermination see a worker whose start is slow

  /**
   * The churn before each round kills that many workers, so the pool's record of started workers
   * holds that many dead ones when the slow start begins: bookkeeping that prunes dead workers must
   * not take a worker whose thread has not started yet for one whose thread has ended.
   */
  private static final int MAX_CHURN = 40;

  @Test
  void shutdownNowInterruptsTheTaskOfAWorkerWhoseThreadStartWasSlow_fault6() throws Exception {
    for (int churn = 0; churn <= MAX_CHURN; churn++) {
      shutdownNowRound(churn);
    }
  }

  private void shutdownNowRound(int churn) throws Exception {
    SlowStart slow = new SlowStart(false);
    try {
      WorkerPool pool = churnedPoolWhoseNextStartIsSlow("fault6now-", churn, slow);
      PoolFixture.Gate late = fixture.gate();
      Runnable lateTask = late.task();
      PoolFixture.Caller<Void> caller = fixture.call("slow-start", () -> pool.execute(lateTask));
      await(slow.inStart);
      PoolFixture.Gate running = fixture.occupy(pool);

      List<Runnable> returned = pool.shutdownNow();
      slow.mayStart.countDown();
      Throwable outcome = caller.outcome(Duration.ofSeconds(5));

      eventually().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(
          running.wasInterrupted()).as("round %d: running task interrupted", churn).isTrue());
      boolean lateRuns = outcome == null && returned.isEmpty();
      if (lateRuns) {
        late.awaitArrival();
        eventually().atMost(Duration.ofSeconds(2)).untilAsserted(() -> assertThat(
            late.wasInterrupted()).as("round %d (churn %d): the task of the worker whose start was"
                + " slow, running after shutdownNow, was interrupted", churn, churn).isTrue());
      }
      assertThat(pool.awaitTermination(5, SECONDS)).as("round %d: terminated", churn).isTrue();
      assertThat(slow.thread.isAlive()).as("round %d: slow worker thread alive", churn).isFalse();
      assertThat(returned).as("round %d: returned by shutdownNow", churn).hasSizeLessThan(2);
      if (outcome != null) {
        assertThat(outcome).isInstanceOf(RejectedExecutionException.class);
        assertThat(returned).as("round %d: a rejected task returned by shutdownNow", churn)
            .isEmpty();
      }
      if (!lateRuns) {
        assertThat(late.hasArrived())
            .as("round %d: a task rejected (%s) or returned by shutdownNow (%s) ran", churn,
                outcome, returned)
            .isFalse();
      }
    } finally {
      slow.release();
    }
  }

  @Test
  void awaitTerminationWaitsForAWorkerWhoseThreadStartWasSlow_fault6() throws Exception {
    for (int churn = 0; churn <= MAX_CHURN; churn++) {
      awaitTerminationRound(churn);
    }
  }

  private void awaitTerminationRound(int churn) throws Exception {
    SlowStart slow = new SlowStart(true);
    try {
      WorkerPool pool = churnedPoolWhoseNextStartIsSlow("fault6await-", churn, slow);
      AtomicInteger ran = new AtomicInteger();
      PoolFixture.Caller<Void> caller =
          fixture.call("slow-start", () -> pool.execute(ran::incrementAndGet));
      await(slow.inStart);
      // starts a worker while the slow one is still starting
      PoolFixture.Gate running = fixture.occupy(pool);

      pool.shutdown();
      running.open();
      slow.mayStart.countDown();
      Throwable outcome = caller.outcome(Duration.ofSeconds(5));
      await(slow.workerReturned); // the worker is done; its thread lingers until mayEnd

      assertThat(pool.awaitTermination(20, MILLISECONDS))
          .as("round %d (churn %d): awaitTermination while worker thread %s is alive", churn,
              churn, slow.thread)
          .isFalse();
      slow.mayEnd.countDown();
      assertThat(pool.awaitTermination(5, SECONDS)).as("round %d: terminated", churn).isTrue();
      assertThat(slow.thread.isAlive()).as("round %d: slow worker thread alive", churn).isFalse();
      assertThat(ran.get()).as("round %d: runs of the task (execute threw %s)", churn, outcome)
          .isEqualTo(outcome == null ? 1 : 0);
    } finally {
      slow.release();
    }
  }

  /**
   * A pool of capacity 2 whose workers die with a failing task, after {@code churn} of them did so,
   * and whose next thread start is {@code slow}.
   */
  private WorkerPool churnedPoolWhoseNextStartIsSlow(String base, int churn, SlowStart slow) {
    String name = uniqueName(base);
    ScriptedFactory factory = new ScriptedFactory(name);
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(2).maxIdle(HOUR)
        .threadFactory(factory).failureHandler(killsItsWorker()).build());
    killWorkers(pool, factory, churn);
    factory.onNextCall(slow::make);
    return pool;
  }

  /** Runs {@code n} tasks that each kill their worker, one after another, until all are dead. */
  private static void killWorkers(WorkerPool pool, ScriptedFactory factory, int n) {
    for (int i = 0; i < n; i++) {
      pool.execute(() -> {
        throw new IllegalStateException("kills its worker");
      });
      factory.awaitAllDead();
    }
  }

  /**
   * A worker thread whose {@code start()} waits for the test before it really starts the thread,
   * and (if it lingers) which stays alive after the worker returned until the test lets it end.
   */
  static final class SlowStart {
    final CountDownLatch inStart = new CountDownLatch(1);
    final CountDownLatch mayStart = new CountDownLatch(1);
    final CountDownLatch workerReturned = new CountDownLatch(1);
    final CountDownLatch mayEnd;
    volatile Thread thread;

    SlowStart(boolean lingers) {
      mayEnd = new CountDownLatch(lingers ? 1 : 0);
    }

    Thread make(Runnable worker) {
      Thread t = new Thread(worker, "slow-start") {
        @Override
        public void start() {
          inStart.countDown();
          awaitQuietly(mayStart, Duration.ofSeconds(30));
          super.start();
        }

        @Override
        public void run() {
          try {
            super.run();
          } finally {
            workerReturned.countDown();
            awaitQuietly(mayEnd, Duration.ofSeconds(30));
          }
        }
      };
      t.setDaemon(true);
      t.setUncaughtExceptionHandler(TestFactories.QUIET);
      thread = t;
      return t;
    }

    void release() {
      mayStart.countDown();
      mayEnd.countDown();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Guarantee 3 (fault 10): a retired worker's seat is free at once

  @Test
  void idleNonblockingPoolNeverRejectsWhileAWorkerExpires_fault10() {
    WorkerPool pool = fixture.pool("fault10-",
        b -> b.capacity(1).nonblocking(true).maxIdle(Duration.ofMillis(10)));
    AtomicInteger ran = new AtomicInteger();
    Runnable task = ran::incrementAndGet;
    int accepted = 0;
    List<String> rejections = new ArrayList<>();
    long end = System.nanoTime() + SECONDS.toNanos(10); // rounds hit the window at timer cadence
    int rounds = 0;
    while (rounds < 300 && System.nanoTime() < end) {
      PoolStats before = pool.stats();
      if (before.idle() != 1) { // no idle worker to expire: make one, and start over once it idles
        try {
          pool.execute(task);
          accepted++;
        } catch (PoolOverloadedException e) {
          rejections.add("making a worker: execute threw \"" + e.getMessage() + "\"");
        }
        int want = accepted;
        eventually().atMost(Duration.ofSeconds(5)).until(() -> ran.get() == want
            && (pool.stats().idle() == 1 || pool.stats().workers() == 0));
        continue;
      }
      // Read with the worker idle: the cleaner gives a slot back before it counts the expiry, so
      // a count taken while the previous expiry was still being counted would make that late
      // increment look like this worker's, while the task just made for it still runs.
      long expired = before.workersExpired();
      // Catch the cleaner in the act: submit the moment it counts the only worker expired.
      long giveUp = System.nanoTime() + SECONDS.toNanos(2);
      boolean missed = false;
      for (PoolStats now = pool.stats(); now.workersExpired() == expired; now = pool.stats()) {
        if (now.workers() == 0) {
          missed = true; // it expired before we looked: make a new one
          break;
        }
        if (System.nanoTime() > giveUp) {
          fail("round %d: the idle worker did not expire within 2 s (%s)", rounds, now);
        }
        Thread.onSpinWait();
      }
      if (!missed) {
        try {
          if (rounds % 2 == 0 ? pool.tryExecute(task) : executed(pool, task)) {
            accepted++;
          } else {
            rejections.add("round " + rounds + ": tryExecute false, " + pool.stats());
          }
        } catch (PoolOverloadedException e) {
          rejections.add("round " + rounds + ": execute threw \"" + e.getMessage() + "\"");
        }
        rounds++;
      }
      int want = accepted;
      eventually().atMost(Duration.ofSeconds(5)).until(() -> ran.get() == want
          && (pool.stats().idle() == 1 || pool.stats().workers() == 0));
    }
    assertThat(rejections.size()).as("rejections by an idle nonblocking pool of capacity 1 at the"
        + " moment its worker expired, in %d rounds; the first: %s", rounds,
        rejections.subList(0, Math.min(3, rejections.size()))).isZero();
    assertThat(rounds).as("rounds that caught the cleaner in the act").isGreaterThanOrEqualTo(50);
    PoolStats stats = pool.stats();
    assertThat(stats.rejected()).as("rejected (%s)", stats).isZero();
    assertThat(stats.submitted()).as("submitted (%s)", stats).isEqualTo(accepted);
    assertThat(stats.completed()).as("completed (%s)", stats).isEqualTo(accepted);
  }

  private static boolean executed(WorkerPool pool, Runnable task) {
    pool.execute(task);
    return true;
  }

  // ---------------------------------------------------------------------------------------------
  // Guarantee 1 (fault 11): shrinking settles at or below the new capacity

  @Test
  void shrinkingResizeLeavesNoWorkerAboveCapacity_fault11() {
    HoldingTicker ticker = new HoldingTicker();
    WorkerPool pool = fixture.pool("fault11-", b -> b.capacity(3).maxIdle(HOUR).ticker(ticker));
    boolean holds = true; // whether the pool reads the ticker as a worker goes idle
    for (int round = 0; round < 50; round++) {
      pool.resize(3);
      List<PoolFixture.Gate> gates = fixture.gates(3);
      gates.forEach(g -> pool.execute(g.task()));
      List<Thread> workers = gates.stream().map(PoolFixture.Gate::awaitArrival).toList();

      // One worker goes idle first; if the pool reads the ticker on the way, it is held there.
      if (holds) {
        ticker.holdNextReadOn(workers.get(2));
      }
      gates.get(2).open();
      if (!holds || !ticker.awaitHeld(Duration.ofMillis(500))) {
        holds = false;
        ticker.release();
        awaitIdle(pool, 1);
      }
      // The shrink begins, then the two others finish their tasks while it runs.
      PoolFixture.Caller<Void> shrink = fixture.call("shrink", () -> pool.resize(1));
      awaitParkedOrDone(shrink.thread(), () -> true);
      gates.get(0).open();
      gates.get(1).open();
      awaitParkedOrDone(workers.get(0), gates.get(0)::passed);
      awaitParkedOrDone(workers.get(1), gates.get(1)::passed);
      ticker.release();
      shrink.result();

      int r = round;
      eventually().atMost(Duration.ofSeconds(5)).until(() -> pool.stats().busy() == 0);
      eventually().atMost(Duration.ofSeconds(2)).untilAsserted(() -> assertThat(
          pool.stats().workers()).as("round %d: workers after resize(1), with nothing running"
              + " (%s)", r, pool.stats()).isLessThanOrEqualTo(1));
    }
    PoolStats stats = pool.stats();
    assertThat(stats.completed()).as("completed (%s)", stats).isEqualTo(150);
    assertThat(stats.submitted()).as("submitted (%s)", stats).isEqualTo(150);
  }

  /** Waits until {@code ready} holds and the thread is parked, blocked or ended. */
  private static void awaitParkedOrDone(Thread t, BooleanSupplier ready) {
    eventually().atMost(Duration.ofSeconds(5)).until(() -> ready.getAsBoolean()
        && switch (t.getState()) {
          case WAITING, TIMED_WAITING, BLOCKED, TERMINATED -> true;
          default -> false;
        });
  }

  /** A system ticker that holds the next read made by one chosen thread until released. */
  static final class HoldingTicker implements Ticker {
    private volatile Thread target;
    private volatile CountDownLatch held = new CountDownLatch(0);
    private volatile CountDownLatch release = new CountDownLatch(0);

    @Override
    public long read() {
      if (target != null && Thread.currentThread() == target) {
        target = null;
        held.countDown();
        awaitQuietly(release, Duration.ofSeconds(30));
      }
      return System.nanoTime();
    }

    void holdNextReadOn(Thread t) {
      held = new CountDownLatch(1);
      release = new CountDownLatch(1);
      target = t;
    }

    boolean awaitHeld(Duration timeout) {
      try {
        return held.await(timeout.toNanos(), NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }

    void release() {
      target = null;
      release.countDown();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Guarantee 11: the rest of the hostile-factory table

  @Test
  void factoryThatBlocksDelaysNoOtherSubmitterWhileAWorkerIsIdle_guarantee11() {
    String name = uniqueName("blockingfactory-");
    CountDownLatch inFactory = new CountDownLatch(1);
    PoolFixture.Gate factoryMay = fixture.gate();
    ScriptedFactory factory = new ScriptedFactory(name);
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(3).maxIdle(HOUR)
        .threadFactory(factory).build());
    PoolFixture.Gate first = fixture.occupy(pool);
    Probe probe = new Probe();
    Probe.Task needsAThread = probe.task();
    factory.onNextCall(r -> {
      inFactory.countDown();
      factoryMay.pass();
      return factory.normal(r);
    });
    PoolFixture.Caller<Void> blocked =
        fixture.call("needs-a-thread", () -> pool.execute(needsAThread));
    await(inFactory);

    first.open(); // its worker is free now; the factory still blocks the first submitter
    eventually().atMost(Duration.ofSeconds(5))
        .until(() -> first.passed() && (pool.stats().idle() == 1 || needsAThread.runs() == 1));

    // Another submitter, every kind of submission: none waits for the blocked factory.
    Probe.Task viaExecute = probe.task();
    Probe.Task viaTryExecute = probe.task();
    Probe.Task viaEnqueue = probe.task();
    fixture.call("execute", () -> pool.execute(viaExecute)).outcome(Duration.ofSeconds(2));
    eventually().atMost(Duration.ofSeconds(2)).until(() -> viaExecute.runs() == 1);
    PoolFixture.Caller<Boolean> tried =
        fixture.call("tryExecute", () -> pool.tryExecute(viaTryExecute));
    assertThat(tried.result(Duration.ofSeconds(2))).as("tryExecute accepted").isTrue();
    eventually().atMost(Duration.ofSeconds(2)).until(() -> viaTryExecute.runs() == 1);
    fixture.call("enqueue", () -> pool.enqueue(viaEnqueue)).outcome(Duration.ofSeconds(2));
    eventually().atMost(Duration.ofSeconds(2)).until(() -> viaEnqueue.runs() == 1);
    assertThat(inFactory.getCount()).isZero();
    assertThat(factoryMay.passed()).as("factory released").isFalse();

    factoryMay.open();
    assertThat(blocked.outcome(Duration.ofSeconds(5))).as("the blocked submitter").isNull();
    eventually().atMost(Duration.ofSeconds(5)).until(() -> needsAThread.runs() == 1
        && pool.stats().completed() == 5 && pool.stats().busy() == 0);
    PoolStats stats = pool.stats();
    assertThat(probe.mostAtOnce()).isLessThanOrEqualTo(3);
    assertThat(stats.submitted()).as("submitted (%s)", stats).isEqualTo(5);
    assertThat(stats.rejected()).as("rejected (%s)", stats).isZero();
    assertThat(stats.workers()).as("workers (%s)", stats).isBetween(1, 3);
    assertThat(stats.waiting()).as("waiting (%s)", stats).isZero();
  }

  @Test
  void factoryThatFailsOnceCostsOnlyThatTaskAndCountersStayExact_guarantee11() throws Exception {
    String name = uniqueName("failsonce-");
    ScriptedFactory factory = new ScriptedFactory(name);
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(2).maxIdle(HOUR)
        .threadFactory(factory).build());
    AtomicInteger ran = new AtomicInteger();
    PoolFixture.Gate busy = fixture.occupy(pool);

    factory.onNextCall(ScriptedFactory::fails);
    Throwable failed = outcomeOf(() -> pool.execute(ran::incrementAndGet)); // needs a new thread
    busy.open();
    int perSubmitter = 250;
    List<PoolFixture.Caller<Integer>> submitters = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      submitters.add(fixture.call("submitter-" + i, () -> {
        int rejected = 0;
        for (int j = 0; j < perSubmitter; j++) {
          try {
            pool.execute(ran::incrementAndGet);
          } catch (RejectedExecutionException e) {
            rejected++;
          }
        }
        return rejected;
      }));
    }
    int laterRejections = 0;
    for (PoolFixture.Caller<Integer> s : submitters) {
      laterRejections += s.result();
    }
    int accepted = 1 + (failed == null ? 1 : 0) + 4 * perSubmitter - laterRejections;
    eventually().atMost(Duration.ofSeconds(10)).until(() -> pool.stats().completed() == accepted
        && pool.stats().busy() == 0);

    if (failed != null) {
      assertThat(failed).isInstanceOf(RejectedExecutionException.class)
          .hasRootCauseMessage("no threads today");
    }
    assertThat(laterRejections).as("rejections after the one failure").isZero();
    PoolStats stats = pool.stats();
    assertThat(ran.get()).as("tasks run").isEqualTo(accepted - 1);
    assertThat(stats.submitted()).as("submitted (%s)", stats).isEqualTo(accepted);
    assertThat(stats.completed()).as("completed (%s)", stats).isEqualTo(accepted);
    assertThat(stats.failed()).as("failed (%s)", stats).isZero();
    assertThat(stats.rejected()).as("rejected (%s)", stats).isEqualTo(failed == null ? 0 : 1);
    assertThat(stats.waiting()).as("waiting (%s)", stats).isZero();
    assertThat(stats.workers()).as("workers (%s)", stats).isBetween(1, 2);
    assertThat(stats.workersStarted() - stats.workersExpired() - stats.workersStopped())
        .as("started - expired - stopped (%s)", stats).isEqualTo(stats.workers());
  }

  // ---------------------------------------------------------------------------------------------
  // Guarantee 7 (suspected in issue 11): a periodic task runs no more after shutdown returns, but
  // for a run that was due already (version 3: a due timer is an accepted task and runs under
  // shutdown; only the timer not yet due is cancelled)

  @Test
  void periodicTaskStartsAtMostItsDueRunAfterShutdownReturns_guarantee7() throws Exception {
    for (int round = 0; round < 100; round++) {
      WorkerPool pool = fixture.pool("periodic-", b -> b.capacity(2));
      AtomicBoolean shutdownReturned = new AtomicBoolean();
      AtomicInteger lateStarts = new AtomicInteger();
      AtomicInteger runs = new AtomicInteger();
      int warmRuns = 1 + round % 4;
      CountDownLatch warm = new CountDownLatch(warmRuns);
      // Odd rounds shut down while a run is in progress, even ones between runs.
      PoolFixture.Gate inProgress = round % 2 == 1 ? fixture.gate() : null;
      ScheduledFuture<?> future = pool.scheduleAtFixedRate(() -> {
        if (shutdownReturned.get()) {
          lateStarts.incrementAndGet();
        }
        int n = runs.incrementAndGet();
        warm.countDown();
        if (inProgress != null && n == warmRuns) {
          inProgress.pass();
        }
      }, 0, 1, MILLISECONDS);
      await(warm);
      if (inProgress != null) {
        inProgress.awaitArrival();
      }

      pool.shutdown();
      shutdownReturned.set(true);
      int atReturn = runs.get();
      if (inProgress != null) {
        inProgress.open();
      }

      assertThat(pool.awaitTermination(5, SECONDS)).as("round %d: terminated", round).isTrue();
      assertThat(lateStarts.get()).as("round %d: runs started after shutdown returned (%d runs"
          + " then, %d now)", round, atReturn, runs.get()).isLessThanOrEqualTo(1);
      assertThat(future.isCancelled()).as("round %d: future cancelled", round).isTrue();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers

  /** A failure handler that throws, so that the worker whose task failed exits. */
  private static Thread.UncaughtExceptionHandler killsItsWorker() {
    return (t, e) -> {
      throw new IllegalStateException("failure handler gives up on: " + e.getMessage());
    };
  }

  /** What a call did: null if it returned normally, else the runtime exception it threw. */
  private static Throwable outcomeOf(PoolFixture.ThrowingRunnable call) {
    try {
      call.run();
      return null;
    } catch (RuntimeException e) {
      return e;
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  /** Gauges that can never be out of range, whatever the pool is doing. */
  private static void assertSane(SoftAssertions s, PoolStats st, int capacity) {
    s.assertThat(st.workers()).as("workers in %s", st).isBetween(0, capacity);
    s.assertThat(st.idle()).as("idle in %s", st).isBetween(0, capacity);
    s.assertThat(st.busy()).as("busy in %s", st).isBetween(0, capacity);
    s.assertThat(st.waiting()).as("waiting in %s", st).isNotNegative();
  }

  /** Counts each task's runs and the most tasks that ever ran at once. */
  static final class Probe {
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicInteger mostAtOnce = new AtomicInteger();

    Task task() {
      return new Task(null);
    }

    /** A task that waits at the gate while it runs. */
    Task task(PoolFixture.Gate gate) {
      return new Task(gate);
    }

    int mostAtOnce() {
      return mostAtOnce.get();
    }

    final class Task implements Runnable {
      private final AtomicInteger runs = new AtomicInteger();
      private final PoolFixture.Gate gate;

      Task(PoolFixture.Gate gate) {
        this.gate = gate;
      }

      @Override
      public void run() {
        mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
        try {
          runs.incrementAndGet();
          if (gate != null) {
            gate.pass();
          }
        } finally {
          running.decrementAndGet();
        }
      }

      int runs() {
        return runs.get();
      }
    }
  }

  /** Suspected item: a wrapped thread counter once produced names like "io--2147483647". */
  @Test
  void defaultThreadNamesStayPositiveAfterTheCounterWraps() throws Exception {
    String name = uniqueName("names");
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(1).build());
    java.lang.reflect.Field counter = BoundedPool.class.getDeclaredField("threadNumber");
    counter.setAccessible(true);
    ((AtomicInteger) counter.get(pool)).set(Integer.MAX_VALUE);
    AtomicReference<String> threadName = new AtomicReference<>();
    CountDownLatch ran = new CountDownLatch(1);
    pool.execute(() -> {
      threadName.set(Thread.currentThread().getName());
      ran.countDown();
    });
    await(ran);
    assertThat(threadName.get()).isEqualTo(name + "-2147483648");
  }
}
