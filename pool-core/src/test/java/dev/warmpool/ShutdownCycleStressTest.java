package dev.warmpool;

import static dev.warmpool.StressSubmissions.ACCEPTED;
import static dev.warmpool.StressSubmissions.AT_MOST_ONCE;
import static dev.warmpool.StressSubmissions.REJECTED;
import static dev.warmpool.StressSubmissions.WITHDRAWN;
import static dev.warmpool.StressSubmissions.submitByKind;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;

/**
 * Guarantees 4, 9 and 11 across close cycles: 8 submitters use every submission kind (execute,
 * tryExecute, enqueue, submit, pool and lane timers, lane tasks) while the thread factory fails 5%
 * of its starts and sometimes blocks, handles and futures are cancelled at random, the pool is
 * resized, and a controller keeps closing the pool ({@code shutdown} or {@code shutdownNow}),
 * awaiting termination and rebooting it. At quiescence every task is accounted for exactly once:
 * it ran, or {@code shutdownNow} handed it back, or it was never accepted (rejected, withdrawn by
 * its handle, or a timer cancelled before it was due); and the counters add up. Runs in blocking
 * mode with and without a waiting line, and in nonblocking mode.
 */
@Timeout(120)
@Tag("stress")
class ShutdownCycleStressTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private static final int CAPACITY = 16;
  private static final int SUBMITTERS = 8;
  private static final int PER_SUBMITTER = PoolFixture.stress(3_000);
  private static final String[] KINDS = {"execute", "tryExecute", "enqueue", "submit",
      "schedule", "lane", "lane.schedule"};

  /** A timer: it ran or was handed back, unless its future ended cancelled (by us or a shutdown). */
  private static final int TIMER = 4;

  /** Fails one start in twenty and blocks one in fifty for a millisecond. */
  private static final class HostileFactory implements ThreadFactory {
    private final AtomicInteger n = new AtomicInteger();
    private final String name;

    HostileFactory(String name) {
      this.name = name;
    }

    @Override
    public Thread newThread(Runnable r) {
      ThreadLocalRandom random = ThreadLocalRandom.current();
      int dice = random.nextInt(100);
      if (dice < 5) {
        throw new IllegalStateException("injected: no thread this time");
      }
      if (dice < 7) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
      }
      return TestFactories.daemon(r, name + "-" + n.incrementAndGet());
    }
  }

  /** Blocking with a line, blocking without one, and nonblocking; each config three rounds. */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blocking-64-a", "blocking-64-b", "blocking-64-c", "blocking-0-a",
      "blocking-0-b", "blocking-0-c", "nonblocking-a", "nonblocking-b", "nonblocking-c"})
  void everyTaskRunsOnceOrIsHandedBackOrWasNeverAcceptedAcrossCloseAndReboot(String config)
      throws Exception {
    cycle(config, false);
  }

  /**
   * Guarantee 9's reboot race: a rebooter thread spins on {@code isTerminated()} and calls
   * {@code reboot()} the moment it reads true, racing the end of termination, while the controller
   * keeps closing the pool ({@code shutdown} or {@code shutdownNow}) under the same load as above. After
   * each reboot the pool must be running: with a task of the new generation in flight it is not shut
   * down, not terminated, and {@code awaitTermination(0)} answers false. Every task of every
   * generation is accounted for exactly once as above, and no counter is ever negative. Time-boxed.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blocking-64", "blocking-0", "nonblocking"})
  void rebootTheMomentTerminationEndsReopensThePoolForGood(String config) throws Exception {
    cycle(config, true);
  }

  private void cycle(String config, boolean spinReboot) throws Exception {
    String name = PoolFixture.uniqueName("cycle-stress");
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(CAPACITY)
        .nonblocking(config.startsWith("nonblocking"))
        .maxWaiting(config.startsWith("blocking-64") ? 64 : 0)
        .threadFactory(new HostileFactory(name)).build());
    int perSubmitter = spinReboot ? 4 * PER_SUBMITTER : PER_SUBMITTER;
    long deadline = System.nanoTime() + (spinReboot ? EngineStressTest.BUDGET_NANOS / 4
        : Long.MAX_VALUE / 4);
    int total = SUBMITTERS * perSubmitter;
    PoolFixture.StatsSampler sampler = new PoolFixture.StatsSampler(pool);
    AtomicInteger reboots = new AtomicInteger();
    AtomicInteger probes = new AtomicInteger();
    List<String> rebootFaults = Collections.synchronizedList(new ArrayList<>());
    AtomicIntegerArray runs = new AtomicIntegerArray(total);
    AtomicIntegerArray outcome = new AtomicIntegerArray(total);
    AtomicIntegerArray kinds = new AtomicIntegerArray(total);
    AtomicIntegerArray overloadedPerKind = new AtomicIntegerArray(KINDS.length);
    Future<?>[] timers = new Future<?>[total];
    // What shutdownNow may hand back for a task: the task itself, or its future.
    Map<Object, Integer> ids = Collections.synchronizedMap(new IdentityHashMap<>());
    List<Runnable> handedBack = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger running = new AtomicInteger();
    AtomicInteger maxRunning = new AtomicInteger();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger cycles = new AtomicInteger();

    AtomicBoolean stopRebooter = new AtomicBoolean(); // after the controller: it awaits each reboot
    Thread rebooter = new Thread(() -> {
      while (!stopRebooter.get()) {
        if (!pool.isShutdown()) {
          LockSupport.parkNanos(20_000); // pacing while open; it spins hot once a close began
          continue;
        }
        if (!pool.isTerminated()) {
          Thread.onSpinWait();
          continue;
        }
        try {
          pool.reboot(); // the moment termination reads true
          reboots.incrementAndGet();
        } catch (RuntimeException e) {
          rebootFaults.add("reboot() right after isTerminated() read true threw " + e + " ("
              + pool.stats() + ")");
          return;
        }
      }
    }, "rebooter");
    rebooter.setDaemon(true);
    if (spinReboot) {
      rebooter.start();
    }
    PoolFixture.Background controller = PoolFixture.background("controller", () -> {
      ThreadLocalRandom r = ThreadLocalRandom.current();
      while (!stop.get()) {
        LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(500 + r.nextInt(3_000)));
        if (r.nextBoolean()) {
          pool.resize(1 + r.nextInt(CAPACITY));
          continue;
        }
        if (r.nextBoolean()) {
          pool.shutdown();
        } else {
          handedBack.addAll(pool.shutdownNow());
        }
        if (spinReboot) {
          awaitRebootAndProbe(pool, reboots, cycles.get(), probes, rebootFaults);
          cycles.incrementAndGet();
          continue;
        }
        if (!pool.awaitTermination(30, TimeUnit.SECONDS)) {
          throw new AssertionError("no termination: " + pool.stats());
        }
        pool.reboot();
        cycles.incrementAndGet();
      }
    });

    CountDownLatch done = new CountDownLatch(SUBMITTERS);
    for (int s = 0; s < SUBMITTERS; s++) {
      int base = s * perSubmitter;
      fixture.call("submitter-" + s, () -> {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        SerialExecutor lane = pool.newSerialExecutor();
        try {
          for (int i = 0; i < perSubmitter
              && (i < PER_SUBMITTER / 2 || System.nanoTime() < deadline); i++) {
            int id = base + i;
            boolean blocks = r.nextInt(20) == 0;
            Runnable task = () -> {
              int now = running.incrementAndGet();
              maxRunning.accumulateAndGet(now, Math::max);
              runs.incrementAndGet(id);
              if (blocks) {
                LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(20 + r.nextInt(100)));
              }
              running.decrementAndGet();
            };
            ids.put(task, id);
            int kind = r.nextInt(KINDS.length);
            kinds.set(id, kind);
            outcome.set(id, ACCEPTED); // before the call: the task may run before it returns
            try {
              submit(pool, lane, kind, task, id, r, outcome, timers, ids);
            } catch (RejectedExecutionException rejected) {
              outcome.set(id, REJECTED);
              if (rejected instanceof PoolOverloadedException) {
                overloadedPerKind.incrementAndGet(kind);
              }
              while (rejected instanceof PoolClosedException && pool.isShutdown() && !stop.get()) {
                Thread.yield(); // load shaping, not synchronisation: submit again once reopened
              }
            }
          }
        } finally {
          done.countDown();
        }
      });
    }
    PoolFixture.await(done);
    stop.set(true);
    controller.join();
    stopRebooter.set(true);
    rebooter.join(TimeUnit.SECONDS.toMillis(30));
    assertThat(controller.failures()).isZero();
    assertThat(rebootFaults).as("reboot races (%d reboots)", reboots.get()).isEmpty();

    // Settle: open or closed, the last cycle ends with a plain shutdown, so line and queue run.
    if (!pool.isShutdown()) {
      pool.shutdown();
    }
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).as("terminated: %s", pool.stats())
        .isTrue();

    int[] backCount = new int[total];
    List<String> wrong = new ArrayList<>();
    for (Runnable back : handedBack) {
      Integer id = ids.get(back);
      if (id == null) {
        wrong.add("handed back an unknown object: " + back);
      } else {
        backCount[id]++;
      }
    }
    int accounted = 0;
    int cancelledFutures = 0;
    for (int id = 0; id < total; id++) {
      int ran = runs.get(id);
      int fate = ran + backCount[id];
      int seen = outcome.get(id);
      if (seen == TIMER && timers[id].isCancelled()) {
        seen = AT_MOST_ONCE;
      }
      cancelledFutures += seen == AT_MOST_ONCE ? 1 : 0;
      boolean ok = switch (seen) {
        case REJECTED, WITHDRAWN -> fate == 0;
        case ACCEPTED, TIMER -> fate == 1;
        case AT_MOST_ONCE -> fate <= 1;
        default -> false;
      };
      accounted += ran == 1 && backCount[id] == 0 ? 1 : 0;
      if (!ok) {
        wrong.add("task " + id + " (" + KINDS[kinds.get(id)] + ") outcome " + seen + " ran "
            + ran + "x, handed back " + backCount[id] + "x"
            + (timers[id] != null ? ", future " + timers[id] : ""));
      }
    }
    assertThat(wrong).as("tasks not accounted for exactly once (%d cycles)", cycles.get())
        .isEmpty();
    assertThat(sampler.stop()).as("snapshots with a negative counter").isEmpty();
    assertThat(cycles.get()).as("close cycles").isPositive();
    assertThat(maxRunning.get()).as("tasks running at once").isLessThanOrEqualTo(CAPACITY);

    int[] ranByKind = new int[KINDS.length];
    for (int id = 0; id < total; id++) {
      ranByKind[kinds.get(id)] += runs.get(id);
    }
    // Every kind of task ran. A pool that cannot hold a direct door's caller (nonblocking, or
    // maxWaiting 0) gives each freed seat to the lane and timer entries waiting in its line, so
    // its direct doors' tasks run mostly right after a reboot (about 1 in 100 here, in 13a3012's
    // code as in this; 0 of 1,700 once at load 4.7, in 0.6 s and 20 close cycles): there a
    // direct kind may instead have been refused as overloaded, the answer the accounting above
    // checks for each task.
    boolean directMayBeRefused = !config.startsWith("blocking-64");
    for (int k = 0; k < KINDS.length; k++) {
      boolean direct = k < 4; // execute, tryExecute, enqueue, submit (submitByKind's kinds)
      assertThat(ranByKind[k] > 0 || (direct && directMayBeRefused
          && overloadedPerKind.get(k) > 0))
          .as("%s tasks ran (%d) or, in %s, were refused as overloaded (%d); per kind %s: %s",
              KINDS[k], ranByKind[k], config, overloadedPerKind.get(k), List.of(KINDS),
              Arrays.toString(ranByKind))
          .isTrue();
    }
    PoolStats st = pool.stats();
    // A cancelled future that a worker had already dequeued completes as a no-op run.
    assertThat(st.completed()).as("completed (%s)", st)
        .isBetween((long) accounted + probes.get(),
            (long) accounted + probes.get() + cancelledFutures);
    assertThat(st.failed()).isZero();
    assertThat(st.submitted()).as("submitted (%s)", st)
        .isEqualTo(st.completed() + handedBack.size());
    assertThat(st.workers()).isZero();
    assertThat(st.workersStarted() - st.workersExpired() - st.workersStopped())
        .as("workers accounted for (%s)", st).isZero();
  }

  /** One submission of the given kind; returns normally if the task was accepted. */
  private static void submit(WorkerPool pool, SerialExecutor lane, int kind, Runnable task, int id,
      ThreadLocalRandom r, AtomicIntegerArray outcome, Future<?>[] timers,
      Map<Object, Integer> ids) {
    if (submitByKind(pool, kind, task, id, r, 8, outcome, ids)) {
      return;
    }
    switch (kind) {
      case 4, 6 -> {
        long delay = r.nextInt(2_000);
        Future<?> f = kind == 4 ? pool.schedule(task, delay, TimeUnit.MICROSECONDS)
            : lane.schedule(task, delay, TimeUnit.MICROSECONDS);
        ids.put(f, id);
        timers[id] = f;
        outcome.set(id, TIMER);
        if (r.nextInt(8) == 0) {
          f.cancel(false);
        }
      }
      default -> lane.execute(task);
    }
  }

  /**
   * After a close, waits (at most 30 s) for the rebooter's reboot, then puts a task of the new
   * generation in flight and checks that the pool reads running: not shut down, not terminated,
   * {@code awaitTermination(0)} false. The probe counts as one completed task.
   */
  private static void awaitRebootAndProbe(WorkerPool pool, AtomicInteger reboots, int cycle,
      AtomicInteger probes, List<String> faults) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (reboots.get() <= cycle) {
      if (System.nanoTime() > until) {
        throw new AssertionError("no reboot within 30 s of close " + cycle + ", terminated="
            + pool.isTerminated() + ": " + pool.stats());
      }
      Thread.onSpinWait();
    }
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Runnable probe = () -> {
      started.countDown();
      try {
        release.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    };
    boolean accepted = false;
    while (!accepted) {
      if (System.nanoTime() > until) {
        throw new AssertionError("no probe accepted within 30 s after reboot " + cycle + ": "
            + pool.stats());
      }
      try {
        pool.enqueue(probe); // may be refused for load or a failed thread start: try again
        accepted = true;
      } catch (PoolClosedException closed) {
        faults.add("after reboot " + cycle + " the pool refused a task as closed: " + closed
            + " (" + pool.stats() + ")");
        return;
      } catch (RejectedExecutionException busy) {
        Thread.yield();
      }
    }
    try {
      if (!started.await(30, TimeUnit.SECONDS)) {
        throw new AssertionError("probe of generation " + cycle + " never started: "
            + pool.stats());
      }
      if (pool.isShutdown() || pool.isTerminated() || pool.awaitTermination(0, TimeUnit.NANOSECONDS)) {
        faults.add("after reboot " + cycle + ", with a task of the new generation running:"
            + " isShutdown=" + pool.isShutdown() + " isTerminated=" + pool.isTerminated()
            + " awaitTermination(0)=" + pool.awaitTermination(0, TimeUnit.NANOSECONDS) + " ("
            + pool.stats() + ")");
      }
    } finally {
      release.countDown();
    }
    probes.incrementAndGet();
  }

  /** A timer's task: counts its runs, and its runs after its pool's generation terminated. */
  private static final class TimerProbe implements CancellationAware {
    final AtomicInteger runs = new AtomicInteger();
    final AtomicInteger cancels = new AtomicInteger();
    final AtomicInteger lateRuns = new AtomicInteger();
    final AtomicBoolean terminated;

    TimerProbe(AtomicBoolean terminated) {
      this.terminated = terminated;
    }

    @Override
    public void run() {
      if (terminated.get()) {
        lateRuns.incrementAndGet();
      }
      runs.incrementAndGet();
    }

    @Override
    public void onCancel() {
      cancels.incrementAndGet();
    }
  }

  private static final String[] TIMER_KINDS = {"schedule", "scheduleAtFixedRate",
      "scheduleWithFixedDelay", "lane.schedule", "lane.scheduleAtFixedRate"};

  /**
   * Guarantees 7 and 13 for timers racing {@code shutdown()}: each round, four threads schedule
   * one-shot, fixed-rate and fixed-delay tasks on the pool and on lanes, with delays around the moment
   * the controller shuts the pool down. Once {@code awaitTermination} returned true: every future a
   * call returned is done (none pending); a one-shot future that completed normally ran exactly
   * once, and a cancelled one never ran and heard {@code onCancel} once; a periodic future ended
   * cancelled and no run of it started after {@code awaitTermination} returned; a refused call's task
   * never ran; and submitted == completed + failed with failed == 0. Then the pool is rebooted for
   * the next round. Time-boxed.
   */
  @ParameterizedTest(name = "capacity {0}")
  @ValueSource(ints = {1, 4})
  void timersRacingShutdownAllEndDoneAndNoneRunsAfterTermination(int capacity) throws Exception {
    final int schedulers = 4;
    final int perScheduler = 16;
    WorkerPool pool = fixture.pool("timer-shutdown-stress", b -> b.capacity(capacity)
        .maxWaiting(64));
    PoolFixture.StatsSampler sampler = new PoolFixture.StatsSampler(pool);
    long deadline = System.nanoTime() + EngineStressTest.BUDGET_NANOS / 3;
    List<String> wrong = new ArrayList<>();
    List<AtomicBoolean> generations = new ArrayList<>();
    List<TimerProbe> periodic = new ArrayList<>();
    int rounds = 0;
    long[] ends = new long[4]; // ran, cancelled one-shot, cancelled periodic, refused
    while (System.nanoTime() < deadline && wrong.isEmpty()) {
      rounds++;
      int round = rounds;
      AtomicBoolean terminated = new AtomicBoolean();
      generations.add(terminated);
      int n = schedulers * perScheduler;
      TimerProbe[] tasks = new TimerProbe[n];
      ScheduledFuture<?>[] futures = new ScheduledFuture<?>[n];
      int[] kinds = new int[n];
      CountDownLatch go = new CountDownLatch(1);
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < schedulers; t++) {
        int base = t * perScheduler;
        SerialExecutor lane = pool.newSerialExecutor();
        threads.add(new Thread(() -> {
          ThreadLocalRandom r = ThreadLocalRandom.current();
          PoolFixture.await(go);
          for (int k = 0; k < perScheduler; k++) {
            int id = base + k;
            TimerProbe task = new TimerProbe(terminated);
            tasks[id] = task;
            int kind = r.nextInt(TIMER_KINDS.length);
            kinds[id] = kind;
            long delay = r.nextInt(1_500);
            long period = 50 + r.nextInt(300);
            EngineStressTest.spin(r.nextInt(100));
            try {
              futures[id] = switch (kind) {
                case 0 -> pool.schedule(task, delay, TimeUnit.MICROSECONDS);
                case 1 -> pool.scheduleAtFixedRate(task, delay, period, TimeUnit.MICROSECONDS);
                case 2 -> pool.scheduleWithFixedDelay(task, delay, period, TimeUnit.MICROSECONDS);
                case 3 -> lane.schedule(task, delay, TimeUnit.MICROSECONDS);
                default -> lane.scheduleAtFixedRate(task, delay, period, TimeUnit.MICROSECONDS);
              };
            } catch (RejectedExecutionException refused) {
              futures[id] = null;
            }
          }
        }, "scheduler"));
      }
      for (Thread t : threads) {
        t.setDaemon(true);
        t.start();
      }
      go.countDown();
      EngineStressTest.spin(ThreadLocalRandom.current().nextInt(20_000));
      pool.shutdown();
      if (!pool.awaitTermination(30, TimeUnit.SECONDS)) {
        throw new AssertionError("round " + round + ": no termination: " + pool.stats());
      }
      terminated.set(true);
      for (Thread t : threads) {
        t.join(TimeUnit.SECONDS.toMillis(30));
        if (t.isAlive()) {
          AssertionError stuck = new AssertionError("scheduler stuck in round " + round);
          stuck.setStackTrace(t.getStackTrace());
          throw stuck;
        }
      }
      for (int id = 0; id < n; id++) {
        TimerProbe task = tasks[id];
        ScheduledFuture<?> f = futures[id];
        String what = "round " + round + ": " + TIMER_KINDS[kinds[id]] + " " + id;
        if (f == null) {
          ends[3]++;
          if (task.runs.get() != 0) {
            wrong.add(what + " refused at its call but ran " + task.runs.get() + "x");
          }
          continue;
        }
        if (!f.isDone()) {
          // Diagnosis only: does it complete later, or stay pending?
          long settle = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
          while (!f.isDone() && System.nanoTime() < settle) {
            Thread.yield();
          }
          wrong.add(what + " pending on a terminated pool: " + f + ", ran " + task.runs.get()
              + "x, onCancel " + task.cancels.get() + "x, done within 1 s more: " + f.isDone()
              + " (" + pool.stats() + ")");
          continue;
        }
        if (task.lateRuns.get() != 0) {
          wrong.add(what + " started " + task.lateRuns.get()
              + " run(s) after awaitTermination returned true");
        }
        boolean oneShot = kinds[id] == 0 || kinds[id] == 3;
        if (!oneShot) {
          periodic.add(task);
          ends[2]++;
          if (!f.isCancelled()) {
            wrong.add(what + " periodic future done but not cancelled: " + f);
          }
        } else if (f.isCancelled()) {
          ends[1]++;
          if (task.runs.get() != 0) {
            wrong.add(what + " cancelled by the shutdown but ran " + task.runs.get() + "x");
          }
        } else {
          ends[0]++;
          try {
            f.get(0, TimeUnit.NANOSECONDS);
          } catch (Exception e) {
            wrong.add(what + " future failed: " + e);
          }
          if (task.runs.get() != 1) {
            wrong.add(what + " completed normally but ran " + task.runs.get() + "x");
          }
        }
      }
      // onCancel may come on a helper thread after the future reads cancelled: a bounded wait.
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      for (int id = 0; id < n; id++) {
        ScheduledFuture<?> f = futures[id];
        if (f == null || !f.isDone()) {
          continue;
        }
        int want = f.isCancelled() ? 1 : 0;
        while (tasks[id].cancels.get() < want && System.nanoTime() < until) {
          Thread.yield();
        }
        if (tasks[id].cancels.get() != want) {
          wrong.add("round " + round + ": " + TIMER_KINDS[kinds[id]] + " " + id + " cancelled="
              + f.isCancelled() + " heard onCancel " + tasks[id].cancels.get() + "x");
        }
      }
      PoolStats st = pool.stats();
      sampler.check(pool.name(), st);
      if (st.submitted() != st.completed() + st.failed() || st.failed() != 0 || st.busy() != 0
          || st.waiting() != 0 || st.workers() != 0
          || st.workersStarted() - st.workersExpired() - st.workersStopped() != st.workers()) {
        // Diagnosis only: does the snapshot settle later (a counter that moves after termination)?
        PoolStats later = st;
        long settle = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (System.nanoTime() < settle && later.workersStarted() - later.workersExpired()
            - later.workersStopped() != later.workers()) {
          Thread.yield();
          later = pool.stats();
        }
        wrong.add("round " + round + ": counters after awaitTermination returned true do not add"
            + " up: " + st + "; a bounded re-read (1 s) gave " + later);
      }
      pool.reboot();
    }
    // An observation window, not synchronisation: a periodic run of an ended generation would
    // show up here (earlier generations were also watched during every later round).
    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
    for (TimerProbe task : periodic) {
      if (task.lateRuns.get() != 0) {
        wrong.add("a periodic task started " + task.lateRuns.get()
            + " run(s) after its generation's awaitTermination returned true");
        break;
      }
    }
    assertThat(wrong).as("timers racing shutdown (%d rounds; ran %d, cancelled one-shot %d,"
        + " cancelled periodic %d, refused %d)", rounds, ends[0], ends[1], ends[2], ends[3])
        .isEmpty();
    assertThat(sampler.stop()).as("snapshots with a negative counter").isEmpty();
    assertThat(rounds).isPositive();
    assertThat(ends[0]).as("one-shot timers that ran").isPositive();
    assertThat(ends[1] + ends[2]).as("timers the shutdown cancelled").isPositive();
  }
}
