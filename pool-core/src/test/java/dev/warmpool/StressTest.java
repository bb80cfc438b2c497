package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Guarantees 4 and 5 under load: eight submitters using every kind of submission, tasks that fail at
 * random, a resizer flapping the capacity between 2 and 16, workers expiring, and one shutdown while
 * submissions are still coming. Every accepted task runs exactly once, every rejected one never, and
 * the counters add up at the end.
 */
@Timeout(300) // seconds per test: a hang fails the test instead of stalling the build
@Tag("stress")
class StressTest {
  private static final int SUBMITTERS = 8;
  /** 200,000 until the build neared its 10-minute budget; scales with -Dwarmpool.stress.scale. */
  private static final int PER_SUBMITTER = PoolFixture.stress(100_000);
  private static final int TOTAL = SUBMITTERS * PER_SUBMITTER;
  /** Shut down once this many submissions were made, so the last tenth races with close. */
  private static final int SHUTDOWN_AFTER = TOTAL / 10 * 9;

  private static final byte ACCEPTED = 1;
  private static final byte REJECTED = 2;
  /** Thrown by the failing tasks; preallocated without a stack trace to keep failures cheap. */
  private static final RuntimeException PLANNED =
      new RuntimeException("planned", null, false, false) { };

  @AutoClose final PoolFixture fixture = new PoolFixture();

  @Test
  void everyAcceptedTaskRunsExactlyOnceAndEveryRejectedTaskNever() throws Exception {
    LongAdder handled = new LongAdder();
    WorkerPool pool = fixture.pool("stress", b -> b.capacity(16).maxWaiting(64)
        .maxIdle(Duration.ofMillis(10))
        .failureHandler((t, e) -> {
          if (e != PLANNED) {
            throw new AssertionError("unexpected failure", e);
          }
          handled.increment();
        }));
    AtomicIntegerArray runs = new AtomicIntegerArray(TOTAL);
    byte[] verdict = new byte[TOTAL]; // each submitter writes its own range; read after joining them
    AtomicLong made = new AtomicLong();
    CountDownLatch go = new CountDownLatch(1);

    PoolFixture.Caller<Integer> resizer = fixture.call("resizer", () -> {
      SplittableRandom rnd = new SplittableRandom(42);
      int resizes = 0;
      while (!pool.isShutdown()) {
        pool.resize(2 + rnd.nextInt(15));
        resizes++;
        LockSupport.parkNanos(rnd.nextInt(200_000));
      }
      return resizes;
    });
    PoolFixture.Caller<Void> closer = fixture.call("closer", () -> {
      while (made.get() < SHUTDOWN_AFTER) {
        LockSupport.parkNanos(100_000);
      }
      pool.shutdown();
    });
    List<PoolFixture.Caller<Void>> submitters = new ArrayList<>();
    for (int s = 0; s < SUBMITTERS; s++) {
      int first = s * PER_SUBMITTER;
      long seed = s;
      submitters.add(fixture.call("submitter" + s, () -> {
        SplittableRandom rnd = new SplittableRandom(seed);
        go.await();
        for (int id = first; id < first + PER_SUBMITTER; id++) {
          verdict[id] = submit(pool, rnd, task(runs, id)) ? ACCEPTED : REJECTED;
          made.incrementAndGet();
        }
      }));
    }

    go.countDown();
    for (PoolFixture.Caller<Void> submitter : submitters) {
      submitter.result(Duration.ofSeconds(90));
    }
    closer.result();
    assertThat(resizer.result()).as("resizes").isPositive();
    assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).as("terminated").isTrue();

    assertRanExactlyAsAnswered(runs, verdict);
    long accepted = count(verdict, ACCEPTED);
    long rejected = count(verdict, REJECTED);
    assertThat(accepted + rejected).isEqualTo(TOTAL);
    long acceptedFailing = 0;
    for (int id = 0; id < TOTAL; id++) {
      if (verdict[id] == ACCEPTED && fails(id)) {
        acceptedFailing++;
      }
    }

