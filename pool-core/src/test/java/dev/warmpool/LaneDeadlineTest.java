package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Line deadlines for serial lanes (DESIGN.md section 3, guarantees 4, 6 and 13): a lane that waits
 * in line for its first seat expires with each task queued in it (each one expired task, heard off
 * the timer thread), and is left not admitted, so its next execute tries admission afresh; a lane
 * admitted before or while its entry waits never expires; close, shutdownNow, shutdown and resize
 * end each task one way. Races of all of these: {@link LaneDeadlineStressTest}.
 */
@Timeout(120)
class LaneDeadlineTest {
  private static final Duration HOUR = Duration.ofHours(1);
  private static final Duration SHORT = Duration.ofMillis(30);
  /** Long enough that a test's next call comes before it passes (checked, else skipped). */
  private static final Duration SECOND = Duration.ofSeconds(1);
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private WorkerPool pool(int capacity, int maxWaiting, Duration maxWaitInLine) {
    return fixture.track(WorkerPool.builder().name(PoolFixture.uniqueName("lane-deadline"))
        .capacity(capacity).maxIdle(HOUR).maxWaiting(maxWaiting).maxWaitInLine(maxWaitInLine)
        .build());
  }

  private static boolean eventually(java.util.function.BooleanSupplier c) {
    return PoolFixture.waitUntil(Duration.ofSeconds(20), c);
  }

  /** A lane task that records how it ended. */
  static final class Probe extends CountingTask {
    final CompletableFuture<PoolOverloadedException> expiredWith = new CompletableFuture<>();
    volatile CountDownLatch holdOnExpired;

    @Override
    public void onExpired(PoolOverloadedException c) {
      super.onExpired(c);
      expiredWith.complete(c);
      CountDownLatch hold = holdOnExpired;
      if (hold != null) {
        PoolFixture.await(hold);
      }
    }

    PoolOverloadedException awaitExpired() throws Exception {
      return expiredWith.get(20, TimeUnit.SECONDS);
    }
  }

  /** Waits until a plain task that joins the line now has expired: every earlier deadline passed. */
  private static void awaitDeadlinesBefore(WorkerPool pool) {
    TaskHandle canary = pool.enqueue(() -> { });
    assertThat(eventually(canary::isExpired)).as("canary expired").isTrue();
  }

  @Test
  void aLaneWaitingForItsFirstSeatExpiresWithEachTaskQueuedInIt() throws Exception {
    WorkerPool pool = pool(1, 100, SHORT);
    PoolFixture.Gate gate = fixture.occupy(pool);
    SerialExecutor lane = pool.newSerialExecutor();
    Probe a = new Probe();
    Probe b = new Probe();
    AtomicInteger plainRan = new AtomicInteger();
    long t0 = System.nanoTime();
    lane.execute(a);
    lane.execute(plainRan::incrementAndGet); // rides along in the lane's one entry
    lane.execute(b);
    assertThat(pool.stats().waiting()).as("one place in line for the lane").isEqualTo(1);
    assertThat(pool.stats().submitted()).isEqualTo(4);

    PoolOverloadedException cause = a.awaitExpired();
    assertThat(System.nanoTime() - t0).as("not before its deadline")
        .isGreaterThanOrEqualTo(SHORT.toNanos());
    assertThat(cause).hasMessageContaining("ms in line");
    assertThat(b.awaitExpired()).isNotSameAs(cause);
    assertThat(a.heardOn.getName()).isNotEqualTo("warmpool-timer");
    assertThat(b.heardOn.getName()).isNotEqualTo("warmpool-timer");
    PoolStats s = pool.stats();
    assertThat(s.expired()).as("each lane task counts as one").isEqualTo(3);
    assertThat(s.submitted()).as("they left submitted: only the occupier").isEqualTo(1);
    assertThat(s.waiting()).isZero();
    assertThat(a.cancels).as("onExpired instead of onCancel").hasValue(0);

    gate.open();
    CountDownLatch later = new CountDownLatch(1);
    lane.execute(later::countDown); // the lane is dispatched afresh; a seat is free now
    PoolFixture.await(later);
    assertThat(a.ran.get() + b.ran.get() + plainRan.get()).as("no expired task ran").isZero();
    assertThat(a.expired.get() + b.expired.get()).as("heard once each").isEqualTo(2);
    assertThat(eventually(() -> pool.stats().completed() == 2)).isTrue();
    s = pool.stats();
    assertThat(s.submitted()).isEqualTo(s.completed() + s.failed());
    assertThat(s.expired()).isEqualTo(3);
  }

