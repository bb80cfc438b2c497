package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitWaiting;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Withdrawing accepted tasks (issue "Core: fix the confirmed faults", cancellable tasks): a
 * {@link TaskHandle} from {@code enqueue}, and the future of {@code submit}, which never blocks.
 * A withdrawn task never runs, leaves the line at once, frees its place under {@code maxWaiting},
 * and leaves {@code waiting} and {@code submitted}.
 */
@Timeout(60) // a submit that blocked would hang the test
class TaskHandleTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private final AtomicBoolean noThreads = new AtomicBoolean();

  /** A blocking pool of capacity 1 whose only worker is held by the returned gate. */
  private WorkerPool busyPool(int maxWaiting, PoolFixture.Gate gate) {
    String name = PoolFixture.uniqueName("handle");
    WorkerPool pool = fixture.track(WorkerPool.builder().name(name).capacity(1)
        .maxWaiting(maxWaiting).maxIdle(Duration.ofMinutes(5)).threadFactory(r -> {
          if (noThreads.get()) {
            throw new IllegalStateException("no threads now");
          }
          return TestFactories.daemon(r, name + "-worker");
        }).build());
    pool.execute(gate.task());
    gate.awaitArrival();
    return pool;
  }

  @Test
  void cancelWithdrawsAWaitingTaskAndFreesItsPlaceUnderMaxWaiting() throws Exception {
    PoolFixture.Gate gate = fixture.gate();
    WorkerPool pool = busyPool(1, gate);
    AtomicInteger ran = new AtomicInteger();
    TaskHandle first = pool.enqueue(ran::incrementAndGet);
    assertThat(pool.stats().waiting()).isEqualTo(1);
    assertThat(pool.stats().submitted()).isEqualTo(2);
    assertThatThrownBy(() -> pool.enqueue(() -> { }))
        .as("the line (maxWaiting 1) is full").isInstanceOf(PoolOverloadedException.class);

    assertThat(first.cancel()).isTrue();
    assertThat(first.isCancelled()).isTrue();
    assertThat(first.cancel()).as("a second cancel withdraws nothing").isFalse();
    PoolStats afterCancel = pool.stats();
    assertThat(afterCancel.waiting()).isZero();
    assertThat(afterCancel.submitted()).as("no longer counted as accepted").isEqualTo(1);

    CountDownLatch second = new CountDownLatch(1);
    TaskHandle next = pool.enqueue(second::countDown); // the freed place takes a new task
    gate.open();
    PoolFixture.await(second);
    assertThat(next.cancel()).as("a task that ran cannot be withdrawn").isFalse();
    assertThat(next.isCancelled()).isFalse();
    PoolFixture.eventually().until(() -> pool.stats().completed() == 2);
    assertThat(ran.get()).as("runs of the withdrawn task").isZero();
    PoolStats end = pool.stats();
    assertThat(end.submitted()).isEqualTo(end.completed());
  }

  @Test
  void cancelWithdrawsATaskThatHoldsASeatButNoWorkerYet() throws Exception {
    PoolFixture.Gate gate = fixture.gate();
    WorkerPool pool = busyPool(4, gate);
    AtomicInteger ran = new AtomicInteger();
    TaskHandle h = pool.enqueue(ran::incrementAndGet);
    awaitWaiting(pool, 1);
    noThreads.set(true); // growing gives the task a seat, but no worker can start for it
    pool.resize(2);
    assertThat(pool.stats().waiting()).as("out of the line, queued for a worker").isZero();

    assertThat(h.cancel()).isTrue();
    assertThat(h.isCancelled()).isTrue();
    noThreads.set(false);
    CountDownLatch after = new CountDownLatch(1);
    pool.execute(after::countDown); // a worker now starts and passes the withdrawn entry by
    gate.open();
    PoolFixture.await(after);
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    PoolStats end = pool.stats();
    assertThat(ran.get()).as("runs of the withdrawn task").isZero();
    assertThat(end.submitted()).as("submitted (%s)", end).isEqualTo(2);
    assertThat(end.completed()).isEqualTo(2);
  }

  @Test
  void cancelReturnsFalseForATaskThatStarted() throws Exception {
    PoolFixture.Gate gate = fixture.gate();
    WorkerPool pool = busyPool(4, gate);
    PoolFixture.Gate inside = fixture.gate();
    TaskHandle h = pool.enqueue(inside.task());
    gate.open();
    inside.awaitArrival();
    assertThat(h.cancel()).isFalse();
    assertThat(h.isCancelled()).isFalse();
    inside.open();
    PoolFixture.eventually().until(() -> pool.stats().completed() == 2);
  }

  @Test
  void submitNeverBlocksAndCancellingItsFutureWithdrawsTheTask() throws Exception {
    PoolFixture.Gate gate = fixture.gate();
    WorkerPool pool = busyPool(2, gate);
    AtomicInteger ran = new AtomicInteger();
    Future<Integer> f = pool.submit(ran::incrementAndGet); // returns at once: it waits in line
    Future<?> g = pool.submit(() -> { });
    assertThat(pool.stats().waiting()).isEqualTo(2);
    assertThatThrownBy(() -> pool.submit(() -> { }))
        .as("beyond maxWaiting").isInstanceOf(PoolOverloadedException.class);

    assertThat(f.cancel(false)).isTrue();
    assertThat(pool.stats().waiting()).as("withdrawn from the line at once").isEqualTo(1);
    assertThat(pool.stats().submitted()).isEqualTo(2);
    Future<?> h = pool.submit(() -> { }); // its place under maxWaiting is free again
    gate.open();
    g.get(10, TimeUnit.SECONDS);
    h.get(10, TimeUnit.SECONDS);
    assertThat(ran.get()).as("runs of the cancelled submit").isZero();
    PoolFixture.eventually().until(() -> pool.stats().completed() == 3);
    assertThat(pool.stats().submitted()).isEqualTo(3);
  }

  /** Issue 11: a lane with nothing left gives up its place in line. */
  @Test
  void aClosedLaneWithNothingLeftGivesUpItsPlaceInLine() throws Exception {
    PoolFixture.Gate gate = fixture.gate();
    WorkerPool pool = busyPool(1, gate);
    SerialExecutor lane = pool.newSerialExecutor();
    AtomicInteger laneRan = new AtomicInteger();
    lane.execute(laneRan::incrementAndGet); // the lane's first task: its carrier waits in line
    lane.execute(laneRan::incrementAndGet);
    assertThat(pool.stats().waiting()).isEqualTo(1);
    assertThatThrownBy(() -> pool.enqueue(() -> { }))
        .as("the lane holds the only place (maxWaiting 1)")
        .isInstanceOf(PoolOverloadedException.class);

    lane.close(); // cancels both tasks: nothing is left to carry
    PoolStats afterClose = pool.stats();
    assertThat(afterClose.waiting()).as("waiting after the lane closed").isZero();
    assertThat(afterClose.submitted()).as("the lane's tasks no longer count").isEqualTo(1);
    CountDownLatch other = new CountDownLatch(1);
    pool.enqueue(other::countDown); // the freed place takes other work
    gate.open();
    PoolFixture.await(other);
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(laneRan.get()).as("runs of the closed lane's tasks").isZero();
    PoolStats end = pool.stats();
    assertThat(end.submitted()).isEqualTo(2);
    assertThat(end.completed()).isEqualTo(2);
  }
}
