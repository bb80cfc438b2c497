package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitIdle;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Guarantees 4 and 5 in nonblocking mode: a full pool rejects at the call, at once. */
@Timeout(60) // seconds per test: a hang fails the test instead of stalling the build
class NonblockingTest {
  private static final Duration AT_ONCE = Duration.ofSeconds(5); // a call that waited would hang

  @AutoClose final PoolFixture fixture = new PoolFixture();

  private final AtomicInteger ran = new AtomicInteger();
  private final Runnable counted = ran::incrementAndGet;

  /** A nonblocking pool of two workers, both held busy. */
  private WorkerPool fullPool(List<PoolFixture.Gate> gates) {
    WorkerPool pool = fixture.pool("nb", b -> b.capacity(2).nonblocking(true));
    gates.forEach(g -> pool.execute(g.task()));
    gates.forEach(PoolFixture.Gate::awaitArrival);
    return pool;
  }

  /** Frees the workers, waits until they are idle, and checks that the rejected tasks never ran. */
  private void releaseAndCheckNothingElseRan(WorkerPool pool, List<PoolFixture.Gate> gates) {
    gates.forEach(PoolFixture.Gate::open);
    awaitIdle(pool, gates.size());
    assertThat(ran.get()).as("rejected tasks that ran").isZero();
    assertThat(pool.stats().waiting()).isZero();
  }

  /**
   * Review 4 (issue 32): a seat is held by work queued for a worker too, so a full pool may run
   * fewer tasks than its capacity; the message says both ("busy 0" of a full pool read as a bug).
   * Two tasks wait in the run queue while the factory that would start their worker is held.
   */
  @Test
  void aRejectionCountsSeatsHeldByQueuedWorkApartFromRunningTasks() throws Exception {
    CountDownLatch inFactory = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    String name = PoolFixture.uniqueName("nbq");
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(2).nonblocking(true)
        .threadFactory(r -> {
          inFactory.countDown();
          PoolFixture.await(release);
          return TestFactories.quietDaemon(r, name + "-worker");
        }).build());
    AtomicInteger ran = new AtomicInteger();
    pool.enqueue(ran::incrementAndGet);
    pool.enqueue(ran::incrementAndGet);
    assertThat(inFactory.await(20, TimeUnit.SECONDS)).isTrue();
    try {
      assertThatThrownBy(() -> pool.execute(() -> { }))
          .isInstanceOf(PoolOverloadedException.class)
          .hasMessage("pool \"" + name + "\" is full: 2 of 2 seats taken (0 running, 2 queued"
              + " for a worker), line 0 of 0");
    } finally {
      release.countDown();
    }
    PoolFixture.waitUntil(Duration.ofSeconds(20), () -> ran.get() == 2);
    assertThat(ran).hasValue(2);
  }

  @Test
  void executeThrowsPoolOverloadedAtOnceWhenEveryWorkerIsBusy() {
    List<PoolFixture.Gate> gates = fixture.gates(2);
    WorkerPool pool = fullPool(gates);

    PoolOverloadedException e = assertTimeoutPreemptively(AT_ONCE,
        () -> catchOverloaded(() -> pool.execute(counted)));

    assertThat(e.getMessage()).as("in the words of stats()").isEqualTo("pool \"" + pool.name()
        + "\" is full: 2 of 2 seats taken (2 running, 0 queued for a worker), line 0 of 0");
    assertThat(pool.stats().rejected()).isEqualTo(1);
    assertThat(pool.stats().submitted()).isEqualTo(2);
    releaseAndCheckNothingElseRan(pool, gates);
  }

  @Test
  void tryExecuteReturnsFalseWhenEveryWorkerIsBusy() {
    List<PoolFixture.Gate> gates = fixture.gates(2);
    WorkerPool pool = fullPool(gates);

    assertThat(assertTimeoutPreemptively(AT_ONCE, () -> pool.tryExecute(counted))).isFalse();
    assertThat(pool.stats().rejected()).isEqualTo(1);
    releaseAndCheckNothingElseRan(pool, gates);
  }

  @Test
  void tryExecuteWithTimeoutDoesNotWaitInNonblockingMode() {
    List<PoolFixture.Gate> gates = fixture.gates(2);
    WorkerPool pool = fullPool(gates);

    assertThat(assertTimeoutPreemptively(AT_ONCE,
        () -> pool.tryExecute(counted, Duration.ofMinutes(1)))).isFalse();
    releaseAndCheckNothingElseRan(pool, gates);
  }

  @Test
  void enqueueIsRejectedLikeExecuteInNonblockingMode() {
    List<PoolFixture.Gate> gates = fixture.gates(2);
    WorkerPool pool = fullPool(gates);

    PoolOverloadedException e = assertTimeoutPreemptively(AT_ONCE,
        () -> catchOverloaded(() -> pool.enqueue(counted)));

    assertThat(e.getMessage()).contains(pool.name());
    releaseAndCheckNothingElseRan(pool, gates);
  }

  @Test
  void acceptsAgainAsSoonAsAWorkerIsIdle() {
    List<PoolFixture.Gate> gates = fixture.gates(2);
    WorkerPool pool = fullPool(gates);
    assertThat(pool.tryExecute(counted)).isFalse();

    gates.get(0).open();
    awaitIdle(pool, 1);

    PoolFixture.Gate next = fixture.gate();
    assertThat(pool.tryExecute(next.task())).isTrue();
    assertThat(next.awaitArrival()).isSameAs(gates.get(0).thread());
    assertThatThrownBy(() -> pool.execute(counted)).isInstanceOf(PoolOverloadedException.class);
  }

  @Test
  void belowCapacityANewWorkerIsStartedRatherThanRejecting() {
    WorkerPool pool = fixture.pool("nbgrow", b -> b.capacity(3).nonblocking(true));
    List<PoolFixture.Gate> gates = fixture.gates(3);
    for (PoolFixture.Gate g : gates) {
      assertThat(pool.tryExecute(g.task())).isTrue();
    }
    gates.forEach(PoolFixture.Gate::awaitArrival);
    assertThat(pool.stats().workers()).isEqualTo(3);
    assertThat(pool.tryExecute(counted)).isFalse();
  }

  private static PoolOverloadedException catchOverloaded(Runnable call) {
    try {
      call.run();
    } catch (PoolOverloadedException e) {
      return e;
    }
    throw new AssertionError("expected PoolOverloadedException");
  }
}
