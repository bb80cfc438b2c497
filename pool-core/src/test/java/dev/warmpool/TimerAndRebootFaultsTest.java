package dev.warmpool;

import static dev.warmpool.PoolFixture.await;
import static dev.warmpool.PoolFixture.awaitWaiting;
import static java.util.concurrent.TimeUnit.HOURS;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Regression tests for the faults where timers, lanes, shutdown and reboot race: a {@code schedule}
 * racing {@code shutdown()} or a lane's {@code close()} must be refused or complete (guarantee 7),
 * a due timer waiting in line is accepted work that a graceful shutdown runs and shutdownNow hands
 * back (guarantee 7), and {@code awaitTermination} never reports a pool that a {@code reboot()}
 * reopened as terminated, however the reboot raced the end of termination (guarantee 9).
 *
 * <p>Only the public API is used, so that the tests outlive the engine they were written against.
 * The races are repeated over many rounds, bounded by time; each race test counts the rounds that
 * went wrong, prints the count (the failure rate against a faulty engine) and requires zero.
 */
@Timeout(60) // seconds per test: a hang fails the test instead of stalling the build
class TimerAndRebootFaultsTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private static final Runnable NOOP = () -> { };
  /**
   * Wall-clock budget of one race test (rounds stop early when it is spent): 2 s in the build, 4 s
   * in CI's second pass (scale 2).
   */
  private static final long RACE_BUDGET_NANOS =
      PoolFixture.stress(java.time.Duration.ofSeconds(2)).toNanos();
  /**
   * The schedule races go on past their budget until 50 rounds really raced, up to this hard limit:
   * on a loaded machine fewer rounds race per second, and a test that stopped early would prove
   * less than it claims.
   */
  private static final long RACE_LIMIT_NANOS = SECONDS.toNanos(30);
  private static final int MIN_RACED = 50;
  /** Schedules one racer makes at most per round: it stops as soon as it is refused. */
  private static final int MAX_SCHEDULES = 2_000;
  /** The closing racer closes after a random number (1 to this) of schedule calls. */
  private static final int MAX_AHEAD = Integer.getInteger("ahead", 256);
  /** Threads that schedule in a race round. */
  private static final int SCHEDULERS = Integer.getInteger("schedulers", 2);
  /** How long an outcome that should follow at once may take before the test calls it lost. */
  private static final long SOON_SECONDS = 5;

  // ---------------------------------------------------------------------------------------------
  // Guarantee 7: a schedule racing shutdown() or close() is refused or completes

  /**
   * Fault 3a: {@code schedule} checked that the pool is open and then registered its timer, with no
   * second look, so a {@code shutdown()} between the two missed the timer: its future stayed pending
   * on a terminated pool (forever, for a long delay). Each round races two threads that schedule
   * (delays 0, 1 ms and 1 h, in turn, until refused) against {@code shutdown()}; once the pool has
   * terminated, every future the schedulers got must be done.
   */
  @Test
  void scheduleRacingShutdownIsRefusedOrCompletes_guarantee7() throws Exception {
    long[] delays = {0, MILLISECONDS.toNanos(1), HOURS.toNanos(1)};
    long start = System.nanoTime();
    int rounds = 0;
    int racing = 0;
    int badRounds = 0;
    int pendingShort = 0;
    int pendingLong = 0;
    int scheduledTotal = 0;
    String first = null;
    while (rounds < 2000 && moreRounds(start, racing)) {
      WorkerPool pool = fixture.pool("race3a-", b -> b.capacity(2));
      Race race = race(
          i -> pool.schedule(NOOP, delays[i % delays.length], NANOSECONDS), pool::shutdown);
      List<ScheduledFuture<?>> futures = race.futures();
      racing += race.raced() ? 1 : 0;
      assertThat(pool.awaitTermination(SOON_SECONDS, SECONDS)).as("terminated").isTrue();
      int pending = 0;
      for (ScheduledFuture<?> f : futures) {
        if (!f.isDone()) {
          pending++;
          long left = f.getDelay(MILLISECONDS);
          if (left > 1) {
            pendingLong++; // would stay pending for its hour
          } else {
            pendingShort++; // due or nearly: pending until the timer fires
          }
          if (first == null) {
            first = "round " + rounds + ": a future due in " + left + " ms is pending on"
                + " terminated " + pool;
          }
        }
        f.cancel(false); // leaves nothing on the shared timer for the next round
      }
      if (pending > 0) {
        badRounds++;
      }
      scheduledTotal += futures.size();
      rounds++;
    }
    report("scheduleRacingShutdown", badRounds, rounds, racing);
    assertThat(racing).as("rounds that raced (of %d)", rounds).isGreaterThanOrEqualTo(MIN_RACED);
    assertThat(badRounds)
        .as("rounds (of %d) that left a future pending on a terminated pool (%d due in 1 h, %d due"
            + " in <= 1 ms, of %d scheduled); first: %s", rounds, pendingLong, pendingShort,
            scheduledTotal, first)
        .isZero();
  }

  /**
   * Fault 3b: a lane's {@code schedule} checked that the lane is open and then registered its
   * timer, so a {@code close()} between the two did not cancel it; when due, the timer entered the
   * closed lane, whose drain dropped it without completing its future ({@code get()} hung). Each
   * round races two threads that schedule on a fresh lane (delays 0 and 1 ms, until refused)
   * against {@code close()}. The pool has one seat, so a pool timer scheduled after the race, which the
   * shared timer fires after every lane timer and the pool runs after the lane's drain, marks the
   * point where every lane future must be done.
   */
  @Test
  void laneScheduleRacingLaneCloseIsRefusedOrCompletes_guarantee7() throws Exception {
    WorkerPool pool = fixture.pool("race3b-", b -> b.capacity(1));
    long start = System.nanoTime();
    int rounds = 0;
    int racing = 0;
    int badRounds = 0;
    int pendingFutures = 0;
    int scheduledTotal = 0;
    String first = null;
    while (rounds < 1000 && moreRounds(start, racing)) {
      SerialExecutor lane = pool.newSerialExecutor();
      Race race = race(i -> lane.schedule(NOOP, i % 2, MILLISECONDS), lane::close);
      List<ScheduledFuture<?>> futures = race.futures();
      racing += race.raced() ? 1 : 0;
      // Due after every lane timer (equal deadlines fire in scheduling order); with one seat the
      // pool runs it only after the lane's carrier, dispatched earlier, has drained the lane.
      pool.schedule(NOOP, 1, MILLISECONDS).get(SOON_SECONDS, SECONDS);
      int pending = 0;
      for (ScheduledFuture<?> f : futures) {
        if (!f.isDone()) {
          pending++;
          if (first == null) {
            first = "round " + rounds + ": a lane future is pending " + -f.getDelay(MILLISECONDS)
                + " ms after it was due, on a closed lane";
          }
          f.cancel(false);
        }
      }
      if (pending > 0) {
        badRounds++;
        pendingFutures += pending;
      }
      scheduledTotal += futures.size();
      rounds++;
    }
    report("laneScheduleRacingLaneClose", badRounds, rounds, racing);
    assertThat(racing).as("rounds that raced (of %d)", rounds).isGreaterThanOrEqualTo(MIN_RACED);
    assertThat(badRounds)
        .as("rounds (of %d) that left a lane future pending after close and its delay (%d futures"
            + " of %d scheduled); first: %s", rounds, pendingFutures, scheduledTotal, first)
        .isZero();
  }

  // ---------------------------------------------------------------------------------------------
  // Guarantee 7: a due timer is accepted work

  /**
   * Fault 3c: shutdown cancelled every delayed task that had not started, also a due one already
   * waiting in the pool's line, which is accepted work: a graceful {@code shutdown()} must run it.
   * The pool's only seat is held by a gated task, so the due timer waits in line; then the pool
   * shuts down and the gate opens: the timer's task must run and its future complete normally.
   */
  @ParameterizedTest(name = "delay {0} ms")
  @ValueSource(longs = {0, 1})
  void dueTimerWaitingInLineRunsUnderShutdown_guarantee7(long delayMillis) throws Exception {
    WorkerPool pool = fixture.pool("due3c-", b -> b.capacity(1));
    PoolFixture.Gate gate = fixture.occupy(pool);
    CountDownLatch ran = new CountDownLatch(1);
    ScheduledFuture<String> timer = pool.schedule(() -> {
      ran.countDown();
      return "ran";
    }, delayMillis, MILLISECONDS);
    awaitWaiting(pool, 1); // due, handed to the pool, waiting in line for the seat

    pool.shutdown();
    gate.open();

    assertThat(outcome(timer)).as("outcome of the due timer's future").isEqualTo("ran");
    assertThat(ran.getCount()).as("the due timer's task ran").isZero();
    assertThat(pool.awaitTermination(SOON_SECONDS, SECONDS)).as("terminated").isTrue();
  }

  /**
   * Fault 3c, shutdownNow: a due timer waiting in line is accepted work, so shutdownNow hands it
   * back; what it hands back must still run the timer's task when the caller runs it (today the
   * timer is cancelled first, so the handed-back task does nothing).
   */
  @ParameterizedTest(name = "delay {0} ms")
  @ValueSource(longs = {0, 1})
  void dueTimerWaitingInLineIsHandedBackByShutdownNow_guarantee7(long delayMillis)
      throws Exception {
    WorkerPool pool = fixture.pool("due3c-now-", b -> b.capacity(1));
    PoolFixture.Gate gate = fixture.occupy(pool);
    CountDownLatch ran = new CountDownLatch(1);
    ScheduledFuture<?> timer = pool.schedule(ran::countDown, delayMillis, MILLISECONDS);
    awaitWaiting(pool, 1);

    List<Runnable> handedBack = pool.shutdownNow();

    assertThat(handedBack).as("tasks handed back: the due timer").hasSize(1);
    assertThat(ran.getCount()).as("not run by the pool").isEqualTo(1);
    handedBack.get(0).run();
    assertThat(ran.getCount()).as("the handed-back timer runs its task when run (future %s)",
        timer.isCancelled() ? "cancelled" : timer.isDone() ? "done" : "pending").isZero();
    assertThat(pool.awaitTermination(SOON_SECONDS, SECONDS)).as("terminated").isTrue();
  }

  /**
   * Guarantee 7, shutdownNow, for whoever waits on the timer: a due timer handed back has a future
   * that says done (cancelled) and a {@link CancellationAware} task that hears of it once, so an
   * adapter (a Kotlin {@code delay}) can end what waits on it instead of hanging on a terminated
   * pool; what is handed back is the task as scheduled, and it still runs when its caller runs it.
   * On a subpool too.
   */
  @ParameterizedTest(name = "subpool {0}")
  @ValueSource(booleans = {false, true})
  void dueTimerHandedBackByShutdownNowCompletesItsFutureAndTellsItsTask_guarantee7(boolean subpool)
      throws Exception {
    WorkerPool parent = fixture.pool("due3d-now-", b -> b.capacity(1));
    WorkerPool pool = subpool ? parent.newSubpool("due3d-sub", 1) : parent;
    PoolFixture.Gate gate = fixture.occupy(pool);
    CountDownLatch ran = new CountDownLatch(1);
    AtomicInteger told = new AtomicInteger();
    CancellationAware task = new CancellationAware() {
      @Override
      public void run() {
        ran.countDown();
      }

      @Override
      public void onCancel() {
        told.incrementAndGet();
      }
    };
    ScheduledFuture<?> timer = pool.schedule(task, 0, MILLISECONDS);
    awaitWaiting(pool, 1);

    List<Runnable> handedBack = pool.shutdownNow();

    assertThat(handedBack).as("tasks handed back: the due timer's task").containsExactly(task);
    assertThat(timer.isCancelled()).as("the handed-back timer's future is cancelled").isTrue();
    assertThat(told.get()).as("its task heard onCancel").isEqualTo(1);
    handedBack.get(0).run();
    assertThat(ran.getCount()).as("the handed-back task still runs when run").isZero();
    assertThat(pool.awaitTermination(SOON_SECONDS, SECONDS)).as("terminated").isTrue();
    parent.shutdownNow();
  }

  // ---------------------------------------------------------------------------------------------
  // Guarantee 9: awaitTermination never succeeds for a pool a reboot() reopened

  /**
   * Fault 4, pool: termination counted its latch down last, re-reading the field, so a reboot
   * between the terminated state and the count-down got its fresh latch counted down, and
   * {@code awaitTermination} returned true on the running pool. Each round: a thread spins on
   * {@code isTerminated()} and reboots the pool the moment it reads true, while the pool's last
   * task ends after {@code shutdown()}. Once the old worker thread has ended, the rebooted (running)
   * pool must not report termination.
   */
  @Test
  void rebootRacingEndOfTerminationLeavesPoolRunning_guarantee9() throws Exception {
    WorkerPool pool = fixture.pool("reboot4-", b -> b.capacity(1));
    PoolFixture.Gate gate = fixture.occupy(pool);
    Thread worker = gate.thread();
    long end = System.nanoTime() + RACE_BUDGET_NANOS;
    int rounds = 0;
    int badRounds = 0;
    String first = null;
    while (rounds < 2000 && System.nanoTime() < end) {
      PoolFixture.Gate last = gate;
      rebootWhenTerminated(pool, () -> {
        pool.shutdown();
        last.open();
      }, last);
      worker.join(SECONDS.toMillis(SOON_SECONDS)); // the worker that ran the last task has ended
      assertThat(worker.isAlive()).as("round %d: old worker alive", rounds).isFalse();
      assertThat(pool.isShutdown()).as("round %d: shut down after reboot", rounds).isFalse();
      if (pool.awaitTermination(0, NANOSECONDS)) {
        badRounds++;
        if (first == null) {
          first = "round " + rounds + ": awaitTermination true on rebooted, running " + pool;
        }
      }
      // The next round's last task; the running pool holds it, so it must not be terminated.
      PoolFixture.Gate next = fixture.occupy(pool);
      worker = next.thread();
      assertThat(pool.isTerminated()).as("round %d: terminated with a task running", rounds)
          .isFalse();
      gate = next;
      rounds++;
    }
    report("rebootRacingEndOfTermination(pool)", badRounds, rounds);
    assertThat(rounds).as("rounds run").isGreaterThanOrEqualTo(200);
    assertThat(badRounds)
        .as("rounds (of %d) in which awaitTermination returned true on a rebooted pool; first: %s",
            rounds, first)
        .isZero();
  }

  /**
   * Fault 4, subpool: as for a pool, and wider, since a subpool tells its parent of its termination
   * before counting its latch down. Each round races the reboot against the end of termination,
   * then submits a gated task to the rebooted subpool and checks that {@code awaitTermination} is
   * false, and that {@code close()} on another thread returns only after that task ran.
   */
  @Test
  void rebootRacingEndOfTerminationLeavesSubpoolRunning_guarantee9() throws Exception {
    // One parent seat: a subpool task runs on the parent's worker only after the previous one has
    // finished, including the termination work that follows it.
    WorkerPool parent = fixture.pool("reboot4-parent-", b -> b.capacity(1));
    WorkerPool sub = parent.newSubpool("sub", 1);
    PoolFixture.Gate gate = fixture.occupy(sub);
    long end = System.nanoTime() + RACE_BUDGET_NANOS;
    int rounds = 0;
    int awaitTrue = 0;
    int closeEarly = 0;
    String first = null;
    while (rounds < 1000 && System.nanoTime() < end) {
      PoolFixture.Gate last = gate;
      rebootWhenTerminated(sub, () -> {
        sub.shutdown();
        last.open();
      }, last);

      // the parent's worker is done with the terminated round's task once this one has arrived
      PoolFixture.Gate running = fixture.occupy(sub);
      boolean bad = false;
      if (sub.awaitTermination(0, NANOSECONDS)) {
        awaitTrue++;
        bad = true;
        if (first == null) {
          first = "round " + rounds + ": awaitTermination true on rebooted " + sub
              + " with a task running";
        }
      }

      // close() on another thread must not return while the task runs.
      AtomicReference<Boolean> taskDoneWhenCloseReturned = new AtomicReference<>();
      PoolFixture.Caller<Void> closer = fixture.call("close", () -> {
        sub.close();
        taskDoneWhenCloseReturned.set(running.passed());
      });
      spinUntil(() -> closer.isDone() || (sub.isShutdown() && isWaiting(closer.thread())));
      running.open();
      closer.result();
      if (!taskDoneWhenCloseReturned.get()) {
        closeEarly++;
        if (!bad && first == null) {
          first = "round " + rounds + ": close() returned while the task of rebooted " + sub
              + " ran";
        }
        bad = true;
      }
      // Ready for the next round: a running subpool with a gated task.
      spinUntil(sub::isTerminated);
      sub.reboot();
      gate = fixture.occupy(sub);
      rounds++;
    }
    report("rebootRacingEndOfTermination(subpool): awaitTermination true", awaitTrue, rounds);
    report("rebootRacingEndOfTermination(subpool): close() returned early", closeEarly, rounds);
    assertThat(rounds).as("rounds run").isGreaterThanOrEqualTo(100);
    assertThat(awaitTrue + closeEarly)
        .as("rounds (of %d) in which the rebooted subpool reported termination: awaitTermination"
            + " true in %d, close() returned while its task ran in %d; first: %s", rounds,
            awaitTrue, closeEarly, first)
        .isZero();
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * Starts a thread that spins on {@code isTerminated()} and reboots the pool the moment it reads
   * true; once it spins, runs {@code terminate} (which must make the pool terminate), and waits
   * until the thread has rebooted the pool.
   */
  private static void rebootWhenTerminated(WorkerPool pool, Runnable terminate,
      PoolFixture.Gate lastTask) throws InterruptedException {
    CountDownLatch spinning = new CountDownLatch(1);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread rebooter = new Thread(() -> {
      spinning.countDown();
      try {
        spinUntil(pool::isTerminated);
        pool.reboot();
      } catch (Throwable t) {
        failure.set(t);
      }
    }, "rebooter");
    rebooter.setDaemon(true);
    rebooter.start();
    await(spinning);
    terminate.run();
    join(rebooter);
    if (failure.get() != null) {
      throw new AssertionError("the rebooter failed (last task passed: " + lastTask.passed() + ")",
          failure.get());
    }
  }

  /**
   * One round of a schedule-versus-close race: {@link #SCHEDULERS} threads call {@code schedule}
   * (with a running index) until refused, while another thread calls {@code close} once they have
   * made a random number of calls between 1 and {@link #MAX_AHEAD}. Returns every future the
   * schedulers got; a refusal ({@code RejectedExecutionException}) is an allowed outcome, anything
   * else fails the test.
   */
  private static Race race(IntFunction<ScheduledFuture<?>> schedule, Runnable close)
      throws InterruptedException {
    CountDownLatch start = new CountDownLatch(1);
    AtomicInteger calls = new AtomicInteger();
    AtomicInteger refusals = new AtomicInteger();
    AtomicReference<Throwable> unexpected = new AtomicReference<>();
    List<List<ScheduledFuture<?>>> got = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int n = 0; n < SCHEDULERS; n++) {
      List<ScheduledFuture<?>> mine = new ArrayList<>(); // this scheduler's; read after join
      got.add(mine);
      threads.add(racer("scheduler-" + n, start, unexpected, () -> {
        for (int i = 0; i < MAX_SCHEDULES; i++) {
          ScheduledFuture<?> f;
          try {
            f = schedule.apply(i);
          } catch (RejectedExecutionException refused) {
            refusals.incrementAndGet();
            return; // refused at the call, as the guarantee allows
          }
          mine.add(f);
          calls.incrementAndGet();
        }
      }));
    }
    int closeAfter = 1 + ThreadLocalRandom.current().nextInt(MAX_AHEAD);
    threads.add(racer("closer", start, unexpected, () -> {
      spinUntil(() -> calls.get() >= closeAfter); // close while the schedulers are in their loops
      close.run();
    }));
    start.countDown();
    for (Thread t : threads) {
      join(t);
    }
    assertThat(unexpected.get()).as("what a racer threw").isNull();
    List<ScheduledFuture<?>> all = new ArrayList<>();
    got.forEach(all::addAll);
    return new Race(all, refusals.get() > 0);
  }

  /**
   * What a race round gave: the schedulers' futures, and whether a scheduler was refused (else all
   * of them ran out of calls before the close, and the round did not race).
   */
  /** Within the budget; past it only until {@link #MIN_RACED} rounds raced, up to the limit. */
  private static boolean moreRounds(long start, int raced) {
    long spent = System.nanoTime() - start;
    return spent < RACE_BUDGET_NANOS || (raced < MIN_RACED && spent < RACE_LIMIT_NANOS);
  }

  private record Race(List<ScheduledFuture<?>> futures, boolean raced) {}

  /** A daemon thread that waits for {@code start}, runs {@code body} and records what it throws. */
  private static Thread racer(String name, CountDownLatch start,
      AtomicReference<Throwable> unexpected, Runnable body) {
    Thread t = new Thread(() -> {
      await(start);
      try {
        body.run();
      } catch (Throwable e) {
        unexpected.compareAndSet(null, e);
      }
    }, name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static void join(Thread t) throws InterruptedException {
    t.join(SECONDS.toMillis(SOON_SECONDS));
    if (t.isAlive()) {
      AssertionError stuck = new AssertionError(t.getName() + " still running: " + t.getState());
      stuck.setStackTrace(t.getStackTrace());
      throw stuck;
    }
  }

  /** Busy-waits (a race needs the reaction at once) until the condition holds, at most 5 s. */
  private static void spinUntil(BooleanSupplier condition) {
    long deadline = System.nanoTime() + SECONDS.toNanos(SOON_SECONDS);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("condition not reached within " + SOON_SECONDS + " s");
      }
      Thread.onSpinWait();
    }
  }

  private static boolean isWaiting(Thread t) {
    Thread.State s = t.getState();
    return s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING;
  }

  /** The future's value, or a description of how it failed to complete normally. */
  private static Object outcome(Future<?> f) throws InterruptedException {
    try {
      return f.get(SOON_SECONDS, SECONDS);
    } catch (CancellationException e) {
      return "cancelled";
    } catch (ExecutionException e) {
      return "failed: " + e.getCause();
    } catch (TimeoutException e) {
      return "pending after " + SOON_SECONDS + " s";
    }
  }

  private static void report(String test, int bad, int rounds) {
    report(test, bad, rounds, rounds);
  }

  private static void report(String test, int bad, int rounds, int racing) {
    System.out.printf("[TimerAndRebootFaultsTest] %s: %d of %d rounds went wrong (%.1f%%);"
        + " %d rounds raced%n", test, bad, rounds, rounds == 0 ? 0.0 : 100.0 * bad / rounds,
        racing);
  }
}
