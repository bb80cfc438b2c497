package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Guarantees 1, 4 and 11 under load on the v2 engine, with capacity well above the number of
 * submitters and cores (where most workers park and are woken): submitters use every submission
 * kind, mixing tiny and briefly blocking tasks, while the thread factory fails 5% of its starts,
 * handles and futures are cancelled at random, and the pool is resized between a quarter of its
 * capacity and all of it. At quiescence every accepted task ran exactly once, no withdrawn or
 * rejected task ran, at most {@code capacity} tasks ran at once, and the counters are exact.
 */
@Timeout(120)
@Tag("stress")
class EngineStressTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private static final int SUBMITTERS = 4;
  private static final int PER_SUBMITTER = 20_000;
  private static final int EITHER = 2;
  private static final String[] KINDS = {"execute", "enqueue", "submit", "tryExecute", "lane"};

  /** Fails about one start in twenty; otherwise makes ordinary daemon threads. */
  private static final class FlakyFactory implements ThreadFactory {
    final AtomicInteger failures = new AtomicInteger();
    private final AtomicInteger n = new AtomicInteger();
    private final String name;

    FlakyFactory(String name) {
      this.name = name;
    }

    @Override
    public Thread newThread(Runnable r) {
      if (ThreadLocalRandom.current().nextInt(20) == 0) {
        failures.incrementAndGet();
        throw new IllegalStateException("injected: no thread this time");
      }
      return TestFactories.daemon(r, name + "-" + n.incrementAndGet());
    }
  }

  /**
   * Guarantee 11's misbehaving factories, mixed at random: one start in twenty fails as in
   * {@link FlakyFactory}; besides, the factory starts the thread itself and then throws, starts it and
   * returns null, returns the thread it already started, or returns null without a thread (about one
   * in thirty each). Ordinary daemon threads otherwise.
   */
  private static final class RogueFactory implements ThreadFactory {
    final AtomicInteger[] tricks = {new AtomicInteger(), new AtomicInteger(), new AtomicInteger(),
        new AtomicInteger(), new AtomicInteger()};
    private final AtomicInteger n = new AtomicInteger();
    private final String name;

    RogueFactory(String name) {
      this.name = name;
    }

    @Override
    public Thread newThread(Runnable r) {
      int dice = ThreadLocalRandom.current().nextInt(150);
      if (dice < 7) {
        tricks[0].incrementAndGet();
        throw new IllegalStateException("injected: no thread this time");
      }
      if (dice >= 11) {
        return TestFactories.daemon(r, name + "-" + n.incrementAndGet());
      }
      if (dice == 10) {
        tricks[4].incrementAndGet();
        return null;
      }
      Thread t = TestFactories.daemon(r, name + "-" + n.incrementAndGet());
      t.start();
      switch (dice) {
        case 7 -> {
          tricks[1].incrementAndGet();
          throw new IllegalStateException("injected: started the thread, then threw");
        }
        case 8 -> {
          tricks[2].incrementAndGet();
          return null;
        }
        default -> {
          tricks[3].incrementAndGet();
          return t;
        }
      }
    }
  }

  @ParameterizedTest(name = "capacity {0}, {1} factory")
  @CsvSource({"64, flaky", "512, flaky", "64, rogue", "512, rogue"})
  void everyAcceptedTaskRunsExactlyOnceUnderFaultsCancelsAndResizes(int capacity, String factoryKind)
      throws Exception {
    String name = PoolFixture.uniqueName("engine-stress");
    ThreadFactory factory = factoryKind.equals("rogue") ? new RogueFactory(name)
        : new FlakyFactory(name);
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(capacity)
        .maxWaiting(1_000_000).threadFactory(factory).build());
    PoolFixture.StatsSampler sampler = new PoolFixture.StatsSampler(pool);
    int total = SUBMITTERS * PER_SUBMITTER;
    AtomicIntegerArray runs = new AtomicIntegerArray(total);
    // 0 = not accepted (rejected or withdrawn), 1 = accepted, EITHER = a future cancelled meanwhile
    AtomicIntegerArray accepted = new AtomicIntegerArray(total);
    AtomicIntegerArray kinds = new AtomicIntegerArray(total);
    AtomicInteger running = new AtomicInteger();
    AtomicInteger maxRunning = new AtomicInteger();
    AtomicInteger rejectedCalls = new AtomicInteger();
    // A future cancelled just after a worker took it still counts as a (no-op) completed task.
    AtomicInteger cancelledFutures = new AtomicInteger();
    AtomicBoolean stop = new AtomicBoolean();

    Thread resizer = new Thread(() -> {
      ThreadLocalRandom r = ThreadLocalRandom.current();
      while (!stop.get()) {
        pool.resize(capacity / 4 + r.nextInt(capacity - capacity / 4 + 1));
        LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
      }
      pool.resize(capacity);
    }, "resizer");
    resizer.start();

    CountDownLatch done = new CountDownLatch(SUBMITTERS);
    for (int s = 0; s < SUBMITTERS; s++) {
      int base = s * PER_SUBMITTER;
      fixture.call("submitter-" + s, () -> {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        SerialExecutor lane = pool.newSerialExecutor();
        try {
          for (int i = 0; i < PER_SUBMITTER; i++) {
            int id = base + i;
            boolean blocks = r.nextInt(10) == 0;
            Runnable task = () -> {
              int now = running.incrementAndGet();
              maxRunning.accumulateAndGet(now, Math::max);
              runs.incrementAndGet(id);
              if (blocks) {
                LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(50 + r.nextInt(200)));
              }
              running.decrementAndGet();
            };
            int kind = r.nextInt(5);
            kinds.set(id, kind);
            try {
              switch (kind) {
                case 0 -> {
                  pool.execute(task);
                  accepted.set(id, 1);
                }
                case 1 -> {
                  accepted.set(id, 1);
                  TaskHandle h = pool.enqueue(task);
                  if (r.nextInt(10) == 0 && h.cancel()) {
                    accepted.set(id, 0);
                  }
                }
                case 2 -> {
                  accepted.set(id, 1);
                  Future<?> f = pool.submit(task);
                  if (r.nextInt(10) == 0 && f.cancel(false)) {
                    // FutureTask.cancel also succeeds while the body runs: it ran once or never.
                    accepted.set(id, EITHER);
                    cancelledFutures.incrementAndGet();
                  }
                }
                case 3 -> {
                  if (pool.tryExecute(task)) {
                    accepted.set(id, 1);
                  }
                }
                default -> {
                  lane.execute(task);
                  accepted.set(id, 1);
                }
              }
            } catch (RejectedExecutionException rejected) {
              accepted.set(id, 0); // a factory failure rejects only the task that needed the thread
              rejectedCalls.incrementAndGet();
            }
          }
        } finally {
          done.countDown();
        }
      });
    }
    PoolFixture.await(done);
    stop.set(true);
    resizer.join();

    PoolFixture.eventually().untilAsserted(() -> {
      PoolStats st = pool.stats();
      assertThat(st.waiting()).isZero();
      assertThat(st.busy()).isZero();
      assertThat(st.completed() + st.failed()).isEqualTo(st.submitted());
      assertThat(st.workersStarted() - st.workersExpired() - st.workersStopped())
          .as("workers accounted for at quiescence (%s)", st).isEqualTo(st.workers());
    });
    assertThat(sampler.stop()).as("snapshots with a negative counter (%d samples, factory %s)",
        sampler.samples(), factory instanceof RogueFactory rogue
            ? java.util.Arrays.toString(rogue.tricks) : "flaky").isEmpty();
    List<String> wrong = new ArrayList<>();
    int acceptedCount = 0;
    for (int id = 0; id < total; id++) {
      int want = accepted.get(id);
      if (want == EITHER) {
        acceptedCount += runs.get(id);
        if (runs.get(id) <= 1) {
          continue;
        }
      } else {
        acceptedCount += want;
      }
      if (runs.get(id) != want) {
        wrong.add("task " + id + " (" + KINDS[kinds.get(id)] + ") accepted=" + want + " ran "
            + runs.get(id) + "x");
      }
    }
    assertThat(wrong).as("tasks run other than exactly once per acceptance").isEmpty();
    PoolStats st = pool.stats();
    assertThat(st.submitted()).as("submitted (%s)", st)
        .isBetween((long) acceptedCount, (long) acceptedCount + cancelledFutures.get());
    assertThat(st.completed()).isEqualTo(st.submitted());
    assertThat(st.failed()).isZero();
    assertThat(maxRunning.get()).as("tasks running at once").isLessThanOrEqualTo(capacity);
    assertThat(st.workers()).isLessThanOrEqualTo(capacity);
    pool.shutdown();
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    PoolStats end = pool.stats();
    assertThat(end.workers()).isZero();
    assertThat(end.workersStarted() - end.workersExpired() - end.workersStopped())
        .as("workers accounted for (%s)", end).isZero();
  }

  /** Wall-clock budget of each time-boxed test below (system property warmpool.stress.seconds). */
  static final long BUDGET_NANOS =
      TimeUnit.SECONDS.toNanos(Long.getLong("warmpool.stress.seconds", 4));

  /**
   * Guarantees 9 and 13 for a lane's {@code close()} racing its {@code execute()} while the lane's
   * carrier waits in the pool's line: each round fills every seat with gated tasks, then per lane two
   * threads execute (or executeAdmitted) tasks while a third closes the lane and a fourth opens the
   * gates, all at random moments. Every call either threw and its task never ran, or returned and
   * its task ran at most once (a task that did not run was withdrawn by the close); a call that
   * began after {@code close()} returned threw; and per round, at quiescence, the pool counted
   * exactly the tasks that ran: submitted == completed, completed == gates + runs, failed == 0.
   */
  @ParameterizedTest(name = "capacity {0}")
  @ValueSource(ints = {1, 3})
  void laneCloseRacingExecuteWithTheCarrierInLineStrandsNoTask(int capacity) throws Exception {
    final int lanesPerRound = 3;
    final int executors = 2;
    final int perExecutor = 8;
    final int perRound = lanesPerRound * executors * perExecutor;
    WorkerPool pool = fixture.pool("lane-close-stress", b -> b.capacity(capacity).maxWaiting(16));
    PoolFixture.StatsSampler sampler = new PoolFixture.StatsSampler(pool);
    long deadline = System.nanoTime() + BUDGET_NANOS / 2;
    List<String> wrong = new ArrayList<>();
    int rounds = 0;
    long threw = 0;
    long ran = 0;
    long withdrawn = 0;
    while (System.nanoTime() < deadline && wrong.isEmpty()) {
      rounds++;
      PoolStats before = pool.stats();
      List<PoolFixture.Gate> gates = new ArrayList<>();
      for (int g = 0; g < capacity; g++) {
        PoolFixture.Gate gate = new PoolFixture.Gate();
        gates.add(gate);
        pool.execute(gate.task());
      }
      for (PoolFixture.Gate gate : gates) {
        gate.awaitArrival(); // the pool is full: a lane's first task sends its carrier to the line
      }
      AtomicIntegerArray runs = new AtomicIntegerArray(perRound);
      AtomicIntegerArray outcome = new AtomicIntegerArray(perRound); // 1 accepted, 0 threw
      AtomicIntegerArray afterClose = new AtomicIntegerArray(perRound);
      AtomicBoolean[] closed = new AtomicBoolean[lanesPerRound];
      SerialExecutor[] lanes = new SerialExecutor[lanesPerRound];
      CountDownLatch go = new CountDownLatch(1);
      List<Thread> threads = new ArrayList<>();
      for (int l = 0; l < lanesPerRound; l++) {
        SerialExecutor lane = pool.newSerialExecutor();
        AtomicBoolean laneClosed = new AtomicBoolean();
        lanes[l] = lane;
        closed[l] = laneClosed;
        for (int e = 0; e < executors; e++) {
          int base = (l * executors + e) * perExecutor;
          threads.add(new Thread(() -> {
            ThreadLocalRandom r = ThreadLocalRandom.current();
            PoolFixture.await(go);
            for (int k = 0; k < perExecutor; k++) {
              int id = base + k;
              spin(r.nextInt(200));
              Runnable task = () -> runs.incrementAndGet(id);
              boolean late = laneClosed.get();
              afterClose.set(id, late ? 1 : 0);
              outcome.set(id, 1); // before the call: the task may run before it returns
              try {
                if (r.nextInt(4) == 0) {
                  lane.executeAdmitted(task);
                } else {
                  lane.execute(task);
                }
              } catch (RejectedExecutionException rejected) {
                outcome.set(id, 0);
              }
            }
          }, "lane-executor"));
        }
        threads.add(new Thread(() -> {
          PoolFixture.await(go);
          spin(ThreadLocalRandom.current().nextInt(1_500));
          lane.close();
          laneClosed.set(true);
        }, "lane-closer"));
      }
      threads.add(new Thread(() -> {
        PoolFixture.await(go);
        spin(ThreadLocalRandom.current().nextInt(3_000));
        gates.forEach(PoolFixture.Gate::open);
      }, "gate-opener"));
      for (Thread t : threads) {
        t.setDaemon(true);
        t.start();
      }
      go.countDown();
      for (Thread t : threads) {
        t.join(TimeUnit.SECONDS.toMillis(30));
        if (t.isAlive()) {
          AssertionError stuck = new AssertionError(t.getName() + " stuck in round " + rounds
              + ": " + pool.stats());
          stuck.setStackTrace(t.getStackTrace());
          throw stuck;
        }
      }
      PoolStats after = awaitQuiet(pool);
      int roundRuns = 0;
      for (int id = 0; id < perRound; id++) {
        int n = runs.get(id);
        roundRuns += n;
        if (outcome.get(id) == 0) {
          threw++;
          if (n != 0) {
            wrong.add("round " + rounds + ": task " + id + " rejected at its call but ran " + n
                + "x");
          }
        } else if (n > 1) {
          wrong.add("round " + rounds + ": task " + id + " ran " + n + "x");
        } else if (afterClose.get(id) == 1) {
          wrong.add("round " + rounds + ": task " + id + " accepted by a lane whose close() had"
              + " returned; ran " + n + "x");
        } else {
          ran += n;
          withdrawn += 1 - n;
        }
      }
      for (SerialExecutor lane : lanes) {
        assertThat(lane.isClosed()).isTrue();
      }
      long submitted = after.submitted() - before.submitted();
      long completed = after.completed() - before.completed();
      long failed = after.failed() - before.failed();
      if (submitted != completed + failed || failed != 0 || completed != capacity + roundRuns) {
        wrong.add("round " + rounds + ": counted submitted " + submitted + ", completed "
            + completed + ", failed " + failed + " for " + capacity + " gates + " + roundRuns
            + " lane runs (before " + before + ", after " + after + ")");
      }
    }
    assertThat(wrong).as("lane close racing execute (%d rounds)", rounds).isEmpty();
    assertThat(sampler.stop()).as("snapshots with a negative counter").isEmpty();
    assertThat(rounds).isPositive();
    assertThat(ran).as("lane tasks that ran").isPositive();
    assertThat(threw + withdrawn).as("lane tasks refused or withdrawn by close").isPositive();
  }

  /** Busy-waits about {@code n} spin hints: a random offset for a racing operation. */
  static void spin(int n) {
    for (int i = 0; i < n; i++) {
      Thread.onSpinWait();
    }
  }

  /**
   * Waits (at most 30 s) until the pool has no task running or waiting and its counters balance;
   * returns the last snapshot either way, so the caller reports the state it is stuck in.
   */
  static PoolStats awaitQuiet(WorkerPool pool) {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    PoolStats st = pool.stats();
    while (System.nanoTime() < until) {
      st = pool.stats();
      if (st.busy() == 0 && st.waiting() == 0 && st.submitted() == st.completed() + st.failed()) {
        return st;
      }
      LockSupport.parkNanos(50_000); // polling interval of a bounded wait
    }
    return st;
  }
}
