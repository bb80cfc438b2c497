package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitWaiting;
import static dev.warmpool.PoolFixture.eventually;
import static dev.warmpool.PoolFixture.uniqueName;
import static dev.warmpool.PoolFixture.waitUntil;
import static dev.warmpool.TestFactories.quietDaemon;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Adversarial review of pool-core (public API only). Each test names what it proves and carries its
 * measured failure rate. CONFIRMED faults fail; PROBE tests pass and document an attack that found
 * nothing. See /work/rev/REVIEW.md.
 */
@Timeout(60)
class AdversarialReviewTest {
  private static final Duration HOUR = Duration.ofHours(1);

  @AutoClose final PoolFixture fixture = new PoolFixture();

  // ---------------------------------------------------------------------------------------------
  // Hostile factory: normal daemon threads, except the calls it is told to block or fail.

  static final class Factory implements ThreadFactory {
    final String name;
    final AtomicInteger calls = new AtomicInteger();
    final AtomicInteger made = new AtomicInteger();
    /** Calls numbered >= blockFrom block on {@link #release} (0: never). */
    volatile int blockFrom;
    /** Calls numbered >= failFrom throw (0: never). */
    volatile int failFrom;
    final CountDownLatch release = new CountDownLatch(1);
    final CountDownLatch blocked = new CountDownLatch(1);
    final List<Thread> blockedCallers = new CopyOnWriteArrayList<>();

    Factory(String name) {
      this.name = name;
    }