    PoolStats stats = pool.stats();
    assertThat(accepted).as("accepted").isPositive();
    assertThat(rejected).as("rejected").isPositive();
    assertThat(stats.submitted()).as("submitted in %s", stats).isEqualTo(accepted);
    assertThat(stats.rejected()).as("rejected in %s", stats).isEqualTo(rejected);
    assertThat(stats.failed()).as("failed in %s", stats).isEqualTo(acceptedFailing);
    assertThat(handled.sum()).isEqualTo(acceptedFailing);
    assertThat(stats.completed()).as("completed in %s", stats).isEqualTo(accepted - acceptedFailing);
    assertThat(stats.workers()).isZero();
    assertThat(stats.waiting()).isZero();
    assertThat(stats.workersStarted() - stats.workersExpired() - stats.workersStopped())
        .as("worker balance in %s", stats).isZero();
    assertThat(PoolFixture.liveThreadsOf(pool.name())).isEmpty();
  }

  @Test
  void timedCallersGivingUpJustAsAWorkerFreesUpNeverRunARefusedTask() throws Exception {
    // Timeouts about as long as a hand-off: callers often give up at the very moment a worker takes
    // their entry. Whatever tryExecute answers must be the truth.
    WorkerPool pool = fixture.pool("timed", b -> b.capacity(2).failureHandler((t, e) -> { }));
    int callers = 4;
    int perCaller = 50_000;
    AtomicIntegerArray runs = new AtomicIntegerArray(callers * perCaller);
    byte[] verdict = new byte[callers * perCaller];
    List<PoolFixture.Caller<Void>> all = new ArrayList<>();
    for (int c = 0; c < callers; c++) {
      int first = c * perCaller;
      long seed = 100 + c;
      all.add(fixture.call("timed" + c, () -> {
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int id = first; id < first + perCaller; id++) {
          boolean accepted = pool.tryExecute(task(runs, id), Duration.ofNanos(rnd.nextInt(30_000)));
          verdict[id] = accepted ? ACCEPTED : REJECTED;
        }
      }));
    }
    for (PoolFixture.Caller<Void> c : all) {
      c.result(Duration.ofSeconds(90));
    }
    pool.shutdown();
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();

    assertRanExactlyAsAnswered(runs, verdict);
    long accepted = count(verdict, ACCEPTED);
    PoolStats stats = pool.stats();
    assertThat(stats.submitted()).isEqualTo(accepted);
    assertThat(stats.rejected()).isEqualTo(verdict.length - accepted);
  }

  @Test
  void expiryRacingWithHandOffsNeverLosesNorRepeatsATask() throws Exception {
    // maxIdle of a millisecond and bursts separated by pauses of about that long: the cleaner keeps
    // retiring the bottom of the stack while submitters pop its top.
    WorkerPool pool = fixture.pool("expiryrace",
        b -> b.capacity(8).maxIdle(Duration.ofMillis(1)).failureHandler((t, e) -> { }));
    int submitters = 4;
    int perSubmitter = 25_000;
    AtomicIntegerArray runs = new AtomicIntegerArray(submitters * perSubmitter);
    byte[] verdict = new byte[submitters * perSubmitter];
    List<PoolFixture.Caller<Void>> all = new ArrayList<>();
    for (int c = 0; c < submitters; c++) {
      int first = c * perSubmitter;
      long seed = 200 + c;
      all.add(fixture.call("expiryrace" + c, () -> {
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int id = first; id < first + perSubmitter; id++) {
          if (rnd.nextInt(50) == 0) {
            LockSupport.parkNanos(rnd.nextInt(2_000_000));
          }
          pool.execute(task(runs, id));
          verdict[id] = ACCEPTED;
        }
      }));
    }
    for (PoolFixture.Caller<Void> c : all) {
      c.result(Duration.ofSeconds(90));
    }
    pool.shutdown();
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();

    assertRanExactlyAsAnswered(runs, verdict);
    PoolStats stats = pool.stats();
    assertThat(stats.workersExpired()).as("workers expired during the run").isPositive();
    assertThat(stats.submitted()).isEqualTo(verdict.length);
    assertThat(stats.completed() + stats.failed()).isEqualTo(verdict.length);
    assertThat(stats.workersStarted() - stats.workersExpired() - stats.workersStopped()).isZero();
  }

  /** Every task answered as accepted ran exactly once; every other one never ran. */
  private static void assertRanExactlyAsAnswered(AtomicIntegerArray runs, byte[] verdict) {
    List<String> violations = new ArrayList<>();
    for (int id = 0; id < verdict.length; id++) {
      boolean accepted = verdict[id] == ACCEPTED;
      assertThat(accepted || verdict[id] == REJECTED).as("task %d was answered", id).isTrue();
      int n = runs.get(id);
      if (n != (accepted ? 1 : 0) && violations.size() < 20) {
        violations.add((accepted ? "accepted" : "rejected") + " task " + id + " ran " + n + " times");
      }
    }
    assertThat(violations).as("tasks that broke 'accepted runs once, rejected never'").isEmpty();
  }

  private static long count(byte[] verdict, byte which) {
    long n = 0;
    for (byte v : verdict) {
      if (v == which) {
        n++;
      }
    }
    return n;
  }

  /** About one task in sixteen fails, scattered by a multiplicative hash of its id. */
  private static boolean fails(int id) {
    return (id * 0x9E3779B9) >>> 28 == 0;
  }

  private static Runnable task(AtomicIntegerArray runs, int id) {
    boolean fails = fails(id);
    return () -> {
      runs.incrementAndGet(id);
      if (fails) {
        throw PLANNED;
      }
    };
  }

  /**
   * Submits in one of four ways: execute (half), enqueue, tryExecute, tryExecute with a short
   * timeout. Returns whether the task was accepted.
   */
  private static boolean submit(WorkerPool pool, SplittableRandom rnd, Runnable task)
      throws InterruptedException {
    int how = rnd.nextInt(20);
    try {
      if (how < 10) {
        pool.execute(task);
        return true;
      } else if (how < 15) {
        pool.enqueue(task);
        return true;
      } else if (how < 18) {
        return pool.tryExecute(task);
      } else {
        return pool.tryExecute(task, Duration.ofNanos(50_000));
      }
    } catch (PoolOverloadedException | PoolClosedException e) {
      return false;
    } catch (RejectedExecutionException e) {
      throw new AssertionError("unexpected kind of rejection", e);
    }
  }

}
