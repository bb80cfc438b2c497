package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitQuietly;
import static dev.warmpool.PoolFixture.eventually;
import static dev.warmpool.PoolFixture.uniqueName;
import static dev.warmpool.TestFactories.daemon;
import static dev.warmpool.TestFactories.quietDaemon;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicLong;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Second adversarial review of the pool core (DESIGN.md section 4). Public API only (plus
 * {@link PoolFixture}); interleavings are forced with hostile thread factories and latches. Each
 * test names the guarantee it checks; the comment above it gives the interleaving and how often it
 * failed on the engine it was written against (see REVIEW2.md).
 */
@Timeout(30)
class SecondReviewTest {
  private static final Duration HOUR = Duration.ofHours(1);

  @AutoClose final PoolFixture fixture = new PoolFixture();

  // ---------------------------------------------------------------------------------------------
  // Guarantee 9: awaitTermination true only when every worker thread has ended

  /**
   * The factory makes the worker's thread, starts it, and then blocks before it throws (a "start
   * then throw" factory, which counts as a success). The worker runs its task and, after shutdown,
   * exits its loop; but its thread is still alive (the factory's thread body does some cleanup
   * after the runnable returns). ThreadStarter.start records the worker in {@code started} only in
   * {@code launched()}, after the factory returned or threw; so awaitTermination's joinAll finds no
   * thread to wait for and returns true while the worker thread is alive.
   * FAILS 6 of 6 runs (deterministic: forced by latches).
   */
  @Test
  void awaitTerminationWaitsForTheThreadOfAStartThenThrowFactory_guarantee9() throws Exception {
    String name = uniqueName("rev2-stt-");
    CountDownLatch factoryStarted = new CountDownLatch(1);
    CountDownLatch releaseFactory = new CountDownLatch(1);
    CountDownLatch threadMayEnd = new CountDownLatch(1);
    List<Thread> made = new ArrayList<>();
    ThreadFactory factory = r -> {
      Thread t = quietDaemon(() -> {
        r.run();
        awaitQuietly(threadMayEnd, Duration.ofSeconds(20)); // the factory's own cleanup
      }, name + "-w");
      synchronized (made) {
        made.add(t);
      }
      return startThenThrow(t, factoryStarted, releaseFactory);
    };
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(1).maxIdle(HOUR)
        .threadFactory(factory).build());
    CountDownLatch ran = new CountDownLatch(1);
    PoolFixture.Caller<Void> caller = fixture.call("execute", () -> pool.execute(ran::countDown));
    try {
      PoolFixture.await(factoryStarted);
      PoolFixture.await(ran);
      pool.shutdown();
      boolean terminated = pool.awaitTermination(1, SECONDS);
      Thread worker;
      synchronized (made) {
        worker = made.get(0);
      }
      assertThat(!terminated || !worker.isAlive())
          .as("awaitTermination returned %s while the worker thread %s is %s", terminated,
              worker.getName(), worker.getState())
          .isTrue();
    } finally {
      releaseFactory.countDown();
      threadMayEnd.countDown();
      caller.future().get(10, SECONDS);
    }
  }

  /**
   * Same root as the test above: a worker whose thread a "start then throw" factory started is
   * added to the starter's set only after the factory returns. While the factory still blocks,
   * the worker drains a serial lane; shutdownNow looks for lanes being drained only among the
   * workers in that set, so it neither hands back the lane's queued task nor interrupts the
   * running one. The queued task then runs after shutdownNow returned.
   * FAILS 6 of 6 runs (deterministic: forced by latches).
   */
  @Test
  void shutdownNowHandsBackTheQueueOfALaneDrainedByAStartThenThrowWorker_guarantee9()
      throws Exception {
    String name = uniqueName("rev2-sttlane-");
    CountDownLatch factoryStarted = new CountDownLatch(1);
    CountDownLatch releaseFactory = new CountDownLatch(1);
    ThreadFactory factory = r -> {
      return startThenThrow(quietDaemon(r, name + "-w"), factoryStarted, releaseFactory);
    };
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(1).maxIdle(HOUR)
        .threadFactory(factory).build());
    SerialExecutor lane = pool.newSerialExecutor();
    CountDownLatch firstStarted = new CountDownLatch(1);
    CountDownLatch firstMayEnd = new CountDownLatch(1);
    AtomicInteger interrupted = new AtomicInteger();
    AtomicInteger secondRuns = new AtomicInteger();
    Runnable second = secondRuns::incrementAndGet;
    List<Runnable> handedBack;
    try {
      lane.execute(() -> {
        firstStarted.countDown();
        try {
          firstMayEnd.await(20, SECONDS);
        } catch (InterruptedException e) {
          interrupted.incrementAndGet();
        }
      });
      lane.execute(second);
      PoolFixture.await(firstStarted);
      PoolFixture.await(factoryStarted);
      handedBack = pool.shutdownNow();
    } finally {
      firstMayEnd.countDown();
      releaseFactory.countDown();
    }
    assertThat(pool.awaitTermination(10, SECONDS)).isTrue();
    SoftAssertions s = new SoftAssertions();
    s.assertThat(handedBack.contains(second) || secondRuns.get() == 0)
        .as("queued lane task handed back (%s) or never run (runs %d)",
            handedBack.contains(second), secondRuns.get())
        .isTrue();
    s.assertThat(interrupted.get()).as("running lane task interrupted by shutdownNow").isEqualTo(1);
    s.assertAll();
  }

  // ---------------------------------------------------------------------------------------------
  // Guarantee 9: shutdownNow hands back waiting tasks

  /**
   * execute's direct start binds the task to the new worker as its first task before the factory
   * is called. While the factory blocks, the task is accepted (seat and counter taken) but in no
   * queue: shutdownNow cannot hand it back, nor interrupt its worker (not yet in the starter's
   * set). When the factory returns, the task starts running after shutdownNow has returned,
   * uninterrupted, although it was neither running nor handed back. (ThreadPoolExecutor re-checks
   * the run state after making the thread and fails the start.)
   * FAILS 6 of 6 runs (deterministic: forced by latches).
   */
  @Test
  void shutdownNowHandsBackATaskWaitingForItsDirectStart_guarantee9() throws Exception {
    String name = uniqueName("rev2-now-");
    CountDownLatch inFactory = new CountDownLatch(1);
    CountDownLatch releaseFactory = new CountDownLatch(1);
    ThreadFactory factory = r -> {
      inFactory.countDown();
      awaitQuietly(releaseFactory, Duration.ofSeconds(20));
      return daemon(r, name + "-w");
    };
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(1).maxIdle(HOUR)
        .threadFactory(factory).build());
    AtomicLong ranAt = new AtomicLong();
    AtomicInteger runs = new AtomicInteger();
    Runnable task = () -> {
      runs.incrementAndGet();
      ranAt.set(System.nanoTime());
    };
    PoolFixture.Caller<Void> caller = fixture.call("execute", () -> pool.execute(task));
    List<Runnable> handedBack;
    long nowReturned;
    try {
      PoolFixture.await(inFactory);
      handedBack = pool.shutdownNow();
      nowReturned = System.nanoTime();
    } finally {
      releaseFactory.countDown();
    }
    Throwable outcome = null;
    try {
      caller.future().get(10, SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      outcome = e.getCause();
    }
    assertThat(pool.awaitTermination(10, SECONDS)).isTrue();
    SoftAssertions s = new SoftAssertions();
    boolean returned = handedBack.contains(task);
    boolean rejected = outcome instanceof RejectedExecutionException;
    boolean ranBeforeNow = runs.get() == 1 && ranAt.get() - nowReturned < 0;
    s.assertThat(returned || rejected || ranBeforeNow)
        .as("task: handed back %s, rejected %s, runs %d, ran %s shutdownNow returned", returned,
            rejected, runs.get(), runs.get() == 0 ? "never" : ranBeforeNow ? "before" : "after")
        .isTrue();
    PoolStats st = pool.stats();
    s.assertThat(st.submitted()).as("submitted == completed + failed + handed back (%s)", st)
        .isEqualTo(st.completed() + st.failed() + handedBack.size());
    s.assertAll();
  }

  // ---------------------------------------------------------------------------------------------
  // Guarantee 12: a blocking factory never delays a task a running worker could take

  /**
   * Capacity 2, one worker W busy with a task. execute(T) sees nobody spinning, nobody idle and a
   * free slot, so Engine.place starts a worker directly with T as its first task, and the factory
   * blocks. W then finishes and parks idle; T waits for the blocked factory although W (running
   * at the time of the call, idle right after) could take it. With enqueue instead of execute, W
   * takes T at once.
   * FAILS 6 of 6 runs (deterministic: forced by latches).
   */
  @Test
  @Disabled("Known limitation, documented in Engine, WorkerPool.Builder.threadFactory, the README and"
      + " the issue 20 note: an execute that starts a worker carries its task on it (as"
      + " ThreadPoolExecutor does), so a blocking factory delays that one task even if another"
      + " worker frees up meanwhile. Kept as the reproducer for the next engine step (a pending"
      + " first task another worker may claim, Worker.claimFirst).")
  void blockingFactoryOfADirectStartDelaysNoTaskARunningWorkerCouldTake_guarantee12()
      throws Exception {
    String name = uniqueName("rev2-direct-");
    BlocksOnCall factory = new BlocksOnCall(2, name);
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(2).maxIdle(HOUR)
        .threadFactory(factory).build());
    CountDownLatch longStarted = new CountDownLatch(1);
    CountDownLatch longMayEnd = new CountDownLatch(1);
    pool.execute(() -> {
      longStarted.countDown();
      awaitQuietly(longMayEnd, Duration.ofSeconds(20));
    });
    PoolFixture.await(longStarted);
    CountDownLatch tRan = new CountDownLatch(1);
    PoolFixture.Caller<Void> caller = fixture.call("execute", () -> pool.execute(tRan::countDown));
    try {
      PoolFixture.await(factory.inFactory);
      longMayEnd.countDown(); // W finishes and goes idle
      eventually().atMost(Duration.ofSeconds(5)).until(() -> pool.stats().idle() == 1);
      boolean ran = tRan.await(2, SECONDS);
      assertThat(ran)
          .as("T ran while the factory blocked and worker W was idle (stats %s)", pool.stats())
          .isTrue();
    } finally {
      factory.release.countDown();
      caller.future().get(10, SECONDS);
    }
  }

  /**
   * Capacity 4, no worker yet. enqueue(T1) hands the start to the background, whose factory call
   * blocks (Engine.signalWork holds {@code starting}, one start in flight). enqueue(T2): nobody
   * spins, nobody is idle, three slots are free, but {@code starting} is held, so no second start
   * is tried: T2 waits for the blocked factory call made for T1, although the factory would make
   * T2's thread at once. (An execute from a user thread would start a worker directly, ignoring
   * {@code starting}, and that worker would then drain T1 and T2.)
   * FAILS 6 of 6 runs (deterministic: forced by latches).
   */
  @Test
  void blockedBackgroundStartDelaysOnlyItsOwnTask_guarantee12() throws Exception {
    String name = uniqueName("rev2-bg-");
    BlocksOnCall factory = new BlocksOnCall(1, name);
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(4).maxIdle(HOUR)
        .threadFactory(factory).build());
    try {
      CountDownLatch t1Ran = new CountDownLatch(1);
      pool.enqueue(t1Ran::countDown);
      PoolFixture.await(factory.inFactory);
      CountDownLatch t2Ran = new CountDownLatch(1);
      pool.enqueue(t2Ran::countDown);
      boolean ran = t2Ran.await(2, SECONDS);
      assertThat(ran)
          .as("T2 ran while the factory call for T1 blocked (factory calls %d, stats %s)",
              factory.calls.get(), pool.stats())
          .isTrue();
    } finally {
      factory.release.countDown();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Sharded pools: a failing shard's start

  /**
   * Two shards of capacity 1; shard 0 has a warm worker, then every thread start fails. A is
   * executed and taken by shard 0's idle worker (first pass of the probe). B is executed next: no
   * shard has a worker at hand, shard 0 has no free seat, so the second pass queues B in shard 1,
   * whose background start fails and is retried every 50 ms for ever. A then finishes: shard 0 has
   * an idle worker, but B stays in shard 1 waiting for a start that keeps failing. It is neither
   * rejected (as execute on a single pool would be, with the factory's cause) nor run.
   * FAILS 6 of 6 runs (deterministic: forced by latches).
   */
  @Test
  void noTaskWaitsForAFailingShardsStartWhileAnotherShardHasAnIdleWorker_guarantees11_14()
      throws Exception {
    String name = uniqueName("rev2-shard-");
    AtomicInteger calls = new AtomicInteger();
    AtomicInteger failFrom = new AtomicInteger(Integer.MAX_VALUE);
    ThreadFactory factory = r -> {
      if (calls.incrementAndGet() >= failFrom.get()) {
        throw new IllegalStateException("no more threads");
      }
      return daemon(r, name + "-" + calls.get());
    };
    ShardedPool pool = ShardedPool.of(2, ShardedPool.Placement.ROUND_ROBIN,
        WorkerPool.builder().name(name).capacity(1).maxIdle(HOUR).threadFactory(factory));
    fixture.track(pool);
    CountDownLatch warm = new CountDownLatch(1);
    pool.execute(warm::countDown); // turn 0: shard 0 starts its worker
    PoolFixture.await(warm);
    eventually().atMost(Duration.ofSeconds(5)).until(() -> pool.stats(0).idle() == 1);
    failFrom.set(calls.get() + 1);

    CountDownLatch aStarted = new CountDownLatch(1);
    CountDownLatch aMayEnd = new CountDownLatch(1);
    pool.execute(() -> { // turn 1: shard 0 has the idle worker
      aStarted.countDown();
      awaitQuietly(aMayEnd, Duration.ofSeconds(20));
    });
    PoolFixture.await(aStarted);
    CountDownLatch bRan = new CountDownLatch(1);
    AtomicReference<Throwable> rejection = new AtomicReference<>();
    Thread caller = new Thread(() -> {
      try {
        pool.execute(bRan::countDown); // turn 2
      } catch (RejectedExecutionException e) {
        rejection.set(e);
      }
    }, name + "-caller");
    caller.setDaemon(true);
    caller.start();
    // A blocking pool may make B wait for a seat while A holds shard 0's; A ends once B's call has
    // returned or waits (ending A before would not test the failing shard; after it returns, B
    // waited for nothing). Was: A ended after the call, which then waited out A's 20 s timeout.
    eventually().atMost(Duration.ofSeconds(5)).until(() -> !caller.isAlive()
        || caller.getState() == Thread.State.WAITING
        || caller.getState() == Thread.State.TIMED_WAITING);
    aMayEnd.countDown();
    caller.join(5_000);
    assertThat(caller.isAlive()).as("B's call returned once A ended").isFalse();
    Throwable rejected = rejection.get();
    eventually().atMost(Duration.ofSeconds(5)).until(() -> pool.stats(0).idle() == 1
        || bRan.getCount() == 0);
    boolean ran = bRan.await(2, SECONDS);
    assertThat(rejected != null || ran)
        .as("B rejected or run while shard 0 is idle (shard 0 %s, shard 1 %s)", pool.stats(0),
            pool.stats(1))
        .isTrue();
  }

  // ---------------------------------------------------------------------------------------------
  // Guarantee 7 / 5: a due timer of a sharded pool under shutdown()

  /**
   * A sharded pool's own timer fires (PENDING -> DUE) and hands its task to a shard on the timer
   * thread. shutdown() closes the sharded pool's timers (the DUE timer is left alone: it is
   * accepted work) and then shuts the shards down; the shards know nothing of the sharded pool's
   * fires in flight, so an idle shard terminates at once. If the fire reaches the shard after
   * that, the shard refuses it (PoolClosedException, counted in {@code rejected}) and the due
   * timer's future is cancelled instead of run: a due timer dropped under shutdown(), and a
   * rejection counted later on another thread. The window is a few instructions on the timer
   * thread (widened by preemption on a busy machine), so this is a stress loop of 3 s.
   * FAILS 6 of 6 runs: 2/1165, 11/2696, 17/3488, 14/4721, 8/2202 rounds (about 0.4 %
   * of rounds) on 2 busy cores.
   *
   * <p>It also caught a second fault (1 of 3 CI runs): a future not done after awaitTermination
   * returned true. A fire that found the timers closed began its own cancel (phase PENDING -> OFF)
   * outside the close's count of fires; preempted before the future's cancel, it made the sweep
   * skip the timer, and the pool terminated with the future not done. Forced deterministically by
   * ScheduledTaskTest#aFireThatFindsItsPoolClosingLeavesTheTimerToTheSweep_guarantee7.
   */
  @Test
  void dueTimerOfAShardedPoolRunsUnderShutdown_guarantees5_7() throws Exception {
    long end = System.nanoTime() + PoolFixture.stress(Duration.ofMillis(1500)).toNanos();
    int rounds = 0;
    int bad = 0;
    String detail = "";
    while (System.nanoTime() < end) {
      rounds++;
      String name = uniqueName("rev2-stimer-");
      ShardedPool pool = ShardedPool.of(2, ShardedPool.Placement.ROUND_ROBIN,
          WorkerPool.builder().name(name).capacity(2).maxIdle(HOUR).daemon(true));
      List<ScheduledFuture<?>> futures = new ArrayList<>();
      AtomicInteger ran = new AtomicInteger();
      for (int i = 0; i < 8; i++) {
        futures.add(pool.schedule(ran::incrementAndGet, 200 + 50 * i,
            java.util.concurrent.TimeUnit.MICROSECONDS));
      }
      long t0 = System.nanoTime();
      while (System.nanoTime() - t0 < 300_000) {
        Thread.onSpinWait();
      }
      pool.shutdown();
      assertThat(pool.awaitTermination(5, SECONDS)).isTrue();
      long rejected = pool.stats().rejected();
      if (rejected != 0) {
        bad++;
        detail = "round " + rounds + ": rejected " + rejected + ", ran " + ran.get();
      }
      for (ScheduledFuture<?> f : futures) {
        assertThat(f.isDone()).as("future done on a terminated pool").isTrue();
      }
    }
    System.out.printf("dueTimerOfAShardedPoolRunsUnderShutdown: %d of %d rounds bad %s%n", bad,
        rounds, detail);
    assertThat(bad).as("rounds where a due timer met a terminated shard (%s)", detail).isZero();
  }

  /**
   * A pool's timer fires (PENDING -> DUE; Timers holds the pool open) and is about to hand its
   * task to the pool when shutdownNow runs: the sweep leaves the DUE timer alone, the line and the
   * run queue are handed back without it, and shutdownNow returns. The fire then puts the task in
   * the closed line as admitted work (the pool is shut down, not terminated), and it runs after
   * shutdownNow returned, although it was due (an accepted task) when shutdownNow ran and so
   * should have been handed back (guarantee 7). The pool's only worker is held by a blocker until
   * shutdownNow interrupts it, so no timer task can run before shutdownNow: any run is a fault.
   * Stress loop of 3 s.
   * FAILS 3 of 3 runs: 1/606, 9/1157, 3/843 rounds (about 0.5 %) on 2 busy cores.
   */
  @Test
  void dueTimerRacingShutdownNowIsHandedBackNotRunAfterwards_guarantee7() throws Exception {
    long end = System.nanoTime() + PoolFixture.stress(Duration.ofMillis(1500)).toNanos();
    int rounds = 0;
    int bad = 0;
    while (System.nanoTime() < end) {
      rounds++;
      WorkerPool pool = WorkerPool.builder().name(uniqueName("rev2-tnow-")).capacity(1)
          .maxIdle(HOUR).daemon(true).build();
      CountDownLatch blocking = new CountDownLatch(1);
      pool.execute(() -> {
        blocking.countDown();
        try {
          new CountDownLatch(1).await(10, SECONDS); // until shutdownNow interrupts it
        } catch (InterruptedException e) {
          // stop
        }
      });
      PoolFixture.await(blocking);
      AtomicInteger ran = new AtomicInteger();
      for (int i = 0; i < 8; i++) {
        pool.schedule(ran::incrementAndGet, 200 + 50 * i,
            java.util.concurrent.TimeUnit.MICROSECONDS);
      }
      long t0 = System.nanoTime();
      while (System.nanoTime() - t0 < 300_000) {
        Thread.onSpinWait();
      }
      List<Runnable> back = pool.shutdownNow();
      assertThat(pool.awaitTermination(5, SECONDS)).isTrue();
      if (ran.get() > 0) {
        bad++;
      }
      PoolStats st = pool.stats();
      assertThat(st.submitted()).as("counters exact: %s, handed back %d", st, back.size())
          .isEqualTo(st.completed() + st.failed() + back.size());
    }
    System.out.printf("dueTimerRacingShutdownNow: %d of %d rounds ran a timer after shutdownNow%n",
        bad, rounds);
    assertThat(bad).as("rounds where a due timer ran after shutdownNow returned").isZero();
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * What a "start then throw" factory does with the thread it made: starts it, counts
   * {@code started} down, waits (at most 20 s) for {@code release}, then throws.
   */
  private static Thread startThenThrow(Thread t, CountDownLatch started, CountDownLatch release) {
    t.start();
    started.countDown();
    awaitQuietly(release, Duration.ofSeconds(20));
    throw new IllegalStateException("start then throw");
  }

  /**
   * Makes plain daemon threads named {@code <name>-<call>}; call number {@code blockOn} first counts
   * {@link #inFactory} down and waits (at most 20 s) for {@link #release}.
   */
  private static final class BlocksOnCall implements ThreadFactory {
    final AtomicInteger calls = new AtomicInteger();
    final CountDownLatch inFactory = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    private final int blockOn;
    private final String name;

    BlocksOnCall(int blockOn, String name) {
      this.blockOn = blockOn;
      this.name = name;
    }

    @Override
    public Thread newThread(Runnable r) {
      if (calls.incrementAndGet() == blockOn) {
        inFactory.countDown();
        awaitQuietly(release, Duration.ofSeconds(20));
      }
      return daemon(r, name + "-" + calls.get());
    }
  }
}