    @Override
    public Thread newThread(Runnable r) {
      int n = calls.incrementAndGet();
      if (failFrom > 0 && n >= failFrom) {
        throw new IllegalStateException("no thread for call " + n);
      }
      if (blockFrom > 0 && n >= blockFrom) {
        blockedCallers.add(Thread.currentThread());
        blocked.countDown();
        try {
          release.await(30, SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return quietDaemon(r, name + "-" + made.incrementAndGet());
    }
  }

  // ---------------------------------------------------------------------------------------------
  // CONFIRMED 1 (guarantee 12 / Engine class notes "Workers themselves never call the factory")

  /**
   * Failure rate: 4 of 4 runs (deterministic). A parent worker W1 finishes a subpool task; Subpool.release
   * -> giveBackSeat -> drainLine -> handOff -> forward(ADMITTED) -> parent.enqueue -> BoundedPool.place
   * -> Engine.place, which on W1's thread (mayStartHere() is true on a worker) sees spinning == 0,
   * idle == 0 (W1 is still inside its task) and a free slot, and calls the factory ON THE WORKER,
   * with the next subpool task bound to the thread being started. The factory blocks: the task waits
   * although W1 itself is free to take it, and W1 (still holding its parent seat) is stuck in user
   * code.
   */
  @Test
  void subpoolHandOffOnAWorkerNeverCallsABlockingFactory_guarantee12() throws Exception {
    String name = uniqueName("advsub-");
    Factory factory = new Factory(name);
    WorkerPool parent = fixture.track(WorkerPool.builder().name(name).capacity(2).maxIdle(HOUR)
        .threadFactory(factory).build());
    WorkerPool sub = parent.newSubpool("db", 1);
    PoolFixture.Gate first = fixture.occupy(sub);
    Thread w1 = first.thread();
    AtomicInteger secondRuns = new AtomicInteger();
    sub.enqueue(secondRuns::incrementAndGet); // waits in the subpool's line
    awaitWaiting(sub, 1);
    factory.blockFrom = factory.calls.get() + 1; // every further thread start blocks

    first.open(); // W1 finishes the first task and forwards the second to the parent
    boolean ranPromptly = waitUntil(Duration.ofSeconds(2), () -> secondRuns.get() == 1);
    boolean factoryCalledOnWorker = factory.blockedCallers.contains(w1);
    factory.release.countDown();
    long r0 = System.nanoTime();
    eventually().atMost(Duration.ofSeconds(5)).until(() -> secondRuns.get() == 1);
    System.out.printf("subpoolHandOff: ran %d ms after release%n", (System.nanoTime() - r0) / 1_000_000);
    long t0 = System.nanoTime();
    parent.shutdown();
    boolean terminated = parent.awaitTermination(5, SECONDS);
    long tookMs = (System.nanoTime() - t0) / 1_000_000;
    PoolStats end = parent.stats();
    PoolStats subEnd = sub.stats();
    System.out.printf("subpoolHandOff: termination took %d ms%n", tookMs);

    SoftAssertions.assertSoftly(s -> {
      s.assertThat(terminated).as("parent terminated after %d ms (%s; sub %s)", tookMs, end, subEnd)
          .isTrue();
      s.assertThat(factoryCalledOnWorker)
          .as("the factory was called on worker %s (callers: %s)", w1.getName(),
              factory.blockedCallers)
          .isFalse();
      s.assertThat(ranPromptly)
          .as("the next subpool task ran within 2 s while its worker was free and the factory"
              + " blocked")
          .isTrue();
    });
  }

  // ---------------------------------------------------------------------------------------------
  // CONFIRMED 2 (section 3: "enqueue never blocks the caller"; submit never blocks either)

  /**
   * Failure rate: 2 of 2 runs (deterministic). With no worker idle or spinning and a free slot,
   * Engine.place starts a worker directly on the submitting thread (mayFail = mode != ADMITTED),
   * so enqueue/submit call the factory inline and block for as long as it blocks.
   */
  @Test
  void enqueueNeverBlocksItsCallerEvenWhenTheFactoryBlocks_section3() throws Exception {
    String name = uniqueName("advenq-");
    Factory factory = new Factory(name);
    factory.blockFrom = 1;
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(2).maxIdle(HOUR)
        .threadFactory(factory).build());
    AtomicInteger ran = new AtomicInteger();
    PoolFixture.Caller<TaskHandle> enq = fixture.call("enqueue", () -> pool.enqueue(ran::incrementAndGet));
    boolean returned = waitUntil(Duration.ofSeconds(1), enq::isDone);
    factory.release.countDown();
    enq.result(Duration.ofSeconds(5));
    eventually().atMost(Duration.ofSeconds(5)).until(() -> ran.get() == 1);
    assertThat(returned).as("enqueue returned within 1 s while the thread factory blocked").isTrue();
  }

  // ---------------------------------------------------------------------------------------------
  // CONFIRMED 3 (guarantee 14 and 11): one shard's failed thread start rejects a task another
  // shard's idle worker could take

  /**
   * Failure rate: 2 of 2 runs (deterministic). ShardedPool.dispatch probes shard 1 first (round robin);
   * the probe takes a free seat there and Engine.place tries a direct start; the factory fails and
   * BoundedPool.place throws RejectedExecutionException straight out of ShardedPool.probe, which
   * never offers the task to shard 0, whose worker is idle with its seat free.
   */
  @Test
  void shardedPoolDoesNotRejectForOneShardsFailedStartWhileAnotherShardIsIdle_guarantee14() {
    String name = uniqueName("advshard-");
    Factory factory = new Factory(name);
    ShardedPool pool = ShardedPool.of(2, ShardedPool.Placement.ROUND_ROBIN,
        WorkerPool.builder().name(name).capacity(1).maxIdle(HOUR).nonblocking(true)
            .threadFactory(factory));
    fixture.track(pool);
    CountDownLatch done = new CountDownLatch(1);
    pool.execute(done::countDown); // turn 0: shard 0 starts its worker
    PoolFixture.await(done);
    eventually().atMost(Duration.ofSeconds(5)).until(() -> pool.stats(0).idle() == 1);
    factory.failFrom = factory.calls.get() + 1; // no further thread can be made

    AtomicInteger ran = new AtomicInteger();
    Throwable outcome = null;
    try {
      pool.execute(ran::incrementAndGet); // turn 1: shard 1 first
    } catch (RejectedExecutionException e) {
      outcome = e;
    }
    Throwable finalOutcome = outcome;
    eventually().atMost(Duration.ofSeconds(5)).until(() -> finalOutcome != null || ran.get() == 1);
    assertThat(outcome)
        .as("execute with shard 0 idle (stats shard 0: %s)", pool.stats(0))
        .isNull();
  }

  // ---------------------------------------------------------------------------------------------
  // Lane close racing execute: a closed lane must not keep its place in line

  /**
   * SerialLane.close drains the queue, then leaveLine() checks queue.isEmpty(). An execute() that
   * passed checkOpen before the close offers its task after the drain and before that check, so
   * close sees the queue non-empty and keeps the carrier in line; the execute then withdraws its
   * task (refuseIfClosed) and nobody takes the carrier out. The closed, empty lane keeps a place
   * in line (stats().waiting, maxWaiting) until a seat frees. PROBE (passes): 0 of 3000 and 0 of
   * 1000 rounds on this machine; the window (between close's drain loop and its isEmpty check) is
   * a few instructions wide. Kept as a regression probe; see REVIEW.md, suspected issue S1.
   */
  @Test
  void closedLaneRacingExecuteGivesUpItsPlaceInLine_guarantee9and13() throws Exception {
    String name = uniqueName("advlane-");
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(1).maxIdle(HOUR)
        .build());
    PoolFixture.Gate busy = fixture.occupy(pool);
    int rounds = 1000;
    int stranded = 0;
    int refused = 0;
    CyclicBarrier start = new CyclicBarrier(2);
    for (int round = 0; round < rounds; round++) {
      SerialExecutor lane = pool.newSerialExecutor();
      lane.execute(() -> { }); // admitted: the lane's carrier waits in line
      int before = pool.stats().waiting();
      AtomicBoolean wasRefused = new AtomicBoolean();
      Thread closer = new Thread(() -> {
        try {
          start.await();
        } catch (Exception e) {
          throw new AssertionError(e);
        }
        lane.close();
      });
      closer.start();
      start.await();
      try {
        lane.execute(() -> { });
      } catch (RejectedExecutionException e) {
        wasRefused.set(true);
      }
      closer.join();
      if (wasRefused.get()) {
        refused++;
      }
      int after = pool.stats().waiting();
      if (after != before - 1) {
        stranded++;
      }
    }
    System.out.printf("closedLaneRacingExecute: %d of %d rounds left a closed lane in line"
        + " (execute refused in %d)%n", stranded, rounds, refused);
    int waiting = pool.stats().waiting();
    assertThat(stranded).as("rounds (of %d) whose closed lane kept its place in line; waiting now %d",
        rounds, waiting).isZero();
  }

