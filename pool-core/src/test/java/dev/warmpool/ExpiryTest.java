package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitDead;
import static dev.warmpool.PoolFixture.awaitIdle;
import static dev.warmpool.PoolFixture.awaitNoThreadsOf;
import static dev.warmpool.PoolFixture.eventually;
import static dev.warmpool.PoolFixture.liveThreadsOf;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Guarantee 3: idle workers older than {@code maxIdle} are retired, oldest first, within a small
 * slack; the cleaner stays quiet while there is nothing to retire.
 *
 * <p>The ordering tests drive idle ages with a manual ticker and run the cleaner's work by hand
 * ({@link BoundedPool#retireExpired()}); {@code maxIdle} is then long enough (an hour) that the real
 * cleaner never fires during the test. The other tests use real time with short {@code maxIdle}.
 */
@Timeout(120) // seconds per test: a hang fails the test instead of stalling the build
class ExpiryTest {
  private static final Duration HOUR = Duration.ofHours(1);

  @AutoClose final PoolFixture fixture = new PoolFixture();

  private final PoolFixture.ManualTicker ticker = new PoolFixture.ManualTicker();

  private BoundedPool tickerPool(int capacity) {
    return (BoundedPool) fixture.pool("expiry",
        b -> b.capacity(capacity).maxIdle(HOUR).ticker(ticker));
  }

  /** Starts {@code n} workers, then releases worker i at ticker time {@code releaseAt[i]}. */
  private List<Thread> idleWorkersReleasedAt(WorkerPool pool, Duration... releaseAt) {
    List<PoolFixture.Gate> gates = fixture.gates(releaseAt.length);
    List<Thread> threads = new ArrayList<>();
    for (PoolFixture.Gate g : gates) {
      pool.execute(g.task());
      threads.add(g.awaitArrival());
    }
    for (int i = 0; i < releaseAt.length; i++) {
      ticker.set(releaseAt[i]);
      gates.get(i).open();
      awaitIdle(pool, i + 1);
    }
    return threads;
  }

  @Test
  void retiresIdleWorkersOldestFirst() {
    BoundedPool pool = tickerPool(3);
    List<Thread> w = idleWorkersReleasedAt(pool,
        Duration.ofSeconds(0), Duration.ofSeconds(10), Duration.ofSeconds(20));

    ticker.set(HOUR.plusSeconds(5));
    pool.retireExpired();
    awaitDead(w.get(0));
    assertThat(w.get(1).isAlive()).isTrue();
    assertThat(w.get(2).isAlive()).isTrue();
    assertThat(pool.stats().idle()).isEqualTo(2);
    assertThat(pool.stats().workersExpired()).isEqualTo(1);

    ticker.set(HOUR.plusSeconds(15));
    pool.retireExpired();
    awaitDead(w.get(1));
    assertThat(w.get(2).isAlive()).isTrue();

    ticker.set(HOUR.plusSeconds(25));
    pool.retireExpired();
    awaitDead(w.get(2));
    eventually().untilAsserted(() -> assertThat(pool.stats().workers()).isZero());
    assertThat(pool.stats().workersExpired()).isEqualTo(3);
  }

  @Test
  void retiresTheWholeStalePrefixInOneRunAndKeepsTheFreshTop() {
    BoundedPool pool = tickerPool(5);
    List<Thread> w = idleWorkersReleasedAt(pool, Duration.ofSeconds(1), Duration.ofSeconds(2),
        Duration.ofSeconds(3), Duration.ofSeconds(4), Duration.ofSeconds(5));

    // The workers released at 1 s, 2 s and 3 s are now maxIdle old or older.
    ticker.set(HOUR.plusSeconds(3));
    pool.retireExpired();

    w.subList(0, 3).forEach(PoolFixture::awaitDead);
    assertThat(w.get(3).isAlive()).isTrue();
    assertThat(w.get(4).isAlive()).isTrue();
    assertThat(pool.stats().idle()).isEqualTo(2);
    assertThat(pool.stats().workersExpired()).isEqualTo(3);
  }

  @Test
  void idleStackKeepsItsOrderAcrossAGrowingResize() {
    BoundedPool pool = tickerPool(2);
    List<Thread> before = idleWorkersReleasedAt(pool, Duration.ofSeconds(0), Duration.ofSeconds(10));

    pool.resize(6); // the idle stack's ring grows under the two idle workers
    List<PoolFixture.Gate> gates = fixture.gates(6);
    List<Thread> all = new ArrayList<>();
    for (PoolFixture.Gate g : gates) {
      pool.execute(g.task());
      all.add(g.awaitArrival());
    }
    assertThat(all.subList(0, 2)).as("the two idle workers are reused top first")
        .containsExactly(before.get(1), before.get(0));
    for (int i = 0; i < 6; i++) {
      ticker.set(Duration.ofSeconds(20 + 10 * i));
      gates.get(i).open();
      awaitIdle(pool, i + 1);
    }

    ticker.set(HOUR.plusSeconds(45)); // the first three released (at 20, 30 and 40 s) are stale
    pool.retireExpired();

    all.subList(0, 3).forEach(PoolFixture::awaitDead);
    assertThat(all.subList(3, 6)).allMatch(Thread::isAlive);
    assertThat(pool.stats().idle()).isEqualTo(3);
    assertThat(nextTaskThread(pool)).isSameAs(all.get(5));
  }

  private Thread nextTaskThread(WorkerPool pool) {
    return fixture.occupy(pool).thread();
  }

  @Test
  void workerIsNotRetiredBeforeMaxIdle() {
    BoundedPool pool = tickerPool(1);
    Thread w = idleWorkersReleasedAt(pool, Duration.ofSeconds(7)).get(0);

    ticker.setNanos(Duration.ofSeconds(7).plus(HOUR).toNanos() - 1);
    pool.retireExpired();
    assertThat(pool.stats().idle()).isEqualTo(1);
    assertThat(pool.stats().workersExpired()).isZero();
    assertThat(w.isAlive()).isTrue();

    ticker.set(Duration.ofSeconds(7).plus(HOUR));
    pool.retireExpired();
    assertThat(pool.stats().workersExpired()).isEqualTo(1);
    awaitDead(w);
  }

  @Test
  void reusedWorkerStartsANewIdlePeriod() {
    BoundedPool pool = tickerPool(1);
    Thread w = idleWorkersReleasedAt(pool, Duration.ZERO).get(0);

    ticker.set(HOUR.minusSeconds(1));
    PoolFixture.Gate g = fixture.gate();
    g.open();
    pool.execute(g.task());
    assertThat(g.awaitArrival()).isSameAs(w);
    awaitIdle(pool, 1);

    ticker.set(HOUR.plusSeconds(1));
    pool.retireExpired();
    assertThat(pool.stats().workersExpired()).isZero();
    assertThat(w.isAlive()).isTrue();
  }

  @Test
  void expiredWorkerIsReplacedOnDemand() {
    BoundedPool pool = tickerPool(1);
    Thread first = idleWorkersReleasedAt(pool, Duration.ZERO).get(0);
    ticker.set(HOUR);
    pool.retireExpired();
    awaitDead(first);

    PoolFixture.Gate g = fixture.gate();
    g.open();
    pool.execute(g.task());
    assertThat(g.awaitArrival()).isNotSameAs(first);
    assertThat(pool.stats().workersStarted()).isEqualTo(2);
  }

  // ---------------------------------------------------------------------------------------------
  // Real time

  @Test
  void burstOfFiveHundredWorkersShrinksToZeroAfterMaxIdle() {
    int burst = 500;
    WorkerPool pool = fixture.pool("burst500",
        b -> b.capacity(burst).maxIdle(Duration.ofMillis(300)));
    PoolFixture.Gate gate = fixture.gate();
    CountDownLatch running = new CountDownLatch(burst);
    for (int i = 0; i < burst; i++) {
      pool.execute(() -> {
        running.countDown();
        gate.pass();
      });
    }
    PoolFixture.await(running);
    assertThat(liveThreadsOf(pool.name())).hasSize(burst);
    gate.open();

    eventually().untilAsserted(() -> assertThat(pool.stats().workers()).isZero());
    awaitNoThreadsOf(pool.name());
    PoolStats stats = pool.stats();
    assertThat(stats.workersStarted()).isEqualTo(burst);
    assertThat(stats.workersExpired()).isEqualTo(burst);
    assertThat(stats.completed()).isEqualTo(burst);
  }

  @Test
  void idleLifeIsAtLeastMaxIdleAndWellUnderTwiceMaxIdle() throws Exception {
    Duration maxIdle = Duration.ofSeconds(1);
    AtomicLong workerExit = new AtomicLong();
    ThreadFactory timesExit = r -> {
      Thread t = new Thread(() -> {
        try {
          r.run();
        } finally {
          workerExit.set(System.nanoTime()); // on the worker itself: no joiner's wake-up latency
        }
      });
      t.setDaemon(true);
      return t;
    };
    WorkerPool pool = fixture.pool("life",
        b -> b.capacity(1).maxIdle(maxIdle).threadFactory(timesExit));
    AtomicLong taskEnd = new AtomicLong();
    PoolFixture.Gate gate = fixture.gate();
    gate.open();
    pool.execute(() -> {
      gate.pass();
      taskEnd.set(System.nanoTime()); // the worker goes idle just after this
    });
    Thread worker = gate.awaitArrival();

    worker.join(TimeUnit.SECONDS.toMillis(30));
    assertThat(worker.isAlive()).isFalse();
    // A little above the real idle life, which starts just after taskEnd.
    Duration idleLife = Duration.ofNanos(workerExit.get() - taskEnd.get());

    // The pool promises maxIdle + maxIdle/16 plus timer latency; a cleaner that only runs every
    // maxIdle (ants, fasthttp) would keep this worker, idle since just after the pool started,
    // for about 2 x maxIdle.
    assertThat(idleLife).isGreaterThanOrEqualTo(maxIdle)
        .isLessThan(maxIdle.multipliedBy(7).dividedBy(4));
    assertThat(pool.stats().workersExpired()).isEqualTo(1);
  }

  @Test
  void steadyTrickleKeepsOnlyTheFewWorkersItNeeds() throws Exception {
    int burst = 64;
    Duration maxIdle = Duration.ofMillis(300);
    WorkerPool pool = fixture.pool("trickle", b -> b.capacity(burst).maxIdle(maxIdle));
    PoolFixture.Gate gate = fixture.gate();
    CountDownLatch running = new CountDownLatch(burst);
    for (int i = 0; i < burst; i++) {
      pool.execute(() -> {
        running.countDown();
        gate.pass();
      });
    }
    PoolFixture.await(running);
    gate.open();

    // One tiny task about every millisecond: with FIFO reuse every one of the 64 workers would be
    // used every ~64 ms, far below maxIdle, and none would ever expire.
    AtomicLong trickled = new AtomicLong();
    PoolFixture.Caller<Void> trickle = fixture.call("trickle", () -> {
      while (!Thread.currentThread().isInterrupted()) {
        pool.execute(trickled::incrementAndGet);
        LockSupport.parkNanos(1_000_000);
      }
    });
    try {
      eventually().untilAsserted(() -> assertThat(pool.stats().workers()).isBetween(1, 3));
      assertThat(pool.stats().workersExpired()).isGreaterThanOrEqualTo(burst - 3);
      long before = trickled.get();
      eventually().untilAsserted(() -> assertThat(trickled.get()).isGreaterThan(before + 10));
    } finally {
      trickle.thread().interrupt();
    }
    assertThat(trickle.outcome()).isNull();
  }

  @Test
  void idleWorkerParksInsteadOfSpinning() {
    WorkerPool pool = fixture.pool("park", b -> b.capacity(1).maxIdle(Duration.ofMinutes(5)));
    PoolFixture.Gate g = fixture.gate();
    g.open();
    pool.execute(g.task());
    Thread worker = g.awaitArrival();
    awaitIdle(pool, 1);

    eventually().untilAsserted(() -> assertThat(worker.getState()).isEqualTo(Thread.State.WAITING));
  }

  @Test
  void cleanerDoesNotWakeWhileThePoolHasNoWorkers() throws Exception {
    BoundedPool pool = (BoundedPool) fixture.pool("quiet",
        b -> b.capacity(4).maxIdle(Duration.ofMillis(50)));
    List<PoolFixture.Gate> gates = fixture.gates(4);
    gates.forEach(g -> pool.execute(g.task()));
    gates.forEach(PoolFixture.Gate::awaitArrival);
    gates.forEach(PoolFixture.Gate::open);

    eventually().untilAsserted(() -> assertThat(pool.stats().workers()).isZero());
    awaitNoThreadsOf(pool.name());
    long runs = pool.engine.cleaner.runs.sum();
    assertThat(runs).as("cleaner runs that retired the workers").isPositive();

    Thread.sleep(500); // ten times maxIdle: a cleaner still scheduled would have run by now
    assertThat(pool.engine.cleaner.runs.sum()).isEqualTo(runs);
  }

  @Test
  void cleanerWakesRarelyWhileAWorkerStaysHot() throws Exception {
    Duration maxIdle = Duration.ofMillis(100);
    // The pool's clock stands still, so no worker ever looks idle for maxIdle, however late this
    // thread wakes on a loaded machine: the cleaner has nothing to retire and must stay quiet. (On
    // the real clock a 100 ms scheduling stall expired a worker and started a third.)
    BoundedPool pool = (BoundedPool) fixture.pool("rare",
        b -> b.capacity(2).maxIdle(maxIdle).ticker(ticker));
    long start = System.nanoTime();
    long runsBefore = pool.engine.cleaner.runs.sum();
    for (int i = 0; i < 200; i++) { // about a second of one task per 5 ms
      pool.execute(() -> { });
      LockSupport.parkNanos(5_000_000);
    }
    long runs = pool.engine.cleaner.runs.sum() - runsBefore;
    long elapsedMaxIdles = (System.nanoTime() - start) / maxIdle.toNanos() + 1;

    // The design allows at most 16 runs per maxIdle while workers wind down; a hot pool with
    // nothing to retire needs about one. A busy-looping cleaner would run thousands of times.
    assertThat(runs).isLessThanOrEqualTo(16 * elapsedMaxIdles);
    assertThat(pool.stats().workersStarted()).isLessThanOrEqualTo(2);
  }
}
