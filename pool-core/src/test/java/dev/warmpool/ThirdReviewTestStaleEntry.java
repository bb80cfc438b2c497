package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Third review: a serial lane's reusable entry ({@code SerialLane.place}) and the stale reference
 * that a cancelled-while-QUEUED entry leaves in the run queue.
 */
class ThirdReviewTestStaleEntry {

  static Object field(Object o, String name) {
    try {
      Field f = o.getClass().getDeclaredField(name);
      f.setAccessible(true);
      return f.get(o);
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
  }

  static TaskEnvelope place(SerialExecutor lane) {
    return (TaskEnvelope) field(lane, "place");
  }

  static boolean scheduled(SerialExecutor lane) {
    return ((AtomicBoolean) field(lane, "scheduled")).get();
  }

  /** Factory: call {@code failing} throws (and counts down {@code failed}); the others make daemons. */
  static final class FailOnCall implements ThreadFactory {
    final AtomicInteger calls = new AtomicInteger();
    final int failing;
    final CountDownLatch failed = new CountDownLatch(1);
    final String name;
    volatile boolean failingNow = true;

    FailOnCall(String name, int failing) {
      this.name = name;
      this.failing = failing;
    }

    @Override
    public Thread newThread(Runnable r) {
      int n = calls.incrementAndGet();
      if (n >= failing && failingNow) {
        failed.countDown();
        throw new IllegalStateException("no thread for call " + n);
      }
      return TestFactories.quietDaemon(r, name + "-" + n);
    }
  }

  /** One round; returns a description of the failure, or null if the pool settled exactly. */
  static String round(int spinBeforeExecute, boolean verbose) throws Exception {
    String name = PoolFixture.uniqueName("stale");
    FailOnCall factory = new FailOnCall(name, 3);
    WorkerPool pool = WorkerPool.builder().name(name).capacity(2).maxWaiting(100)
        .threadFactory(factory).build();
    CountDownLatch b1Open = new CountDownLatch(1);
    CountDownLatch b1In = new CountDownLatch(1);
    CountDownLatch b2In = new CountDownLatch(1);
    AtomicBoolean go2 = new AtomicBoolean();
    try {
      pool.execute(() -> {
        b1In.countDown();
        PoolFixture.awaitQuietly(b1Open, Duration.ofSeconds(20));
      });
      pool.execute(() -> {
        b2In.countDown();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!go2.get() && System.nanoTime() < end) {
          Thread.onSpinWait();
        }
      });
      PoolFixture.await(b1In);
      PoolFixture.await(b2In);
      SerialExecutor lane = pool.newSerialExecutor();
      ScheduledFuture<?> f = lane.schedule(() -> { }, 0, TimeUnit.MILLISECONDS);
      // the due task's dispatch put the lane's entry E in line
      if (!PoolFixture.waitUntil(Duration.ofSeconds(5),
          () -> pool.stats().waiting() == 1 && place(lane) != null)) {
        return "setup: lane entry never waited in line";
      }
      TaskEnvelope e = place(lane);
      pool.resize(3); // E gets the new seat and is queued for a worker the factory fails to make
      PoolFixture.await(factory.failed);
      pool.resize(2);
      factory.failingNow = false;
      if (e.state != TaskEnvelope.QUEUED || pool.stats().waiting() != 0) {
        return "setup: E not queued, state " + e.state;
      }
      assertThat(f.cancel(false)).isTrue(); // the lane's only task: E is cancelled while QUEUED
      if (e.state != TaskEnvelope.CANCELLED || scheduled(lane) || place(lane) != e) {
        return "setup: E not cancelled, state " + e.state;
      }
      // Now: seats B1, B2 and E's stale run-queue reference (3 of capacity 2).
      AtomicInteger ran = new AtomicInteger();
      if (spinBeforeExecute < 0) { // deterministic: E is back in line before the stale one is seen
        lane.execute(ran::incrementAndGet);
        go2.set(true);
      } else {
        go2.set(true); // B2 ends: its worker takes E's stale reference next
        for (int i = 0; i < spinBeforeExecute; i++) {
          Thread.onSpinWait();
        }
        lane.execute(ran::incrementAndGet); // full: resets E and puts it in line
      }
      int stateAfter = e.state;
      b1Open.countDown();
      boolean settled = PoolFixture.waitUntil(Duration.ofSeconds(3), () -> {
        PoolStats s = pool.stats();
        return ran.get() == 1 && s.busy() == 0 && s.waiting() == 0 && s.completed() == 3;
      });
      if (!settled) {
        StringBuilder dump = new StringBuilder();
        for (Thread t : PoolFixture.liveThreadsOf(name)) {
          StackTraceElement[] st = t.getStackTrace();
          dump.append("\n  ").append(t.getName()).append(' ').append(t.getState());
          for (int i = 0; i < Math.min(4, st.length); i++) {
            dump.append("\n    at ").append(st[i]);
          }
        }
        return "not settled (spin " + spinBeforeExecute + "): ran " + ran.get() + ", E state now " + e.state + " (after execute "
            + stateAfter + "), " + pool.stats() + dump;
      }
      if (verbose) {
        System.out.println("ok, E state after execute " + stateAfter);
      }
      PoolStats s = pool.stats();
      assertThat(s.submitted()).isEqualTo(3);
      assertThat(s.rejected()).isZero();
      return null;
    } finally {
      b1Open.countDown();
      go2.set(true);
      pool.shutdownNow();
    }
  }

