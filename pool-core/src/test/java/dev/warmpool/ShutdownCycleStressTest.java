package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
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
  private static final int PER_SUBMITTER = 6_000;
  private static final String[] KINDS = {"execute", "tryExecute", "enqueue", "submit",
      "schedule", "lane", "lane.schedule"};

  /** What the submitter saw. */
  private static final int REJECTED = 0;
  private static final int ACCEPTED = 1;
  private static final int WITHDRAWN = 2;
  /** A future cancelled by the submitter: FutureTask reports success also while the body runs. */
  private static final int AT_MOST_ONCE = 3;
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
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    }
  }

  /** Blocking with a line, blocking without one, and nonblocking; each config three rounds. */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blocking-64-a", "blocking-64-b", "blocking-64-c", "blocking-0-a",
      "blocking-0-b", "blocking-0-c", "nonblocking-a", "nonblocking-b", "nonblocking-c"})
  void everyTaskRunsOnceOrIsHandedBackOrWasNeverAcceptedAcrossCloseAndReboot(String config)
      throws Exception {
    String name = PoolFixture.uniqueName("cycle-stress");
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(CAPACITY)
        .nonblocking(config.startsWith("nonblocking"))
        .maxWaiting(config.startsWith("blocking-64") ? 64 : 0)
        .threadFactory(new HostileFactory(name)).build());
    int total = SUBMITTERS * PER_SUBMITTER;
    AtomicIntegerArray runs = new AtomicIntegerArray(total);
    AtomicIntegerArray outcome = new AtomicIntegerArray(total);
    AtomicIntegerArray kinds = new AtomicIntegerArray(total);
    Future<?>[] timers = new Future<?>[total];
    // What shutdownNow may hand back for a task: the task itself, or its future.
    Map<Object, Integer> ids = Collections.synchronizedMap(new IdentityHashMap<>());
    List<Runnable> handedBack = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger running = new AtomicInteger();
    AtomicInteger maxRunning = new AtomicInteger();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger cycles = new AtomicInteger();

    Thread controller = new Thread(() -> {
      ThreadLocalRandom r = ThreadLocalRandom.current();
      try {
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
          if (!pool.awaitTermination(30, TimeUnit.SECONDS)) {
            throw new AssertionError("no termination: " + pool.stats());
          }
          pool.reboot();
          cycles.incrementAndGet();
        }
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }, "controller");
    AtomicInteger controllerFailed = new AtomicInteger();
    controller.setUncaughtExceptionHandler((t, e) -> {
      controllerFailed.incrementAndGet();
      e.printStackTrace();
    });
    controller.start();

    CountDownLatch done = new CountDownLatch(SUBMITTERS);
    for (int s = 0; s < SUBMITTERS; s++) {
      int base = s * PER_SUBMITTER;
      fixture.call("submitter-" + s, () -> {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        SerialExecutor lane = pool.newSerialExecutor();
        try {
          for (int i = 0; i < PER_SUBMITTER; i++) {
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
    assertThat(controllerFailed.get()).isZero();

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
    assertThat(cycles.get()).as("close cycles").isPositive();
    assertThat(maxRunning.get()).as("tasks running at once").isLessThanOrEqualTo(CAPACITY);

    int[] ranByKind = new int[KINDS.length];
    for (int id = 0; id < total; id++) {
      ranByKind[kinds.get(id)] += runs.get(id);
    }
    assertThat(ranByKind).as("tasks run per kind %s", List.of(KINDS)).doesNotContain(0);
    PoolStats st = pool.stats();
    // A cancelled future that a worker had already dequeued completes as a no-op run.
    assertThat(st.completed()).as("completed (%s)", st)
        .isBetween((long) accounted, (long) accounted + cancelledFutures);
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
    switch (kind) {
      case 0 -> pool.execute(task);
      case 1 -> {
        if (!pool.tryExecute(task)) {
          outcome.set(id, REJECTED);
        }
      }
      case 2 -> {
        TaskHandle h = pool.enqueue(task);
        if (r.nextInt(8) == 0 && h.cancel()) {
          outcome.set(id, WITHDRAWN);
        }
      }
      case 3 -> {
        Future<?> f = pool.submit(task);
        ids.put(f, id);
        if (r.nextInt(8) == 0 && f.cancel(false)) {
          outcome.set(id, AT_MOST_ONCE);
        }
      }
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
}