  /**
   * The expired lane is left not admitted: its next execute dispatches in the caller's mode, so a
   * full line rejects it at the call, and with room it waits (and expires) again.
   */
  @Test
  void anExpiredLaneTriesAdmissionAfreshAtItsNextExecute() throws Exception {
    WorkerPool pool = pool(1, 1, SHORT);
    fixture.occupy(pool);
    SerialExecutor lane = pool.newSerialExecutor();
    Probe first = new Probe();
    lane.execute(first);
    first.awaitExpired();
    TaskHandle filler = pool.enqueue(() -> { }, HOUR); // the line's one place
    long rejectedBefore = pool.stats().rejected();
    assertThatThrownBy(() -> lane.execute(() -> { })).isInstanceOf(PoolOverloadedException.class)
        .hasMessageContaining("waiting line is full");
    assertThat(pool.stats().rejected()).isEqualTo(rejectedBefore + 1);
    assertThat(pool.stats().submitted()).as("occupier and filler").isEqualTo(2);
    assertThat(filler.cancel()).isTrue();
    Probe again = new Probe();
    lane.execute(again);
    assertThat(pool.stats().waiting()).isEqualTo(1);
    again.awaitExpired();
    assertThat(pool.stats().expired()).isEqualTo(2);
    assertThat(pool.stats().waiting()).isZero();
  }

  /**
   * Admitted work entering the lane while its first dispatch waits in line admits the lane: the
   * entry then waits on past its deadline, and the unadmitted task that was in it runs too.
   */
  @Test
  void executeAdmittedWhileTheFirstDispatchWaitsAdmitsTheLane() throws Exception {
    WorkerPool pool = pool(1, 100, SECOND);
    PoolFixture.Gate gate = fixture.occupy(pool);
    SerialExecutor lane = pool.newSerialExecutor();
    Probe waiting = new Probe();
    Probe admitted = new Probe();
    long t0 = System.nanoTime();
    lane.execute(waiting);
    lane.executeAdmitted(admitted);
    assumeTrue(System.nanoTime() - t0 < SECOND.toNanos() / 2, "admitted before the deadline");
    assertThat(pool.stats().waiting()).isEqualTo(1);
    awaitDeadlinesBefore(pool);
    assertThat(pool.stats().expired()).as("only the canary").isEqualTo(1);
    assertThat(pool.stats().waiting()).as("the lane still waits").isEqualTo(1);
    gate.open();
    assertThat(eventually(() -> waiting.ran.get() == 1 && admitted.ran.get() == 1)).isTrue();
    assertThat(waiting.expired.get() + admitted.expired.get()).isZero();
  }

  /** The same with a due timer of the lane, which enters it on the timer thread. */
  @Test
  void aDueTimerEnteringTheLaneWhileItsFirstDispatchWaitsAdmitsTheLane() throws Exception {
    WorkerPool pool = pool(1, 100, SECOND);
    PoolFixture.Gate gate = fixture.occupy(pool);
    SerialExecutor lane = pool.newSerialExecutor();
    Probe waiting = new Probe();
    AtomicInteger timerRan = new AtomicInteger();
    long t0 = System.nanoTime();
    lane.execute(waiting);
    var timer = lane.schedule(timerRan::incrementAndGet, 0, TimeUnit.MILLISECONDS);
    assumeTrue(System.nanoTime() - t0 < SECOND.toNanos() / 2, "due before the deadline");
    // The timer thread fires in deadline order: the due timer entered before the lane's deadline.
    awaitDeadlinesBefore(pool);
    assertThat(pool.stats().expired()).as("only the canary").isEqualTo(1);
    gate.open();
    timer.get(20, TimeUnit.SECONDS);
    assertThat(eventually(() -> waiting.ran.get() == 1)).isTrue();
    assertThat(timerRan).hasValue(1);
    assertThat(waiting.expired).hasValue(0);
  }

  /** Admitted work that comes after the expiry dispatches the lane afresh, and never expires. */
  @Test
  void admittedWorkAfterTheExpiryDispatchesTheLaneAfreshAndNeverExpires() throws Exception {
    WorkerPool pool = pool(1, 100, SHORT);
    PoolFixture.Gate gate = fixture.occupy(pool);
    SerialExecutor lane = pool.newSerialExecutor();
    Probe early = new Probe();
    lane.execute(early);
    early.awaitExpired();
    Probe admitted = new Probe();
    AtomicInteger timerRan = new AtomicInteger();
    lane.executeAdmitted(admitted);
    var timer = lane.schedule(timerRan::incrementAndGet, 0, TimeUnit.MILLISECONDS);
    assertThat(pool.stats().waiting()).isEqualTo(1);
    awaitDeadlinesBefore(pool);
    assertThat(pool.stats().expired()).as("the early task and the canary").isEqualTo(2);
    gate.open();
    timer.get(20, TimeUnit.SECONDS);
    assertThat(eventually(() -> admitted.ran.get() == 1)).isTrue();
    assertThat(admitted.expired).hasValue(0);
    assertThat(early.ran).hasValue(0);
  }

