package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitWaiting;
import static dev.warmpool.PoolFixture.eventually;
import static dev.warmpool.PoolFixture.liveThreadsOf;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Guarantee 1: at most {@code capacity} workers exist, also under many concurrent submitters. */
@Timeout(120) // seconds per test: a hang fails the test instead of stalling the build
class CapacityTest {
  private static final int SUBMITTERS = 16;

  @AutoClose final PoolFixture fixture = new PoolFixture();

  /** Counts tasks running at once and remembers the peak. */
  static final class ConcurrencyProbe {
    final AtomicInteger running = new AtomicInteger();
    final AtomicInteger peak = new AtomicInteger();
    final Set<Thread> threads = ConcurrentHashMap.newKeySet();

    Runnable task(CountDownLatch done) {
      return () -> {
        int now = running.incrementAndGet();
        peak.accumulateAndGet(now, Math::max);
        threads.add(Thread.currentThread());
        LockSupport.parkNanos(20_000); // long enough for the others to overlap
        running.decrementAndGet();
        done.countDown();
      };
    }
  }

  /**
   * Samples the pool's live threads on its own thread while the load runs, and once more at the end
   * (the workers outlive the load), and remembers the peak.
   */
  static final class ThreadCensus implements AutoCloseable {
    final AtomicInteger peak = new AtomicInteger();
    final AtomicLong samples = new AtomicLong();
    private final String poolName;
    private volatile boolean stop;
    private final Thread sampler;

    ThreadCensus(String poolName) {
      this.poolName = poolName;
      sampler = new Thread(() -> {
        while (!stop) {
          sample();
          Thread.yield();
        }
      }, "census-" + poolName);
      sampler.setDaemon(true);
      sampler.start();
    }

    private void sample() {
      peak.accumulateAndGet(liveThreadsOf(poolName).size(), Math::max);
      samples.incrementAndGet();
    }

    /** Stops sampling after a last sample; call before reading the peak. */
    @Override
    public void close() throws InterruptedException {
      stop = true;
      sampler.join();
      sample();
    }
  }

  @Test
  void neverRunsMoreThanCapacityWorkersUnderSixteenBlockingSubmitters() throws Exception {
    int capacity = 4;
    int perSubmitter = 1_000;
    WorkerPool pool = fixture.pool("cap", b -> b.capacity(capacity).maxIdle(Duration.ofMinutes(5)));
    ConcurrencyProbe probe = new ConcurrencyProbe();
    CountDownLatch done = new CountDownLatch(SUBMITTERS * perSubmitter);
    CyclicBarrier start = new CyclicBarrier(SUBMITTERS);

    try (ThreadCensus census = new ThreadCensus(pool.name())) {
      List<PoolFixture.Caller<Void>> submitters = new ArrayList<>();
      for (int s = 0; s < SUBMITTERS; s++) {
        boolean useEnqueue = s % 2 == 0;
        submitters.add(fixture.call("submitter" + s, () -> {
          start.await();
          for (int i = 0; i < perSubmitter; i++) {
            if (useEnqueue) {
              pool.enqueue(probe.task(done));
            } else {
              pool.execute(probe.task(done));
            }
          }
        }));
      }
      submitters.forEach(PoolFixture.Caller::result);
      PoolFixture.await(done);
      census.close();
      assertThat(census.peak.get()).as("peak live pool threads").isBetween(1, capacity);
    }

    assertThat(probe.peak.get()).as("peak tasks running at once").isBetween(2, capacity);
    assertThat(probe.threads).as("distinct worker threads that ran tasks")
        .hasSizeLessThanOrEqualTo(capacity);
    PoolStats stats = pool.stats();
    // No worker expires, shrinks or dies here, so every thread ever started is still counted.
    assertThat(stats.workersStarted()).as("workers ever started").isLessThanOrEqualTo(capacity);
    assertThat(stats.workers()).isLessThanOrEqualTo(capacity);
    assertThat(stats.submitted()).isEqualTo((long) SUBMITTERS * perSubmitter);
  }