  // ---------------------------------------------------------------------------------------------
  // Fuzz: hostile factory x every door x shutdown/shutdownNow at a random moment

  /** A task that counts its runs. */
  static final class Tracked implements Runnable {
    final AtomicInteger runs = new AtomicInteger();

    @Override
    public void run() {
      runs.incrementAndGet();
      if (java.util.concurrent.ThreadLocalRandom.current().nextInt(8) == 0) {
        Thread.yield();
      }
    }
  }

  /** Makes threads that misbehave now and then: throw, start then throw, return started, block. */
  static final class ChaosFactory implements ThreadFactory {
    final String name;
    final AtomicInteger made = new AtomicInteger();

    ChaosFactory(String name) {
      this.name = name;
    }

    @Override
    public Thread newThread(Runnable r) {
      java.util.concurrent.ThreadLocalRandom rnd = java.util.concurrent.ThreadLocalRandom.current();
      int roll = rnd.nextInt(20);
      Thread t = quietDaemon(r, name + "-" + made.incrementAndGet());
      switch (roll) {
        case 0 -> throw new IllegalStateException("no thread");
        case 1 -> {
          return null;
        }
        case 2 -> {
          t.start();
          throw new IllegalStateException("started, then failed");
        }
        case 3 -> {
          t.start();
          return t;
        }
        case 4 -> {
          try {
            Thread.sleep(1);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return t;
        }
        default -> {
          return t;
        }
      }
    }
  }

