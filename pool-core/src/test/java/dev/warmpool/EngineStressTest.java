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
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    }
  }

  @ParameterizedTest(name = "capacity {0}")
  @ValueSource(ints = {64, 512})
  void everyAcceptedTaskRunsExactlyOnceUnderFaultsCancelsAndResizes(int capacity)
      throws Exception {
    String name = PoolFixture.uniqueName("engine-stress");
    FlakyFactory factory = new FlakyFactory(name);
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(capacity)
        .maxWaiting(1_000_000).threadFactory(factory).build());
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
    });
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
}
