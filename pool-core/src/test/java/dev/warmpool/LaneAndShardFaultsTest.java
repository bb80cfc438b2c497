package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitWaiting;
import static dev.warmpool.PoolFixture.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongConsumer;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Regression tests for faults 5 to 8 of issue 11: where serial lanes meet closing and cancellation,
 * and where a sharded pool places a task. Each test is named after the guarantee it protects
 * (DESIGN.md section 4) and checks outcomes through the public API only: what each call returned or
 * threw, which tasks ran, {@code stats()} at quiescence.
 *
 * <p>Faults 5 and 6 are races without a hook to force them, so those tests repeat a two-party race
 * many times: the test thread and one {@link Racer} thread start each round together (a spin
 * rendezvous, since a park/unpark hand-off is slower than the race window) and each waits a random
 * few spins first, so that the rounds sweep the offsets between the two calls. They stop at the
 * first round that shows the fault, else after {@code ROUNDS} rounds or {@code BUDGET}.
 */
@Timeout(30) // seconds per test: a hang fails the test instead of stalling the build
class LaneAndShardFaultsTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  /** How long an outcome that should follow at once may take before the test calls it lost. */
  private static final Duration SOON = Duration.ofSeconds(5);
  /** Upper bound on the rounds of one racing test. */
  private static final int ROUNDS = 20_000;
  /** Upper bound on the racing time of one test; each test stays well under 5 s in all. */
  private static final Duration BUDGET = Duration.ofMillis(2_500);

  // ---------------------------------------------------------------------------------------------
  // The two-party race

  /**
   * A thread that runs {@code action.accept(round)} once the test thread calls {@link #go(long)} for
   * that round, spinning (with an occasional yield) in between, so that both start within well under
   * a microsecond of each other.
   */
  static final class Racer implements AutoCloseable {
    private final AtomicLong go = new AtomicLong();
    private final AtomicLong done = new AtomicLong();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final Thread thread;

    Racer(String name, LongConsumer action) {
      thread = new Thread(() -> {
        try {
          for (long round = 1; ; round++) {
            long g;
            int spins = 0;
            while ((g = go.get()) < round) {
              if (g < 0) {
                return;
              }
              if ((++spins & 63) == 0) {
                Thread.yield(); // let the pool's workers run on a small machine
              } else {
                Thread.onSpinWait();
              }
            }
            action.accept(round);
            done.set(round);
          }
        } catch (Throwable t) {
          failure.set(t);
          done.set(Long.MAX_VALUE);
        }
      }, name);
      thread.setDaemon(true);
      thread.start();
    }

    void go(long round) {
      go.set(round);
    }

    /** Waits until the racer finished the round; false if it has not within {@code max}. */
    boolean awaitDone(long round, Duration max) {
      long deadline = System.nanoTime() + max.toNanos();
      int spins = 0;
      while (done.get() < round) {
        if (System.nanoTime() - deadline > 0) {
          return false;
        }
        if ((++spins & 63) == 0) {
          Thread.yield();
        } else {
          Thread.onSpinWait();
        }
      }
      Throwable t = failure.get();
      if (t != null) {
        throw new AssertionError("the racer failed", t);
      }
      return true;
    }

    @Override
    public void close() throws InterruptedException {
      go.set(-1);
      thread.interrupt();
      thread.join(SOON.toMillis());
    }
  }

  /** Spins a random number of times below {@code bound}: the offset of one side of a race. */
  static void jitter(int bound) {
    for (int i = ThreadLocalRandom.current().nextInt(bound); i > 0; i--) {
      Thread.onSpinWait();
    }
  }

  /** Spins {@code n} times. */
  static void spin(int n) {
    for (int i = n; i > 0; i--) {
      Thread.onSpinWait();
    }
  }

  private static boolean overBudget(long startNanos) {
    return System.nanoTime() - startNanos > BUDGET.toNanos();
  }

  /**
   * Returns once the shared timer has fired every task that was due when this was called: it fires
   * in deadline order, ties first-in first-out, so a marker due 1 ns from now on a pool of its own
   * runs after them (not 0: a zero delay is handed on at the call, without the timer).
   */
  private void awaitTimerPassedDueTasks() throws Exception {
    WorkerPool marker = fixture.pool("marker", b -> b.capacity(1));
    marker.schedule(() -> { }, 1, TimeUnit.NANOSECONDS).get(SOON.toSeconds(), TimeUnit.SECONDS);
  }

  // ---------------------------------------------------------------------------------------------
  // Guarantee 9: a lane's close() racing its execute()

  /**
   * Fault 5. {@code SerialLane.close()} checked that the queue was empty, took the lane's carrier
   * out of the pool's line, and only then cleared the lane's dispatched flag: an {@code execute}
   * whose task landed in between saw the lane still dispatched, returned normally, and left its task
   * in a closed lane that nothing would ever drain (never run, withdrawn or handed back).
   *
   * <p>Each round, with the pool's only seat held by a gated task, a new lane takes a place in the
   * pool's line (one execute, whose carrier waits there), then the test thread closes the lane while
   * the racer executes a task on it. Guarantee 9: the execute either throws
   * {@link RejectedExecutionException} or its task was accepted; an accepted task either runs or is
   * cancelled by the close (then it leaves {@code submitted}, guarantee 13). So once the gate opens
   * and the pool is idle, {@code submitted == completed + failed}, and {@code submitted} counts
   * exactly the gated task and the tasks that ran. A stranded task stays in {@code submitted}
   * forever.
   */
  @Test
  void laneCloseRacingExecuteNeverStrandsAnAcceptedTask_guarantee9() throws Exception {
    WorkerPool pool = fixture.pool("close-race", b -> b.capacity(1).maxWaiting(1_000_000));
    PoolFixture.Gate seat = fixture.occupy(pool);

    AtomicInteger ran = new AtomicInteger();
    AtomicInteger refused = new AtomicInteger();
    AtomicInteger returned = new AtomicInteger();
    SerialExecutor[] lanes = new SerialExecutor[ROUNDS + 1];
    boolean[] refusedIn = new boolean[ROUNDS + 1];
    int rounds = 0;
    // How long the closer waits after the start (in spins): adapted each round so that the racing
    // execute arrives about when close() begins, where the fault lies; a late racer (refused) makes
    // the closer wait longer, an early one shorter.
    int delay = 0;
    long start = System.nanoTime();
    try (Racer racer = new Racer("racer-execute", round -> {
      try {
        lanes[(int) round].execute(() -> ran.incrementAndGet());
        returned.incrementAndGet();
      } catch (RejectedExecutionException closed) {
        refused.incrementAndGet();
        refusedIn[(int) round] = true;
      }
    })) {
      while (rounds < ROUNDS && !overBudget(start)) {
        int r = ++rounds;
        PoolStats before = pool.stats();
        SerialExecutor lane = pool.newSerialExecutor();
        lane.execute(() -> ran.incrementAndGet()); // admitted: the carrier waits in the pool's line
        lanes[r] = lane;
        racer.go(r); // publishes lanes[r]
        spin(delay + ThreadLocalRandom.current().nextInt(5));
        lane.close();
        assertThat(racer.awaitDone(r, SOON)).as("the racing execute returned").isTrue();
        lanes[r] = null;
        delay = refusedIn[r] ? delay + 2 : Math.max(0, delay - 2);
        // Nothing runs while the seat is held. A round whose lane left the line (waiting back where
        // it was) while a task of it still counts as accepted has stranded that task: stop here,
        // the check below reports it.
        PoolStats after = pool.stats();
        if (after.waiting() == before.waiting() && after.submitted() > before.submitted()) {
          break;
        }
      }
    }
    seat.open();

    eventually().atMost(SOON).untilAsserted(() -> {
      PoolStats s = pool.stats();
      assertThat(s.waiting()).as("waiting (%s)", s).isZero();
      assertThat(s.busy()).as("busy (%s)", s).isZero();
      assertThat(s.completed()).as("completed (%s)", s).isEqualTo(1 + ran.get());
    });
    PoolStats s = pool.stats();
    long stranded = s.submitted() - s.completed() - s.failed();
    assertThat(stranded)
        .as("accepted lane tasks never run, withdrawn or handed back after %d rounds of close()"
            + " racing execute() (%d executes returned normally, %d refused, %d tasks ran): %s",
            rounds, returned.get(), refused.get(), ran.get(), s)
        .isZero();
    assertThat(s.submitted()).as("submitted: the gated task and the lane tasks that ran (%s)", s)
        .isEqualTo(1 + ran.get());
    assertThat(s.failed()).isZero();
  }

  // ---------------------------------------------------------------------------------------------
  // Guarantee 14: a sharded pool rejects (or queues) only when every shard is full

  /** The four submitting calls of guarantee 14. */
  enum Call {
    EXECUTE, TRY_EXECUTE, ENQUEUE, SUBMIT;

    /** Submits the task; false if it was rejected (an exception or {@code false}). */
    boolean submit(WorkerPool pool, Runnable task) {
      try {
        switch (this) {
          case EXECUTE -> pool.execute(task);
          case TRY_EXECUTE -> {
            return pool.tryExecute(task);
          }
          case ENQUEUE -> pool.enqueue(task);
          case SUBMIT -> pool.submit(task);
          default -> throw new AssertionError(this);
        }
        return true;
      } catch (RejectedExecutionException rejected) {
        return false;
      }
    }
  }

  /**
   * Runs rounds of two racing submissions of gated tasks on a sharded pool with exactly two free
   * seats, and returns a description of the first round in which {@code faulty} (given the two
   * outcomes) holds, or null if none did.
   */
  private String raceTwoSubmissions(ShardedPool pool, RoundCheck faulty) throws Exception {
    Call[] calls = Call.values();
    AtomicReference<CountDownLatch> gate = new AtomicReference<>();
    AtomicReference<CountDownLatch> finished = new AtomicReference<>();
    Runnable[] tasks = new Runnable[2];
    boolean[] accepted = new boolean[2];
    long base = pool.stats().completed();
    long start = System.nanoTime();
    try (Racer racer = new Racer("racer-submit", round -> {
      jitter(16);
      accepted[1] = calls[(int) ((round / 4) % 4)].submit(pool, tasks[1]);
    })) {
      for (int r = 1; r <= ROUNDS && !overBudget(start); r++) {
        CountDownLatch open = new CountDownLatch(1);
        CountDownLatch ends = new CountDownLatch(2);
        gate.set(open);
        finished.set(ends);
        for (int i = 0; i < 2; i++) {
          tasks[i] = () -> {
            try {
              if (!open.await(SOON.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError("round gate never opened");
              }
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            } finally {
              ends.countDown();
            }
          };
        }
        Call mine = calls[r % 4];
        Call theirs = calls[(r / 4) % 4];
        racer.go(r); // publishes tasks
        jitter(16);
        accepted[0] = mine.submit(pool, tasks[0]);
        boolean returned = racer.awaitDone(r, Duration.ofMillis(500));
        String fault = faulty.check(pool, mine, accepted[0], theirs, returned && accepted[1],
            returned);
        open.countDown();
        if (!returned) {
          assertThat(racer.awaitDone(r, SOON)).as("the racer's call returned after the gate opened")
              .isTrue();
        }
        if (fault != null) {
          return "round " + r + ": " + fault;
        }
        int ran = (accepted[0] ? 1 : 0) + (accepted[1] ? 1 : 0);
        for (int i = ran; i < 2; i++) {
          ends.countDown(); // a rejected task never runs
        }
        assertThat(ends.await(SOON.toMillis(), TimeUnit.MILLISECONDS))
            .as("round %d: both accepted tasks ran", r).isTrue();
        base += ran;
        long expected = base;
        eventually().atMost(SOON).until(() -> pool.stats().completed() == expected
            && pool.stats().busy() == 0);
      }
    }
    return null;
  }

  @FunctionalInterface
  interface RoundCheck {
    /** Given the two calls of a round and their outcomes, the fault it shows, or null. */
    String check(ShardedPool pool, Call mine, boolean mineAccepted, Call theirs,
        boolean theirsAccepted, boolean theirsReturned);
  }

  private static String shardBusy(ShardedPool pool) {
    List<String> parts = new ArrayList<>();
    for (int i = 0; i < pool.shards(); i++) {
      PoolStats s = pool.stats(i);
      parts.add("shard " + i + ": busy " + s.busy() + "/" + s.capacity() + ", waiting "
          + s.waiting());
    }
    return String.join("; ", parts);
  }

  /**
   * Fault 6, nonblocking. The sharded pool's enqueue (and so submit) picked the first shard whose
   * free-seat hint said yes and then let that shard decide alone: when the other submission of the
   * round took the seat between the hint and the dispatch, the shard rejected the task although the
   * other shard had a free seat.
   *
   * <p>Two shards of one seat each, least-busy placement (so both submissions of a round first look
   * at the same shard); each round two gated tasks race, one from the test thread and one from the
   * racer, through every pair of the four submitting calls. Two seats, two tasks: guarantee 14 says
   * neither may be rejected.
   */
  @Test
  void nonblockingShardedPoolRejectsOnlyWhenEveryShardIsFull_guarantee14() throws Exception {
    ShardedPool pool = (ShardedPool) fixture.track(ShardedPool.of(2,
        ShardedPool.Placement.LEAST_BUSY,
        WorkerPool.builder().name(PoolFixture.uniqueName("shard-nb")).capacity(1)
            .nonblocking(true)));

    String fault = raceTwoSubmissions(pool, (p, mine, mineOk, theirs, theirsOk, theirsReturned) ->
        mineOk && theirsOk ? null
            : String.format("%s %s and %s %s with two seats for two tasks (%s)", mine,
                mineOk ? "accepted" : "rejected", theirs, theirsOk ? "accepted" : "rejected",
                shardBusy(p)));

    assertThat(fault).as("a rejection while a shard had a free seat").isNull();
    assertThat(pool.stats().rejected()).as("rejected").isZero();
  }

  /**
   * Fault 6, blocking. The same race in blocking mode: enqueue and submit put the task in the line
   * of the shard the other submission had just filled, where it waits while the other shard idles.
   *
   * <p>As above, two seats and two racing gated tasks per round; once both calls returned (a
   * blocked {@code execute} counts as not returned), guarantee 14 says both tasks hold seats: none
   * waits in any shard's line and nothing was rejected.
   */
  @Test
  void blockingShardedPoolQueuesOnlyWhenEveryShardIsFull_guarantee14() throws Exception {
    ShardedPool pool = (ShardedPool) fixture.track(ShardedPool.of(2,
        ShardedPool.Placement.LEAST_BUSY,
        WorkerPool.builder().name(PoolFixture.uniqueName("shard-bl")).capacity(1)));

    String fault = raceTwoSubmissions(pool, (p, mine, mineOk, theirs, theirsOk, theirsReturned) -> {
      PoolStats s = p.stats();
      if (mineOk && theirsOk && s.waiting() == 0) {
        return null;
      }
      return String.format("%s %s, %s %s, waiting %d with two seats for two tasks (%s)", mine,
          mineOk ? "accepted" : "rejected", theirs,
          !theirsReturned ? "still blocked" : theirsOk ? "accepted" : "rejected", s.waiting(),
          shardBusy(p));
    });

    assertThat(fault).as("a task waiting in line (or rejected) while a shard had a free seat")
        .isNull();
    assertThat(pool.stats().rejected()).as("rejected").isZero();
  }

  // ---------------------------------------------------------------------------------------------
  // Guarantee 13: a cancelled lane task

  /**
   * Fault 7. A lane's delayed task that came due while the lane was busy sat in the lane's queue;
   * cancelling its future then kept it there, and when the lane reached it the (cancelled, so empty)
   * run was counted: {@code submitted} and {@code completed} both counted a task that never ran.
   * Guarantee 13: a cancelled lane task counts in none of submitted, completed, failed.
   */
  @Test
  void cancelledLaneTaskCountsNowhere_guarantee13() throws Exception {
    WorkerPool pool = fixture.pool("lane-cancel", b -> b.capacity(2));
    SerialExecutor lane = pool.newSerialExecutor();
    PoolFixture.Gate busy = fixture.occupy(lane); // the lane is running its first task

    AtomicInteger runs = new AtomicInteger();
    ScheduledFuture<?> delayed = lane.schedule(runs::incrementAndGet, 0, TimeUnit.MILLISECONDS);
    awaitTimerPassedDueTasks(); // due: handed to the lane, queued behind the running task
    assertThat(pool.stats().submitted()).as("the due task entered the lane (%s)", pool.stats())
        .isEqualTo(2);
    assertThat(delayed.cancel(false)).as("cancelled before it ran").isTrue();

    CountDownLatch after = new CountDownLatch(1);
    lane.execute(after::countDown); // runs after everything queued before it in the lane
    busy.open();
    PoolFixture.await(after);

    eventually().atMost(SOON).untilAsserted(() -> {
      PoolStats s = pool.stats();
      assertThat(s.busy()).as("busy (%s)", s).isZero();
      assertThat(s.completed() + s.failed()).as("completed + failed (%s)", s)
          .isEqualTo(s.submitted());
    });
    assertThat(runs.get()).as("runs of the cancelled lane task").isZero();
    assertThat((Future<?>) delayed).isCancelled();
    PoolStats s = pool.stats();
    assertThat(s.submitted()).as("submitted: the gated task and the marker only (%s)", s)
        .isEqualTo(2);
    assertThat(s.completed()).as("completed: the gated task and the marker only (%s)", s)
        .isEqualTo(2);
    assertThat(s.failed()).as("failed (%s)", s).isZero();
  }

  /**
   * Fault 8. A lane whose only pending task was a due delayed task kept its carrier in the pool's
   * line after that task was cancelled: {@code waiting} stayed 1 while the pool was full, a place in
   * line held for nothing. Guarantee 13: a lane whose last pending task is cancelled gives up its
   * place in line at once, as a withdrawn task does (section 3: it leaves the line at once and
   * {@code stats().waiting} drops).
   */
  @Test
  void laneWhoseLastTaskIsCancelledLeavesTheLine_guarantee13() throws Exception {
    WorkerPool pool = fixture.pool("lane-line", b -> b.capacity(1));
    PoolFixture.Gate seat = fixture.occupy(pool); // the pool is full

    SerialExecutor lane = pool.newSerialExecutor();
    AtomicInteger runs = new AtomicInteger();
    ScheduledFuture<?> delayed = lane.schedule(runs::incrementAndGet, 0, TimeUnit.MILLISECONDS);
    awaitWaiting(pool, 1); // due: the lane's carrier waits in the pool's line
    assertThat(delayed.cancel(false)).as("cancelled before it ran").isTrue();

    eventually().atMost(Duration.ofSeconds(1)).untilAsserted(() ->
        assertThat(pool.stats().waiting())
            .as("waiting after the lane's only pending task was cancelled (%s)", pool.stats())
            .isZero());

    // The lane still works afterwards, and the cancelled task never runs.
    seat.open();
    CountDownLatch after = new CountDownLatch(1);
    lane.execute(after::countDown);
    PoolFixture.await(after);
    eventually().atMost(SOON).untilAsserted(() -> {
      PoolStats s = pool.stats();
      assertThat(s.busy()).as("busy (%s)", s).isZero();
      assertThat(s.completed()).as("completed (%s)", s).isEqualTo(2);
      assertThat(s.submitted()).as("submitted (%s)", s).isEqualTo(2);
    });
    assertThat(runs.get()).as("runs of the cancelled lane task").isZero();
  }
}