  /**
   * The expiry counts the tasks and leaves the lane not dispatched before any of them hears of
   * it: while a task's {@code onExpired} is held, the counters are final and the next execute
   * already waits in line afresh.
   */
  @Test
  void theLaneIsResetAndCountedBeforeItsTasksHearOfTheExpiry() throws Exception {
    WorkerPool pool = pool(1, 100, SHORT);
    PoolFixture.Gate gate = fixture.occupy(pool);
    SerialExecutor lane = pool.newSerialExecutor();
    Probe held = new Probe();
    CountDownLatch release = new CountDownLatch(1);
    held.holdOnExpired = release;
    lane.execute(held);
    held.awaitExpired(); // now held inside onExpired
    PoolStats s = pool.stats();
    assertThat(s.expired()).isEqualTo(1);
    assertThat(s.submitted()).isEqualTo(1);
    assertThat(s.waiting()).isZero();
    Probe next = new Probe();
    lane.execute(next);
    assertThat(pool.stats().waiting()).as("dispatched afresh").isEqualTo(1);
    next.awaitExpired();
    release.countDown();
    assertThat(pool.stats().expired()).isEqualTo(2);
    gate.open();
  }

  @Test
  void closingTheLaneBeforeItsDeadlineCancelsItsTasksAndNoneExpires() throws Exception {
    WorkerPool pool = pool(1, 100, SHORT);
    fixture.occupy(pool);
    SerialExecutor lane = pool.newSerialExecutor();
    Probe a = new Probe();
    lane.execute(a);
    lane.close();
    assertThat(pool.stats().waiting()).as("its place went with it").isZero();
    assertThat(pool.stats().submitted()).isEqualTo(1);
    awaitDeadlinesBefore(pool);
    assertThat(pool.stats().expired()).as("only the canary").isEqualTo(1);
    assertThat(a.expired.get() + a.ran.get()).isZero();
  }

  @Test
  void shutdownNowBeforeTheDeadlineHandsTheTasksBackAndNoneExpires() throws Exception {
    WorkerPool pool = pool(1, 100, SHORT);
    PoolFixture.Gate gate = fixture.occupy(pool);
    SerialExecutor lane = pool.newSerialExecutor();
    Probe a = new Probe();
    Runnable b = () -> { };
    lane.execute(a);
    lane.execute(b);
    List<Runnable> back = pool.shutdownNow();
    assertThat(back).containsExactly(a, b);
    gate.open();
    assertThat(pool.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    PoolStats s = pool.stats();
    assertThat(s.expired()).isZero();
    assertThat(s.submitted()).isEqualTo(s.completed() + s.failed() + back.size());
    assertThat(a.expired.get() + a.ran.get()).isZero();
  }

  /** Under shutdown a waiting lane still expires (as a plain task does), and the pool terminates. */
  @Test
  void underShutdownAWaitingLaneStillExpiresAndThePoolTerminates() throws Exception {
    WorkerPool pool = pool(1, 100, SHORT);
    PoolFixture.Gate gate = fixture.occupy(pool);
    SerialExecutor lane = pool.newSerialExecutor();
    Probe a = new Probe();
    lane.execute(a);
    pool.shutdown();
    a.awaitExpired();
    gate.open();
    assertThat(pool.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    PoolStats s = pool.stats();
    assertThat(s.expired()).isEqualTo(1);
    assertThat(s.submitted()).isEqualTo(s.completed() + s.failed()).isEqualTo(1);
  }

  @Test
  void growingThePoolBeforeTheDeadlineSeatsTheLaneWhichThenNeverExpires() throws Exception {
    WorkerPool pool = pool(1, 100, SECOND);
    fixture.occupy(pool);
    SerialExecutor lane = pool.newSerialExecutor();
    Probe a = new Probe();
    long t0 = System.nanoTime();
    lane.execute(a);
    pool.resize(2);
    assumeTrue(System.nanoTime() - t0 < SECOND.toNanos() / 2, "grown before the deadline");
    assertThat(eventually(() -> a.ran.get() == 1)).isTrue();
    PoolFixture.Gate second = fixture.occupy(pool); // both seats taken again
    Probe b = new Probe();
    lane.execute(b); // the lane was admitted: it waits with no deadline
    awaitDeadlinesBefore(pool);
    assertThat(pool.stats().expired()).as("only the canary").isEqualTo(1);
    second.open();
    assertThat(eventually(() -> b.ran.get() == 1)).isTrue();
    assertThat(a.expired.get() + b.expired.get()).isZero();
  }

  /** A subpool's lane waits in the subpool's line, and expires there under the parent's limit. */
  @Test
  void aSubpoolsLaneExpiresInTheSubpoolsLine() throws Exception {
    WorkerPool parent = pool(4, 100, SHORT);
    WorkerPool sub = parent.newSubpool("sub", 1);
    PoolFixture.Gate gate = fixture.occupy(sub);
    SerialExecutor lane = sub.newSerialExecutor();
    Probe a = new Probe();
    Probe b = new Probe();
    lane.execute(a);
    lane.execute(b);
    assertThat(sub.stats().waiting()).isEqualTo(1);
    a.awaitExpired();
    b.awaitExpired();
    assertThat(sub.stats().expired()).isEqualTo(2);
    assertThat(parent.stats().expired()).as("counted in the parent too").isEqualTo(2);
    assertThat(sub.stats().submitted()).isEqualTo(1);
    assertThat(sub.stats().waiting()).isZero();
    gate.open();
    CountDownLatch later = new CountDownLatch(1);
    lane.execute(later::countDown);
    PoolFixture.await(later);
  }
}