  /**
   * The designed-harmless path, deterministic: E is reset and back in line (WAITING) before the
   * worker reaches its stale reference, which it then skips, passing its seat to E.
   */
  @Test
  void staleRunQueueReferenceOfACancelledLaneEntryIsSkipped() throws Exception {
    for (int i = 0; i < 20; i++) {
      assertThat(round(-1, false)).isNull();
    }
  }

  /*
   * FAULT (confirmed): TaskEnvelope.reset() makes the lane's entry E QUEUED *before*
   * Admission.enqueue(e, mode) finds the pool full and plain-writes e.state = WAITING. A worker
   * holding a stale run-queue reference to E (left by a cancel while E was QUEUED: BoundedPool's
   * withdrawnQueued leaves it there on purpose) can CAS QUEUED -> STARTED in that window and run
   * the lane; the dispatcher then overwrites STARTED with WAITING and links E in line. The worker
   * then spins forever in TaskEnvelope.finish() (no STARTED to move to DONE; or, once another
   * worker has taken E from the line and started it, the stale worker's CAS ends *that* run and
   * the second worker spins forever). Result: a worker thread burning a CPU forever, its seat never
   * given back (busy=1 at quiescence), the pool can never terminate.
   * Interleaving: pool cap 2 full (B1, B2); lane timer due -> E waits in line; resize(3) hands E a
   * seat, its worker's start fails (factory throws) so E sits QUEUED in the run queue; resize(2);
   * cancel the timer's future -> E CANCELLED, stale ref stays; B2 ends (its worker polls the stale
   * ref) while lane.execute(t) resets E (QUEUED) and then writes WAITING.
   * Observed: 1 of 112 rounds, 2 of 986 rounds (20 s run); the stuck worker's stack is
   * TaskEnvelope.finish(TaskEnvelope.java:129) <- TaskEnvelope$1.run <- Engine.runTask.
   * Fixed: an entry cancelled while queued is never reused (TaskEnvelope.reset), so a reused entry
   * has no reference in the run queue. 0 failures in the runs since (see the issue 20 note).
   */
  @Test
  void staleReferenceRaceStress() throws Exception {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(
        Long.getLong("stale.seconds", 5));
    int rounds = 0;
    int failures = 0;
    String first = null;
    while (System.nanoTime() < end) {
      rounds++;
      String r = round(ThreadLocalRandom.current().nextInt(Integer.getInteger("stale.spread", 160)),
          false);
      if (r != null && !r.startsWith("setup")) {
        failures++;
        if (first == null) {
          first = r;
        }
        System.out.println("round " + rounds + ": " + r);
      } else if (r != null) {
        System.out.println("round " + rounds + ": " + r);
      }
    }
    System.out.println("stale race: " + failures + " of " + rounds + " rounds failed");
    assertThat(first).as("%d of %d rounds", failures, rounds).isNull();
  }
}
