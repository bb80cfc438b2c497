package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * A timer is one object that is its own timer entry, future and late-bound hand-off (issue 33).
 * Its protocols raced through the public API, the other side landing all around the moment the
 * timer fires (a spin to the deadline plus an offset that varies by round): a cancel against the
 * fire and the handle bound after the hand-off, shutdown, shutdownNow and a reboot against the
 * fire, a lane's close against the fire, a cancel against a periodic re-arm, and
 * {@code cancel(true)} against a run's start and end.
 */
class DelayedTaskRaceTest {
  /** The delay of each raced timer: short, so that the timer thread fires it while we spin. */
  private static final long DELAY_NANOS = TimeUnit.MICROSECONDS.toNanos(300);

  @AutoClose final PoolFixture fixture = new PoolFixture();

  /** A point around the fire: from 150 us before the deadline to 250 us after, by round. */
  private static void spinToAroundTheFire(long scheduledAt, int round) {
    long offset = TimeUnit.MICROSECONDS.toNanos((round * 37L) % 400 - 150);
    long target = scheduledAt + DELAY_NANOS + offset;
    while (System.nanoTime() - target < 0) {
      Thread.onSpinWait();
    }
  }

  private static void spinUntil(BooleanSupplier condition) {
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10), condition)).isTrue();
  }

  /**
   * Guarantee 7 and the late-bound-handle rule: a due timer waits in line (the one seat is held),
   * and a cancel lands before the fire, between the hand-off and the binding of its handle, or
   * after: every cancel wins, the task never runs and leaves the line, and no counter moves for it.
   */
  @Test
  void guarantee7_aCancelRacingTheFireAndTheLateBoundHandleAlwaysWithdrawsTheTask()
      throws Exception {
    for (boolean onLane : new boolean[] {false, true}) {
      WorkerPool pool = fixture.pool("race-cancel-", b -> b.capacity(1));
      SerialExecutor lane = pool.newSerialExecutor();
      PoolFixture.Gate gate = fixture.occupy(onLane ? lane : pool);
      AtomicInteger ran = new AtomicInteger();
      int rounds = PoolFixture.stress(400);
      int handedOn = 0;
      Runnable task = ran::incrementAndGet;
      for (int round = 0; round < rounds; round++) {
        long at = System.nanoTime();
        ScheduledFuture<?> f = onLane
            ? lane.schedule(task, DELAY_NANOS, TimeUnit.NANOSECONDS)
            : pool.schedule(task, DELAY_NANOS, TimeUnit.NANOSECONDS);
        spinToAroundTheFire(at, round);
        if (!SharedTimer.INSTANCE.isScheduled(((DelayedTask<?>) f).timerEntry())) {
          handedOn++; // fired: handed on, or being handed on
        }
        assertThat(f.cancel(false)).as("round %d: the task cannot have started", round).isTrue();
        // A cancel that lands between the hand-off and the binding leaves the withdrawal to the
        // fire's bind, a moment later on the timer thread (the late-bound-handle rule).
        spinUntil(() -> pool.stats().waiting() == 0);
      }
      gate.open();
      pool.submit(() -> { }).get(10, TimeUnit.SECONDS);
      if (onLane) {
        lane.execute(() -> { });
      }
      pool.shutdown();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      assertThat(ran).as("runs of cancelled timers").hasValue(0);
      PoolStats s = pool.stats();
      assertThat(s.completed()).as("only the gate and the probes ran: %s", s)
          .isEqualTo(onLane ? 3 : 2);
      assertThat(((AbstractWorkerPool) pool).delayedCount()).isZero();
      System.out.printf("cancel vs fire (%s): %d of %d cancels came after the fire%n",
          onLane ? "lane" : "pool", handedOn, rounds);
    }
  }

  /**
   * Guarantee 7 and 9: shutdown racing a firing timer either cancels it (it never runs) or finds it
   * handed on (it runs, once); the pool terminates either way with the future done and no timer
   * left, and a reboot takes timers again. The same pool is rebooted for every round.
   */
  @Test
  void guarantee7_shutdownRacingAFiringTimerCancelsItOrRunsItOnceAndTheRebootedPoolTakesTimers()
      throws Exception {
    WorkerPool pool = fixture.pool("race-shutdown-", b -> b.capacity(1));
    int rounds = PoolFixture.stress(300);
    int cancelled = 0;
    for (int round = 0; round < rounds; round++) {
      AtomicInteger ran = new AtomicInteger();
      Runnable task = ran::incrementAndGet;
      Executor target = round % 2 == 0 ? pool : pool.newSerialExecutor();
      long at = System.nanoTime();
      ScheduledFuture<?> f = target instanceof SerialExecutor lane
          ? lane.schedule(task, DELAY_NANOS, TimeUnit.NANOSECONDS)
          : pool.schedule(task, DELAY_NANOS, TimeUnit.NANOSECONDS);
      spinToAroundTheFire(at, round);
      pool.shutdown();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      assertThat(f.isDone()).as("round %d: future done on a terminated pool", round).isTrue();
      if (f.isCancelled()) {
        cancelled++;
        assertThat(ran).as("round %d: a cancelled timer ran", round).hasValue(0);
      } else {
        assertThat(ran).as("round %d: a timer handed on runs once", round).hasValue(1);
        assertThat(f.get()).isNull();
      }
      assertThat(((AbstractWorkerPool) pool).delayedCount()).isZero();
      pool.reboot();
      assertThat(pool.schedule(() -> 1, 0, TimeUnit.NANOSECONDS).get(10, TimeUnit.SECONDS))
          .as("round %d: the rebooted pool takes a timer", round).isEqualTo(1);
    }
    System.out.printf("shutdown vs fire: %d of %d cancelled%n", cancelled, rounds);
  }

  /**
   * Guarantee 7: shutdownNow racing a firing timer of a full pool: the timer is cancelled while
   * pending, or handed back (as submitted, its future cancelled) while it waits in line; never
   * both, never run, its task told exactly once. The same pool is rebooted for every round.
   */
  @Test
  void guarantee7_shutdownNowRacingAFiringTimerHandsItBackOrCancelsItNeverBoth()
      throws Exception {
    WorkerPool pool = fixture.pool("race-now-", b -> b.capacity(1));
    int rounds = PoolFixture.stress(300);
    int handedBack = 0;
    AtomicInteger[] told = new AtomicInteger[rounds];
    AtomicInteger ran = new AtomicInteger();
    for (int round = 0; round < rounds; round++) {
      AtomicInteger heard = told[round] = new AtomicInteger();
      CancellationAware task = new CancellationAware() {
        @Override
        public void run() {
          ran.incrementAndGet();
        }

        @Override
        public void onCancel() {
          heard.incrementAndGet();
        }
      };
      PoolFixture.Gate gate = fixture.occupy(pool);
      long at = System.nanoTime();
      ScheduledFuture<?> f = pool.schedule(task, DELAY_NANOS, TimeUnit.NANOSECONDS);
      spinToAroundTheFire(at, round);
      List<Runnable> back = pool.shutdownNow();
      gate.open();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      long copies = back.stream().filter(r -> r == task).count();
      assertThat(back).as("round %d: only the timer is handed back", round).hasSize((int) copies);
      assertThat(copies).as("round %d", round).isLessThanOrEqualTo(1);
      handedBack += (int) copies;
      assertThat(f.isCancelled()).as("round %d: the timer's future", round).isTrue();
      spinUntil(() -> heard.get() >= 1); // a cancel on the timer thread tells it asynchronously
      assertThat(((AbstractWorkerPool) pool).delayedCount()).isZero();
      pool.reboot();
    }
    assertThat(ran).as("runs").hasValue(0);
    for (int round = 0; round < rounds; round++) {
      assertThat(told[round]).as("round %d: told of the cancel", round).hasValue(1);
    }
    System.out.printf("shutdownNow vs fire: %d of %d handed back%n", handedBack, rounds);
  }

  /**
   * Section 5: a lane's close racing its firing timer: cancelled (never runs) or it ran, once;
   * a close landing on a run in progress cancels the future as {@code FutureTask} does (the run
   * finishes). Nothing stays registered with the lane or the pool.
   */
  @Test
  void section5_laneCloseRacingAFiringTimerCancelsItOrItRunsOnce() throws Exception {
    WorkerPool pool = fixture.pool("race-close-", b -> b.capacity(2));
    int rounds = PoolFixture.stress(400);
    int cancelled = 0;
    for (int round = 0; round < rounds; round++) {
      SerialExecutor lane = pool.newSerialExecutor();
      AtomicInteger ran = new AtomicInteger();
      long at = System.nanoTime();
      ScheduledFuture<?> f = lane.schedule(ran::incrementAndGet, DELAY_NANOS,
          TimeUnit.NANOSECONDS);
      spinToAroundTheFire(at, round);
      lane.close();
      spinUntil(f::isDone);
      pool.submit(() -> { }).get(10, TimeUnit.SECONDS);
      PoolFixture.awaitIdle(pool, pool.stats().workers());
      if (f.isCancelled()) {
        cancelled++;
        assertThat(ran.get()).as("round %d", round).isLessThanOrEqualTo(1);
      } else {
        assertThat(ran).as("round %d: completed, so it ran once", round).hasValue(1);
      }
      assertThat(((SerialLane) lane).pendingTimers()).isZero();
      assertThat(((AbstractWorkerPool) pool).delayedCount()).isZero();
    }
    System.out.printf("lane close vs fire: %d of %d cancelled%n", cancelled, rounds);
  }

  /**
   * Guarantee 7: a cancel racing a periodic task's runs and re-arms (fixed rate and fixed delay,
   * on the pool and on a lane) stops it: once the run in progress, if any, has ended, it is on no
   * timer, in no owner's set, and runs no more.
   */
  @Test
  void guarantee7_aCancelRacingAPeriodicReArmStopsTheTask() throws Exception {
    WorkerPool pool = fixture.pool("race-periodic-", b -> b.capacity(1));
    int rounds = PoolFixture.stress(300);
    for (int round = 0; round < rounds; round++) {
      SerialExecutor lane = pool.newSerialExecutor();
      AtomicInteger ran = new AtomicInteger();
      long period = 20 + round % 50;
      ScheduledFuture<?> f = switch (round % 4) {
        case 0 -> pool.scheduleAtFixedRate(ran::incrementAndGet, 0, period, TimeUnit.MICROSECONDS);
        case 1 -> pool.scheduleWithFixedDelay(ran::incrementAndGet, 0, period,
            TimeUnit.MICROSECONDS);
        case 2 -> lane.scheduleAtFixedRate(ran::incrementAndGet, 0, period, TimeUnit.MICROSECONDS);
        default -> lane.scheduleWithFixedDelay(ran::incrementAndGet, 0, period,
            TimeUnit.MICROSECONDS);
      };
      int runs = 1 + round % 3;
      spinUntil(() -> ran.get() >= runs);
      assertThat(f.cancel(false)).as("round %d", round).isTrue();
      // One seat: this probe runs after the run in progress, if any, has returned.
      pool.submit(() -> { }).get(10, TimeUnit.SECONDS);
      int after = ran.get();
      DelayedTask<?> t = (DelayedTask<?>) f;
      assertThat(SharedTimer.INSTANCE.isScheduled(t.timerEntry())).as("round %d: armed", round)
          .isFalse();
      assertThat(((AbstractWorkerPool) pool).delayedCount()).as("round %d", round).isZero();
      assertThat(((SerialLane) lane).pendingTimers()).as("round %d", round).isZero();
      pool.submit(() -> { }).get(10, TimeUnit.SECONDS);
      assertThat(ran).as("round %d: ran after its cancel", round).hasValue(after);
      lane.close();
    }
  }

  /**
   * The interrupt handshake: {@code cancel(true)} racing a timer's run, from before it starts to
   * after it ended, interrupts that run at most; the next task on the same worker never sees it.
   */
  @Test
  void cancelWithInterruptRacingARunsStartAndEndNeverReachesTheNextTask() throws Exception {
    WorkerPool pool = fixture.pool("race-interrupt-", b -> b.capacity(1));
    int rounds = PoolFixture.stress(1000);
    int leaked = 0;
    String first = null;
    for (int round = 0; round < rounds; round++) {
      SerialExecutor lane = round % 2 == 0 ? null : pool.newSerialExecutor();
      long runFor = TimeUnit.MICROSECONDS.toNanos(round % 30);
      AtomicBoolean started = new AtomicBoolean();
      Runnable task = () -> {
        started.set(true);
        long end = System.nanoTime() + runFor;
        while (System.nanoTime() - end < 0) {
          Thread.onSpinWait();
        }
      };
      ScheduledFuture<?> f = lane == null
          ? pool.schedule(task, 0, TimeUnit.NANOSECONDS)
          : lane.schedule(task, 0, TimeUnit.NANOSECONDS);
      Future<Boolean> next = pool.submit(DelayedTaskRaceTest::interruptedWithin1ms);
      if (round % 8 != 0) { // else the cancel most likely comes before the run
        while (!started.get() && !f.isDone()) {
          Thread.onSpinWait();
        }
      }
      long until = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(round % 40);
      while (System.nanoTime() - until < 0) {
        Thread.onSpinWait(); // lands during the run, at its end, or just after it
      }
      f.cancel(true);
      if (next.get(10, TimeUnit.SECONDS)) {
        leaked++;
        if (first == null) {
          first = "round " + round;
        }
      }
      assertThat(f.isDone()).isTrue();
      if (lane != null) {
        lane.close();
      }
    }
    assertThat(leaked).as("rounds (of %d) whose next task saw the interrupt; first %s", rounds,
        first).isZero();
  }

  /** The next task: whether an interrupt reaches it within its first millisecond. */
  private static boolean interruptedWithin1ms() {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1);
    while (System.nanoTime() - end < 0) {
      if (Thread.currentThread().isInterrupted()) {
        return true;
      }
    }
    return Thread.currentThread().isInterrupted();
  }
}
