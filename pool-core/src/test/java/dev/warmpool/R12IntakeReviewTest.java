package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review r12 of the waiting line's two-lock intake (issue 33; the intake measured slower on a quiet
 * machine and was taken out again, see docs/benchmarks/experiment-speed4.md). F1 (a joiner must not
 * join while a reboot's reopen runs) and F2 (the line's size never reads above its bound) failed
 * 3/3 against the intake before its fixes; with the FIFO and bound tests they stay as the line's
 * contract for any later line with two locks.
 */
@Timeout(120)
class R12IntakeReviewTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private static TaskEnvelope plain(int id) {
    return new TaskEnvelope(null, TaskKind.RUNNABLE, id, TaskEnvelope.WAITING);
  }

  /**
   * F1. {@link WaitingLine#reopen} clears the flags under both locks, then runs the pool's reopen
   * ({@code state.reopen()} among it) under the takers' lock only: an intake joiner (a producer that
   * saw the pool running before its shutdownNow, and offers only now) joins the line while the
   * pool is still TERMINATED. Its drainLine cannot take a seat (tryTakeSeat refuses a terminated
   * state), so once the reboot ends the pool is running with free seats and the entry waits in line
   * for the next submission: stranded. Before the intake, the offer waited on the one lock until
   * the reopen had run. The line-level atomicity that {@code reopen}'s Javadoc states ("running
   * {@code reopen} under the same lock", atomic against offers) is what this checks.
   */
  @Test
  void guarantee8_anIntakeJoinerRacingARebootJoinsOnlyAfterThePoolReopened() throws Exception {
    WaitingLine line = new WaitingLine();
    line.close();
    line.drain();
    assertThat(line.terminateIfEmpty(() -> Boolean.TRUE)).isTrue();
    AtomicBoolean reopening = new AtomicBoolean();
    AtomicReference<WaitingLine.Offer> during = new AtomicReference<>();
    AtomicReference<Thread> joiner = new AtomicReference<>();
    line.reopen(() -> {
      reopening.set(true);
      Thread t = new Thread(() -> {
        WaitingLine.Offer o = line.offer(plain(1), 10, false, false);
        if (reopening.get() && o == WaitingLine.Offer.LINKED) {
          during.set(o); // joined a line whose pool is still terminated (a refusal would be fine)
        }
      }, "r12-stale-joiner");
      joiner.set(t);
      t.start();
      // Until the joiner has finished (the fault) or parks on a lock (waiting for the reopen to
      // end, as a joiner under the one lock did): no sleep, its own state decides.
      while (t.isAlive() && t.getState() != Thread.State.WAITING) {
        Thread.onSpinWait();
      }
      reopening.set(false);
    });
    joiner.get().join();
    assertThat(during.get()).as("an entry linked while the pool was still terminated"
        + " (reopen's runnable had not returned)").isNull();
  }

  /**
   * F2. {@link WaitingLine#size()} reads leftCount, then joinedCount: between the two reads any
   * number of entries may join and leave, and the difference counts every join since but none of
   * those departures. The class Javadoc says the count "may read one low (never below 0, never
   * high)"; it reads high, without bound (a reader preempted between its two reads), so
   * {@code stats().waiting()} (a gauge that "describes the moment of the snapshot") can report more
   * entries than {@code maxWaiting} ever lets wait, and {@code dispatch}, {@code hasWaiters} and a
   * lane's yield see waiters that are not there. The one count it replaced was always a value the
   * line had held. Checked at the line under model checking (every interleaving at the line's volatile accesses, so
   * the one that fails is found deterministically): with bound 1 the line never holds more than one
   * entry, so size() must read 0 or 1. It reads 2 when a poll and a join fall between its two
   * reads: line [a]; size reads leftCount (0); a poll takes a (leftCount 1); b joins (joinedCount
   * 2); size reads joinedCount: 2 - 0 = 2.
   */
  @Test
  @Tag("model-check")
  void lineSizeNeverReadsAboveTheBoundOfPlainJoins() {
    new ModelCheckingOptions()
        .sequentialSpecification(SizeBoundSpec.class)
        .threads(3)
        .actorsPerThread(2)
        .actorsBefore(1)
        .actorsAfter(0)
        .iterations(PoolFixture.stress(4)) // CI's deeper pass (scale 5): 20, which caught F2 3/3
        .invocationsPerIteration(500)
        .check(SizeBound.class);
  }

  /** A line of bound 1: one producer (one thread), takers, and a reader of size(). */
  public static class SizeBound {
    private final WaitingLine line = new WaitingLine();
    private int id;

    @Operation(nonParallelGroup = "producer")
    public String offer() {
      return line.offer(plain(++id), 1, false, false).name();
    }

    @Operation
    public boolean poll() {
      return line.poll() != null;
    }

    /** What a gauge may report: a count the line could hold (0 or 1). */
    @Operation
    public boolean sizeWithinBound() {
      int n = line.size();
      return n >= 0 && n <= 1;
    }
  }

  /** Its specification: a count of at most one; size() is always within the bound. */
  public static final class SizeBoundSpec {
    private int n;

    public String offer() {
      if (n >= 1) {
        return "FULL";
      }
      n++;
      return "LINKED";
    }

    public boolean poll() {
      if (n == 0) {
        return false;
      }
      n--;
      return true;
    }

    public boolean sizeWithinBound() {
      return true;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof SizeBoundSpec s && s.n == n;
    }

    @Override
    public int hashCode() {
      return n;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // What held (enabled): the claims r12 probed that did not fail

  /**
   * FIFO across both ways in: plain tasks join through the intake; an admitted lane's entry and a
   * blocked caller join under the takers' lock after absorbing the intake, so one producer's
   * alternating submissions run in submission order.
   */
  @Test
  void guarantee1_fifoAcrossIntakeLaneEntriesAndCallers() throws Exception {
    WorkerPool pool = fixture.pool("r12-fifo", b -> b.capacity(1).maxWaiting(100)
        .maxIdle(Duration.ofMinutes(1)));
    List<String> order = Collections.synchronizedList(new ArrayList<>());
    SerialExecutor lane = pool.newSerialExecutor();
    CountDownLatch laneRan = new CountDownLatch(1);
    lane.execute(laneRan::countDown); // admits the lane: its later entries join under the lock
    PoolFixture.await(laneRan);
    PoolFixture.Gate seat = fixture.occupy(pool);
    pool.enqueue(() -> order.add("a")); // intake
    lane.execute(() -> order.add("lane")); // admitted lane entry: under the lock
    pool.enqueue(() -> order.add("b")); // intake
    PoolFixture.awaitWaiting(pool, 3);
    PoolFixture.Caller<Void> caller = fixture.call("r12-caller",
        () -> pool.execute(() -> order.add("caller"))); // a blocked caller: under the lock
    PoolFixture.awaitWaiting(pool, 4);
    pool.enqueue(() -> order.add("c")); // intake, behind the caller
    assertThat(pool.stats().waiting()).isEqualTo(5);
    seat.open();
    assertThat(caller.outcome()).isNull();
    PoolFixture.eventually().until(() -> order.size() == 5);
    assertThat(order).containsExactly("a", "lane", "b", "caller", "c");
    PoolFixture.eventually().until(() -> pool.stats().waiting() == 0);
  }

  /**
   * maxWaiting is exact for intake joiners and a handle's cancel of an entry still on the intake
   * (no taker has absorbed it) frees its place at once.
   */
  @Test
  void guarantee3_exactBoundAndCancelFromTheIntake() throws Exception {
    WorkerPool pool = fixture.pool("r12-bound", b -> b.capacity(1).maxWaiting(2)
        .maxIdle(Duration.ofMinutes(1)));
    PoolFixture.Gate seat = fixture.occupy(pool);
    TaskHandle a = pool.enqueue(() -> { });
    TaskHandle b = pool.enqueue(() -> { });
    assertThat(pool.stats().waiting()).isEqualTo(2);
    assertThatThrownBy(() -> pool.enqueue(() -> { }))
        .isInstanceOf(PoolOverloadedException.class);
    assertThat(b.cancel()).isTrue(); // on the intake: nothing took the takers' lock since
    assertThat(pool.stats().waiting()).isEqualTo(1);
    TaskHandle c = pool.enqueue(() -> { }); // the freed place
    assertThat(pool.stats().waiting()).isEqualTo(2);
    seat.open();
    PoolFixture.eventually().until(() -> a.isDone() && c.isDone());
    assertThat(b.isCancelled()).isTrue();
    PoolFixture.eventually().until(() -> pool.stats().waiting() == 0);
  }
}