  /**
   * PROBE/fuzz. Every accepted task runs exactly once or is handed back; a rejected task never runs;
   * a timer not run nor handed back ends cancelled; counters exact after termination. Measured: 1 of
   * 60 rounds failed (C4, workersStarted lagging), then 0 of 80; passes unless C4 shows up.
   */
  @Test
  void chaosFactoryEveryDoorRacingShutdownKeepsEveryGuarantee_guarantees4_5_7_11_13()
      throws Exception {
    int rounds = 80;
    int bad = 0;
    StringBuilder why = new StringBuilder();
    Thread me = Thread.currentThread();
    for (int round = 0; round < rounds; round++) {
      String name = uniqueName("advchaos-");
      // A round takes milliseconds; one that takes 20 s prints where this thread and the pool's are
      // (once, a loaded CI run spent 376 s in this test and reported nothing).
      Thread watchdog = quietDaemon(() -> {
        try {
          Thread.sleep(20_000);
        } catch (InterruptedException roundEnded) {
          return;
        }
        StringBuilder b = new StringBuilder("chaos watchdog: a round is taking over 20 s; the test");
        for (StackTraceElement f : me.getStackTrace()) {
          b.append("\n    at ").append(f);
        }
        System.out.println(b.append(
            PoolFixture.threadStacks(n -> n.startsWith(name), Integer.MAX_VALUE)));
      }, name + "-watchdog");
      watchdog.start();
      boolean nonblocking = round % 3 == 0;
      boolean now = round % 2 == 0;
      WorkerPool pool = WorkerPool.builder().name(name).capacity(3).maxIdle(Duration.ofMillis(5))
          .nonblocking(nonblocking).maxWaiting(50).threadFactory(new ChaosFactory(name))
          .failureHandler(TestFactories.QUIET).build();
      fixture.track(pool);
      List<Object[]> accepted = new CopyOnWriteArrayList<>(); // {Tracked, identityInList, kind}
      List<Tracked> rejected = new CopyOnWriteArrayList<>();
      SerialExecutor lane = pool.newSerialExecutor();
      CountDownLatch go = new CountDownLatch(1);
      AtomicBoolean stop = new AtomicBoolean();
      Thread[] submitters = new Thread[3];
      for (int i = 0; i < submitters.length; i++) {
        int id = i;
        submitters[i] = new Thread(() -> {
          try {
            go.await();
          } catch (InterruptedException e) {
            return;
          }
          java.util.concurrent.ThreadLocalRandom rnd = java.util.concurrent.ThreadLocalRandom.current();
          for (int n = 0; n < 400 && !stop.get(); n++) {
            Tracked t = new Tracked();
            int door = rnd.nextInt(6);
            try {
              switch (door) {
                case 0 -> {
                  if (nonblocking) {
                    pool.execute(t);
                  } else if (!pool.tryExecute(t)) {
                    rejected.add(t);
                    continue;
                  }
                  accepted.add(new Object[] {t, t, "execute"});
                }
                case 1 -> {
                  TaskHandle h = pool.enqueue(t);
                  if (rnd.nextInt(4) == 0 && h.cancel()) {
                    accepted.add(new Object[] {t, t, "cancelled"});
                  } else {
                    accepted.add(new Object[] {t, t, "enqueue"});
                  }
                }
                case 2 -> accepted.add(new Object[] {t, pool.submit(t), "submit"});
                case 3 -> accepted.add(new Object[] {t, pool.schedule(t, rnd.nextInt(2),
                    TimeUnit.MILLISECONDS), "schedule"});
                case 4 -> {
                  lane.execute(t);
                  accepted.add(new Object[] {t, t, "lane"});
                }
                default -> {
                  if (id == 0 && rnd.nextInt(4) == 0) {
                    pool.resize(1 + rnd.nextInt(4));
                  }
                  continue;
                }
              }
            } catch (RejectedExecutionException e) {
              rejected.add(t);
            }
          }
        }, name + "-submitter-" + i);
        submitters[i].setDaemon(true);
        submitters[i].start();
      }
      go.countDown();
      Thread.sleep(java.util.concurrent.ThreadLocalRandom.current().nextInt(1, 8));
      List<Runnable> back = now ? pool.shutdownNow() : List.of();
      if (!now) {
        pool.shutdown();
      }
      stop.set(true);
      for (Thread t : submitters) {
        t.join(10_000);
      }
      boolean terminated = pool.awaitTermination(10, SECONDS);
      java.util.Set<Object> backSet = java.util.Collections.newSetFromMap(
          new java.util.IdentityHashMap<>());
      backSet.addAll(back);
      StringBuilder r = new StringBuilder();
      if (!terminated) {
        // Once seen in a loaded CI run (the test ran 376 s, no round reported): stop at the first
        // such round, with what every thread of the pool (and the submitters) is doing.
        r.append(" not terminated ").append(pool.stats())
            .append(PoolFixture.threadStacks(n -> n.startsWith(name), Integer.MAX_VALUE));
        why.append("\n round ").append(round).append(":").append(r);
        bad++;
        watchdog.interrupt();
        break;
      }
      for (Object[] a : accepted) {
        Tracked t = (Tracked) a[0];
        String kind = (String) a[2];
        int runs = t.runs.get();
        boolean handed = backSet.contains(a[1]);
        if (kind.equals("cancelled")) {
          if (runs != 0 || handed) {
            r.append(" cancelled task ran/handed back");
          }
        } else if (kind.equals("schedule")) {
          java.util.concurrent.Future<?> f = (java.util.concurrent.Future<?>) a[1];
          if (runs + (handed ? 1 : 0) > 1) {
            r.append(" timer twice");
          }
          if (runs == 0 && !handed && !waitUntil(Duration.ofSeconds(2), f::isDone)) {
            r.append(" timer pending on terminated pool");
          }
        } else if (runs + (handed ? 1 : 0) != 1) {
          r.append(" ").append(kind).append(" runs=").append(runs).append(" handed=").append(handed);
        }
      }
      for (Tracked t : rejected) {
        if (t.runs.get() != 0) {
          r.append(" rejected task ran");
        }
      }
      PoolStats st0 = pool.stats();
      Thread.sleep(50);
      PoolStats st = pool.stats();
      if (!st0.toString().equals(st.toString())) {
        r.append(" stats moved after termination: ").append(st0).append(" -> ").append(st);
      }
      if (st.submitted() != st.completed() + st.failed() + back.size()) {
        r.append(" submitted ").append(st.submitted()).append(" != completed+failed+back ")
            .append(st.completed() + st.failed() + back.size());
      }
      if (st.workersStarted() - st.workersExpired() - st.workersStopped() != st.workers()
          || st.workers() != 0 || st.busy() != 0 || st.waiting() != 0) {
        r.append(" worker counters ").append(st);
      }
      watchdog.interrupt();
      if (r.length() > 0) {
        bad++;
        if (why.length() < 4000) {
          why.append("\n round ").append(round).append(now ? " shutdownNow" : " shutdown")
              .append(nonblocking ? " nonblocking" : " blocking").append(":").append(r);
        }
      }
    }
    System.out.printf("chaos: %d of %d rounds broke a guarantee%s%n", bad, rounds, why);
    assertThat(bad).as("rounds (of %d) that broke a guarantee:%s", rounds, why).isZero();
  }

