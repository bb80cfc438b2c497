package dev.warmpool;

import static dev.warmpool.StressSubmissions.ACCEPTED;
import static dev.warmpool.StressSubmissions.AT_MOST_ONCE;
import static dev.warmpool.StressSubmissions.REJECTED;
import static dev.warmpool.StressSubmissions.WITHDRAWN;
import static dev.warmpool.StressSubmissions.submitByKind;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Subpools under fire (issue 14): submitters use every submission kind on two subpools and on the
 * parent at once, while a controller resizes all three and keeps closing a subpool
 * ({@code shutdown} or {@code shutdownNow}), awaiting it and rebooting it. At quiescence every task
 * ran once, or was handed back once, or was never accepted; no more than each bound ran at once; and
 * the counters of each subpool and of the parent add up exactly.
 */
@Timeout(120)
@Tag("stress")
class SubpoolStressTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private static final int PARENT = 8;
  private static final int[] SUB_CAPACITY = {3, 5};
  private static final int SUBMITTERS = 6;
  private static final int PER_SUBMITTER = 4_000;

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blocking-a", "blocking-b", "nonblocking-a", "nonblocking-b"})
  void everyTaskOfEverySubpoolIsAccountedForExactlyOnce(String config) throws Exception {
    boolean nonblocking = config.startsWith("nonblocking");
    WorkerPool parent = fixture.pool("sub-stress", b -> b.capacity(PARENT).nonblocking(nonblocking)
        .maxWaiting(64).maxIdle(Duration.ofMinutes(1)));
    WorkerPool[] targets = {parent.newSubpool("a", SUB_CAPACITY[0]),
        parent.newSubpool("b", SUB_CAPACITY[1]), parent};
    int total = SUBMITTERS * PER_SUBMITTER;
    PoolFixture.StatsSampler sampler = new PoolFixture.StatsSampler(targets);
    AtomicIntegerArray runs = new AtomicIntegerArray(total);
    AtomicIntegerArray outcome = new AtomicIntegerArray(total);
    AtomicIntegerArray target = new AtomicIntegerArray(total);
    Map<Object, Integer> ids = Collections.synchronizedMap(new IdentityHashMap<>());
    List<List<Runnable>> handedBack = List.of(Collections.synchronizedList(new ArrayList<>()),
        Collections.synchronizedList(new ArrayList<>()));
    AtomicInteger[] running = {new AtomicInteger(), new AtomicInteger(), new AtomicInteger()};
    AtomicInteger[] maxRunning = {new AtomicInteger(), new AtomicInteger(), new AtomicInteger()};
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger cycles = new AtomicInteger();

    PoolFixture.Background controller = PoolFixture.background("controller", () -> {
      ThreadLocalRandom r = ThreadLocalRandom.current();
      while (!stop.get()) {
        LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(300 + r.nextInt(2_000)));
        int which = r.nextInt(3);
        if (r.nextBoolean()) {
          int max = which == 2 ? PARENT : SUB_CAPACITY[which];
          targets[which].resize(1 + r.nextInt(max));
          continue;
        }
        if (which == 2) {
          continue; // the parent stays open: its subpools cannot reopen on a closed parent
        }
        WorkerPool sub = targets[which];
        if (r.nextBoolean()) {
          sub.shutdown();
        } else {
          handedBack.get(which).addAll(sub.shutdownNow());
        }
        if (!sub.awaitTermination(30, TimeUnit.SECONDS)) {
          throw new AssertionError("no termination: " + sub.stats());
        }
        sub.reboot();
        cycles.incrementAndGet();
      }
    });

    CountDownLatch done = new CountDownLatch(SUBMITTERS);
    for (int s = 0; s < SUBMITTERS; s++) {
      int base = s * PER_SUBMITTER;
      fixture.call("submitter-" + s, () -> {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        SerialExecutor[] lanes = new SerialExecutor[3];
        for (int t = 0; t < 3; t++) {
          lanes[t] = targets[t].newSerialExecutor(); // outlives the subpool's close cycles
        }
        try {
          for (int i = 0; i < PER_SUBMITTER; i++) {
            int id = base + i;
            int t = r.nextInt(3);
            target.set(id, t);
            boolean blocks = r.nextInt(20) == 0;
            Runnable task = () -> {
              runs.incrementAndGet(id);
              int own = running[t].incrementAndGet();
              maxRunning[t].accumulateAndGet(own, Math::max);
              if (t != 2) {
                maxRunning[2].accumulateAndGet(running[2].incrementAndGet(), Math::max);
              }
              if (blocks) {
                LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(20 + r.nextInt(100)));
              }
              if (t != 2) {
                running[2].decrementAndGet();
              }
              running[t].decrementAndGet();
            };
            ids.put(task, id);
            outcome.set(id, ACCEPTED); // before the call: the task may run before it returns
            try {
              submit(targets[t], lanes[t], r.nextInt(5), task, id, r, outcome, ids);
            } catch (RejectedExecutionException rejected) {
              outcome.set(id, REJECTED);
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
    assertThat(controller.failures()).isZero();
    parent.shutdown();
    assertThat(parent.awaitTermination(30, TimeUnit.SECONDS)).as("terminated: %s", parent.stats())
        .isTrue();
    assertThat(targets[0].isTerminated()).isTrue();
    assertThat(targets[1].isTerminated()).isTrue();

    int[] backCount = new int[total];
    List<String> wrong = new ArrayList<>();
    for (int sub = 0; sub < 2; sub++) {
      for (Runnable back : handedBack.get(sub)) {
        Integer id = ids.get(back);
        if (id == null || target.get(id) != sub) {
          wrong.add("subpool " + sub + " handed back a task not its own: " + back);
        } else {
          backCount[id]++;
        }
      }
    }
    long[] ranOnce = new long[3];
    long[] cancelled = new long[3];
    for (int id = 0; id < total; id++) {
      int fate = runs.get(id) + backCount[id];
      int seen = outcome.get(id);
      boolean ok = switch (seen) {
        case REJECTED, WITHDRAWN -> fate == 0;
        case ACCEPTED -> fate == 1;
        case AT_MOST_ONCE -> fate <= 1;
        default -> false;
      };
      ranOnce[target.get(id)] += runs.get(id) == 1 ? 1 : 0;
      cancelled[target.get(id)] += seen == AT_MOST_ONCE ? 1 : 0;
      if (!ok) {
        wrong.add("task " + id + " on " + targets[target.get(id)].name() + " outcome " + seen
            + " ran " + runs.get(id) + "x, handed back " + backCount[id] + "x");
      }
    }
    assertThat(wrong).as("tasks not accounted for exactly once (%d cycles)", cycles.get()).isEmpty();
    assertThat(sampler.stop()).as("snapshots with a negative counter (%d samples)",
        sampler.samples()).isEmpty();
    assertThat(cycles.get()).as("close cycles").isPositive();
    assertThat(maxRunning[0].get()).isLessThanOrEqualTo(SUB_CAPACITY[0]);
    assertThat(maxRunning[1].get()).isLessThanOrEqualTo(SUB_CAPACITY[1]);
    assertThat(maxRunning[2].get()).as("all tasks at once").isLessThanOrEqualTo(PARENT);

    long allBack = 0;
    for (int sub = 0; sub < 2; sub++) {
      PoolStats st = targets[sub].stats();
      // A cancelled future that a worker had already dequeued completes as a no-op run.
      assertThat(st.completed()).as("completed of %s (%s)", targets[sub].name(), st)
          .isBetween(ranOnce[sub], ranOnce[sub] + cancelled[sub]);
      assertThat(st.submitted()).as("submitted of %s (%s)", targets[sub].name(), st)
          .isEqualTo(st.completed() + handedBack.get(sub).size());
      assertThat(st.waiting()).isZero();
      assertThat(st.workersStarted()).isZero();
      allBack += handedBack.get(sub).size();
    }
    PoolStats p = parent.stats();
    assertThat(p.submitted()).as("parent submitted (%s)", p).isEqualTo(p.completed() + allBack);
    assertThat(p.completed()).as("parent completed (%s)", p)
        .isBetween(ranOnce[0] + ranOnce[1] + ranOnce[2],
            ranOnce[0] + ranOnce[1] + ranOnce[2] + cancelled[0] + cancelled[1] + cancelled[2]);
    assertThat(p.workersStarted() - p.workersExpired() - p.workersStopped()).isZero();
  }

  private static void submit(WorkerPool pool, SerialExecutor lane, int kind, Runnable task, int id, ThreadLocalRandom r,
      AtomicIntegerArray outcome, Map<Object, Integer> ids) {
    if (!submitByKind(pool, kind, task, id, r, 6, outcome, ids)) {
      lane.execute(task);
    }
  }
}