  @Test
  void neverRunsMoreThanCapacityWorkersUnderSixteenNonblockingSubmitters() throws Exception {
    int capacity = 4;
    int perSubmitter = 1_000;
    WorkerPool pool = fixture.pool("capnb",
        b -> b.capacity(capacity).nonblocking(true).maxIdle(Duration.ofMinutes(5)));
    ConcurrencyProbe probe = new ConcurrencyProbe();
    CountDownLatch done = new CountDownLatch(SUBMITTERS * perSubmitter);
    AtomicLong refused = new AtomicLong();
    CyclicBarrier start = new CyclicBarrier(SUBMITTERS);

    try (ThreadCensus census = new ThreadCensus(pool.name())) {
      List<PoolFixture.Caller<Void>> submitters = new ArrayList<>();
      for (int s = 0; s < SUBMITTERS; s++) {
        boolean useTry = s % 2 == 0;
        submitters.add(fixture.call("submitter" + s, () -> {
          start.await();
          for (int i = 0; i < perSubmitter; i++) {
            Runnable task = probe.task(done);
            if (useTry) {
              if (!pool.tryExecute(task)) {
                refused.incrementAndGet();
                done.countDown();
              }
            } else {
              try {
                pool.execute(task);
              } catch (PoolOverloadedException overloaded) {
                refused.incrementAndGet();
                done.countDown();
              }
            }
          }
        }));
      }
      submitters.forEach(PoolFixture.Caller::result);
      PoolFixture.await(done);
      census.close();
      assertThat(census.peak.get()).as("peak live pool threads").isBetween(1, capacity);
    }

    assertThat(probe.peak.get()).as("peak tasks running at once").isBetween(1, capacity);
    assertThat(probe.threads).hasSizeLessThanOrEqualTo(capacity);
    PoolStats stats = pool.stats();
    assertThat(stats.workersStarted()).isLessThanOrEqualTo(capacity);
    assertThat(stats.rejected()).isEqualTo(refused.get());
    assertThat(stats.submitted()).isEqualTo(SUBMITTERS * perSubmitter - refused.get());
  }

  @Test
  void simultaneousBurstInNonblockingModeAcceptsExactlyCapacityTasks() throws Exception {
    int capacity = 4;
    WorkerPool pool = fixture.pool("burst", b -> b.capacity(capacity).nonblocking(true));
    PoolFixture.Gate gate = fixture.gate();
    CyclicBarrier start = new CyclicBarrier(SUBMITTERS);
    List<PoolFixture.Caller<Boolean>> submitters = new ArrayList<>();
    for (int s = 0; s < SUBMITTERS; s++) {
      submitters.add(fixture.call("burst" + s, () -> {
        start.await();
        return pool.tryExecute(gate.task());
      }));
    }
    long accepted = submitters.stream().filter(PoolFixture.Caller::result).count();

    assertThat(accepted).isEqualTo(capacity);
    assertThat(liveThreadsOf(pool.name())).hasSize(capacity);
    assertThat(pool.stats().workersStarted()).isEqualTo(capacity);
    assertThat(pool.stats().rejected()).isEqualTo(SUBMITTERS - capacity);
    gate.open();
  }

  @Test
  void simultaneousBurstInBlockingModeStartsCapacityWorkersAndQueuesTheRest() throws Exception {
    int capacity = 4;
    WorkerPool pool = fixture.pool("burstb", b -> b.capacity(capacity));
    PoolFixture.Gate gate = fixture.gate();
    AtomicInteger ran = new AtomicInteger();
    CyclicBarrier start = new CyclicBarrier(SUBMITTERS);
    List<PoolFixture.Caller<Void>> submitters = new ArrayList<>();
    for (int s = 0; s < SUBMITTERS; s++) {
      submitters.add(fixture.call("burstb" + s, () -> {
        start.await();
        pool.execute(() -> {
          ran.incrementAndGet();
          gate.pass();
        });
      }));
    }
    awaitWaiting(pool, SUBMITTERS - capacity);
    eventually().untilAsserted(() -> assertThat(ran.get()).isEqualTo(capacity));
    assertThat(liveThreadsOf(pool.name())).hasSize(capacity);
    assertThat(pool.stats().workers()).isEqualTo(capacity);

    gate.open();
    submitters.forEach(PoolFixture.Caller::result);
    eventually().untilAsserted(() -> assertThat(ran.get()).isEqualTo(SUBMITTERS));
    assertThat(pool.stats().workersStarted()).isEqualTo(capacity);
  }
}
