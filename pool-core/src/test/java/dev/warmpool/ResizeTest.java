package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitDead;
import static dev.warmpool.PoolFixture.awaitIdle;
import static dev.warmpool.PoolFixture.awaitWaiting;
import static dev.warmpool.PoolFixture.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Guarantee 1, at runtime: {@code resize} takes effect without a restart; shrinking retires idle
 * surplus now and busy surplus after its task; growing lets waiters in.
 */
@Timeout(60) // seconds per test: a hang fails the test instead of stalling the build
class ResizeTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private WorkerPool pool(int capacity) {
    return fixture.pool("resize", b -> b.capacity(capacity).maxIdle(Duration.ofMinutes(5)));
  }

  private static List<Thread> busyWorkers(WorkerPool pool, List<PoolFixture.Gate> gates) {
    gates.forEach(g -> pool.execute(g.task()));
    List<Thread> threads = new ArrayList<>();
    gates.forEach(g -> threads.add(g.awaitArrival()));
    return threads;
  }

  @Test
  void shrinkingRetiresSurplusIdleWorkersAtOnce() {
    WorkerPool pool = pool(4);
    List<PoolFixture.Gate> gates = fixture.gates(4);
    List<Thread> workers = busyWorkers(pool, gates);
    for (int i = 0; i < 4; i++) {
      gates.get(i).open();
      awaitIdle(pool, i + 1);
    }

    pool.resize(1);

    assertThat(pool.capacity()).isEqualTo(1);
    PoolStats stats = pool.stats();
    assertThat(stats.workers()).as("workers right after resize").isEqualTo(1);
    assertThat(stats.idle()).isEqualTo(1);
    assertThat(stats.workersStopped()).isEqualTo(3);
    workers.subList(0, 3).forEach(PoolFixture::awaitDead);
    assertThat(workers.get(3).isAlive()).as("the most recently used worker stays").isTrue();
  }

  @Test
  void shrinkingRetiresBusySurplusAfterItsCurrentTask() {
    WorkerPool pool = pool(3);
    List<PoolFixture.Gate> gates = fixture.gates(3);
    List<Thread> workers = busyWorkers(pool, gates);

    pool.resize(1);

    assertThat(pool.stats().workers()).as("busy workers finish their task first").isEqualTo(3);
    assertThat(gates).noneMatch(PoolFixture.Gate::wasInterrupted);
    assertThat(pool.tryExecute(() -> { })).as("no room above the new capacity").isFalse();

    gates.get(0).open();
    awaitDead(workers.get(0));
    assertThat(pool.stats().workers()).isEqualTo(2);
    gates.get(1).open();
    awaitDead(workers.get(1));
    assertThat(pool.stats().workers()).isEqualTo(1);
    gates.get(2).open();
    awaitIdle(pool, 1);
    assertThat(workers.get(2).isAlive()).as("the worker within capacity is kept").isTrue();
    assertThat(gates).allMatch(PoolFixture.Gate::passed);
    assertThat(pool.stats().workersStopped()).isEqualTo(2);
  }

  @Test
  void shrinkingBelowTheBusyCountStillServesEveryWaiter() {
    WorkerPool pool = pool(2);
    List<PoolFixture.Gate> gates = fixture.gates(2);
    busyWorkers(pool, gates);
    AtomicInteger ran = new AtomicInteger();
    List<PoolFixture.Caller<Void>> callers = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      callers.add(fixture.call("waiter" + i, () -> pool.execute(ran::incrementAndGet)));
      awaitWaiting(pool, i + 1);
    }
    pool.enqueue(ran::incrementAndGet);

    pool.resize(1);
    gates.forEach(PoolFixture.Gate::open);

    callers.forEach(PoolFixture.Caller::result);
    eventually().untilAsserted(() -> assertThat(ran.get()).isEqualTo(4));
    awaitIdle(pool, 1);
    assertThat(pool.stats().workers()).isEqualTo(1);
  }

  @Test
  void growingLetsEveryWaiterInAtOnce() {
    WorkerPool pool = pool(1);
    List<PoolFixture.Gate> first = fixture.gates(1);
    busyWorkers(pool, first);
    List<PoolFixture.Gate> waiting = fixture.gates(3);
    List<PoolFixture.Caller<Void>> callers = new ArrayList<>();
    callers.add(fixture.call("w0", () -> pool.execute(waiting.get(0).task())));
    awaitWaiting(pool, 1);
    pool.enqueue(waiting.get(1).task());
    callers.add(fixture.call("w2", () -> pool.execute(waiting.get(2).task())));
    awaitWaiting(pool, 3);

    pool.resize(4);

    waiting.forEach(PoolFixture.Gate::awaitArrival); // all three run at once, next to the first task
    callers.forEach(PoolFixture.Caller::result);
    assertThat(pool.stats().workers()).isEqualTo(4);
    assertThat(pool.stats().waiting()).isZero();
    assertThat(first.get(0).passed()).isFalse();
  }

  @Test
  void growingRaisesTheBoundOnConcurrentWorkers() {
    WorkerPool pool = fixture.pool("grownb", b -> b.capacity(2).nonblocking(true));
    busyWorkers(pool, fixture.gates(2));
    assertThat(pool.tryExecute(() -> { })).isFalse();

    pool.resize(5);

    List<PoolFixture.Gate> more = fixture.gates(3);
    for (PoolFixture.Gate g : more) {
      assertThat(pool.tryExecute(g.task())).isTrue();
    }
    more.forEach(PoolFixture.Gate::awaitArrival);
    assertThat(pool.tryExecute(() -> { })).isFalse();
    assertThat(pool.stats().workers()).isEqualTo(5);
    assertThat(pool.stats().capacity()).isEqualTo(5);
  }

  @Test
  void shrinkThenGrowAgainWorksWithoutRestart() {
    WorkerPool pool = pool(8);
    List<PoolFixture.Gate> gates = fixture.gates(8);
    busyWorkers(pool, gates);
    gates.forEach(PoolFixture.Gate::open);
    awaitIdle(pool, 8);

    pool.resize(2);
    assertThat(pool.stats().workers()).isEqualTo(2);
    pool.resize(6);
    List<PoolFixture.Gate> again = fixture.gates(6);
    busyWorkers(pool, again);
    assertThat(pool.stats().workers()).isEqualTo(6);
    assertThat(pool.stats().workersStarted()).isEqualTo(8 + 4);
  }
}