  // ---------------------------------------------------------------------------------------------
  // CONFIRMED 4 (guarantee 13): workersStarted is counted after Thread.start() returns

  /**
   * Failure rate: 2 of 2 runs (deterministic). ThreadStarter.start counts workersStarted in launched(),
   * after t.start() returned. A thread whose start() is slow to return (or a starter descheduled
   * there) lets the worker run its task, go idle, be stopped by shutdown (workersStopped + 1) and
   * the pool terminate, while workersStarted is still 0: at termination awaitTermination is true
   * and workersStarted - workersExpired - workersStopped == -1 != workers (0). Found first by the
   * chaos fuzz below (1 of 60 rounds: workersStarted=1, workersStopped=2).
   */
  @Test
  void workerCountersAreExactWhenAwaitTerminationReturns_guarantee13() throws Exception {
    String name = uniqueName("advstartcount-");
    CountDownLatch startMayReturn = new CountDownLatch(1);
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(1).maxIdle(HOUR)
        .threadFactory(r -> {
          Thread t = new Thread(r, name + "-1") {
            @Override
            public void start() { // not synchronized: join() locks the Thread
              super.start();
              try {
                startMayReturn.await(10, SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
          };
          t.setDaemon(true);
          return t;
        }).build());
    CountDownLatch ran = new CountDownLatch(1);
    PoolFixture.Caller<Void> caller = fixture.call("execute", () -> pool.execute(ran::countDown));
    PoolFixture.await(ran);
    eventually().atMost(Duration.ofSeconds(5)).until(() -> pool.stats().idle() == 1);
    pool.shutdown();
    boolean terminated = pool.awaitTermination(5, SECONDS);
    PoolStats atTermination = pool.stats();
    boolean callerDone = caller.isDone();
    startMayReturn.countDown();
    caller.result(Duration.ofSeconds(5));
    PoolStats later = pool.stats();
    System.out.printf("startcount: terminated=%s at=%s later=%s callerDoneBeforeRelease=%s%n",
        terminated, atTermination, later, callerDone);
    SoftAssertions.assertSoftly(s -> {
      s.assertThat(terminated).as("terminated").isTrue();
      s.assertThat(atTermination.workersStarted() - atTermination.workersExpired()
              - atTermination.workersStopped())
          .as("workersStarted - workersExpired - workersStopped when awaitTermination returned true"
              + " (%s); later: %s", atTermination, later)
          .isEqualTo(atTermination.workers());
    });
  }
}
