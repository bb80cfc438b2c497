package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitWaiting;
import static dev.warmpool.PoolFixture.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Guarantee 4 in blocking mode: a full pool makes callers wait in a bounded FIFO line, lets
 * {@code enqueue}d tasks wait without a thread, and never loses a wake-up.
 */
@Timeout(120) // seconds per test: a hang fails the test instead of stalling the build
class WaitingLineTest {
  private static final Duration AT_ONCE = Duration.ofSeconds(5); // a call that waited would hang
  /** Long enough that a caller is certainly parked if it is going to park. */
  private static final Duration A_WHILE = Duration.ofMillis(200);

  @AutoClose final PoolFixture fixture = new PoolFixture();

  private final Queue<String> ran = new ConcurrentLinkedQueue<>();

  private Runnable records(String name) {
    return () -> ran.add(name);
  }

  /** A blocking pool with every worker held busy by one gate each. */
  private WorkerPool fullPool(List<PoolFixture.Gate> gates, int maxWaiting) {
    WorkerPool pool = fixture.pool("line",
        b -> b.capacity(gates.size()).maxWaiting(maxWaiting).maxIdle(Duration.ofMinutes(5)));
    gates.forEach(g -> pool.execute(g.task()));
    gates.forEach(PoolFixture.Gate::awaitArrival);
    return pool;
  }

  /** Starts a caller blocked in {@code execute} and waits until it is in line. */
  private PoolFixture.Caller<Void> blockedCaller(WorkerPool pool, String name) {
    int before = pool.stats().waiting();
    PoolFixture.Caller<Void> c = fixture.call(name, () -> pool.execute(records(name)));
    awaitWaiting(pool, before + 1);
    return c;
  }

  @Test
  void executeBlocksTheCallerUntilAWorkerIsReleased() {
    List<PoolFixture.Gate> gates = fixture.gates(1);
    WorkerPool pool = fullPool(gates, 10);

    PoolFixture.Caller<Void> caller = blockedCaller(pool, "a");
    eventually().untilAsserted(
        () -> assertThat(caller.thread().getState()).isEqualTo(Thread.State.WAITING));
    assertThat(caller.isDone()).isFalse();
    assertThat(ran).isEmpty();

    gates.get(0).open();

    assertThat(caller.result()).isNull();
    eventually().untilAsserted(() -> assertThat(ran).containsExactly("a"));
    assertThat(pool.stats().waiting()).isZero();
  }

  @Test
  void waitersAreServedInFifoOrder() {
    List<PoolFixture.Gate> gates = fixture.gates(1);
    WorkerPool pool = fullPool(gates, 10);
    List<PoolFixture.Caller<Void>> callers = new ArrayList<>();
    for (String name : List.of("1", "2", "3", "4", "5")) {
      callers.add(blockedCaller(pool, name));
    }

    gates.get(0).open();

    callers.forEach(PoolFixture.Caller::result);
    eventually().untilAsserted(() -> assertThat(ran).hasSize(5));
    assertThat(ran).containsExactly("1", "2", "3", "4", "5");
  }

  @Test
  void enqueuedTasksAndBlockedCallersShareOneFifoLine() {
    List<PoolFixture.Gate> gates = fixture.gates(1);
    WorkerPool pool = fullPool(gates, 10);
    pool.enqueue(records("e1"));
    PoolFixture.Caller<Void> c2 = blockedCaller(pool, "c2");
    pool.enqueue(records("e3"));
    PoolFixture.Caller<Void> c4 = blockedCaller(pool, "c4");
    pool.enqueue(records("e5"));
    assertThat(pool.stats().waiting()).isEqualTo(5);

    gates.get(0).open();

    c2.result();
    c4.result();
    eventually().untilAsserted(() -> assertThat(ran).hasSize(5));
    assertThat(ran).containsExactly("e1", "c2", "e3", "c4", "e5");
  }

  @Test
  void callBeyondMaxWaitingIsRejectedAtOnce() {
    List<PoolFixture.Gate> gates = fixture.gates(1);
    WorkerPool pool = fullPool(gates, 2);
    PoolFixture.Caller<Void> first = blockedCaller(pool, "first");
    pool.enqueue(records("second"));

    RejectedExecutionException executeRejected = assertTimeoutPreemptively(AT_ONCE,
        () -> catchRejected(() -> pool.execute(records("third"))));
    RejectedExecutionException enqueueRejected = assertTimeoutPreemptively(AT_ONCE,
        () -> catchRejected(() -> pool.enqueue(records("fourth"))));

    assertThat(executeRejected).isInstanceOf(PoolOverloadedException.class);
    assertThat(executeRejected.getMessage())
        .isEqualTo("pool \"" + pool.name() + "\" is full: 1 of 1 seats taken (1 running, 0 queued"
            + " for a worker), line 2 of 2 (the waiting line is full)");
    assertThat(enqueueRejected).isInstanceOf(PoolOverloadedException.class);
    assertThat(pool.stats().rejected()).isEqualTo(2);
    assertThat(pool.stats().waiting()).isEqualTo(2);

    gates.get(0).open();
    first.result();
    eventually().untilAsserted(() -> assertThat(ran).containsExactly("first", "second"));
  }

  @Test
  void maxWaitingZeroRejectsAsSoonAsEveryWorkerIsBusy() {
    List<PoolFixture.Gate> gates = fixture.gates(1);
    WorkerPool pool = fullPool(gates, 0);

    assertTimeoutPreemptively(AT_ONCE, () -> {
      assertThatThrownBy(() -> pool.execute(records("x"))).isInstanceOf(PoolOverloadedException.class);
      assertThatThrownBy(() -> pool.enqueue(records("y"))).isInstanceOf(PoolOverloadedException.class);
    });
    gates.get(0).open();
    PoolFixture.awaitIdle(pool, 1);
    assertThat(ran).isEmpty();
  }

  @Test
  void tryExecuteWithTimeoutGivesUpAndTheTaskNeverRuns() throws Exception {
    List<PoolFixture.Gate> gates = fixture.gates(1);
    WorkerPool pool = fullPool(gates, 10);

    assertThat(pool.tryExecute(records("late"), A_WHILE)).isFalse();
    assertThat(pool.stats().waiting()).isZero();
    assertThat(pool.stats().rejected()).isEqualTo(1);

    gates.get(0).open();
    PoolFixture.awaitIdle(pool, 1);
    // A task after it: had "late" stayed in line, it would have run first.
    PoolFixture.Gate probe = fixture.gate();
    probe.open();
    pool.execute(probe.task());
    probe.awaitArrival();
    PoolFixture.awaitIdle(pool, 1);
    assertThat(ran).isEmpty();
    assertThat(pool.stats().submitted()).isEqualTo(2);
  }

  @Test
  void tryExecuteWithTimeoutRunsTheTaskWhenAWorkerFreesUpInTime() {
    List<PoolFixture.Gate> gates = fixture.gates(1);
    WorkerPool pool = fullPool(gates, 10);
    PoolFixture.Caller<Boolean> caller =
        fixture.call("timed", () -> pool.tryExecute(records("timed"), Duration.ofSeconds(30)));
    awaitWaiting(pool, 1);

    gates.get(0).open();

    assertThat(caller.result()).isTrue();
    eventually().untilAsserted(() -> assertThat(ran).containsExactly("timed"));
  }

  @Test
  void tryExecuteWithoutTimeoutNeverWaitsInBlockingMode() {
    List<PoolFixture.Gate> gates = fixture.gates(1);
    WorkerPool pool = fullPool(gates, 10);

    assertThat(assertTimeoutPreemptively(AT_ONCE, () -> pool.tryExecute(records("x")))).isFalse();
    assertThat(pool.stats().waiting()).isZero();
  }

  @Test
  void enqueueNeverBlocksAndTheTaskRunsLater() {
    List<PoolFixture.Gate> gates = fixture.gates(1);
    WorkerPool pool = fullPool(gates, 10);

    assertTimeoutPreemptively(AT_ONCE, () -> {
      pool.enqueue(records("a"));
      pool.enqueue(records("b"));
    });
    assertThat(pool.stats().waiting()).isEqualTo(2);
    assertThat(pool.stats().submitted()).as("enqueued tasks count as accepted").isEqualTo(3);
    assertThat(ran).isEmpty();

    gates.get(0).open();

    eventually().untilAsserted(() -> assertThat(ran).containsExactly("a", "b"));
  }

  @Test
  void interruptedWaiterLeavesTheLineAndItsTaskNeverRuns() {
    List<PoolFixture.Gate> gates = fixture.gates(1);
    WorkerPool pool = fullPool(gates, 10);
    AtomicReference<Boolean> interruptKept = new AtomicReference<>();
    PoolFixture.Caller<Void> caller = fixture.call("interrupted", () -> {
      try {
        pool.execute(records("interrupted"));
      } finally {
        interruptKept.set(Thread.currentThread().isInterrupted());
      }
    });
    awaitWaiting(pool, 1);

    caller.thread().interrupt();

    assertThat(caller.outcome()).isInstanceOf(RejectedExecutionException.class)
        .hasCauseInstanceOf(InterruptedException.class);
    assertThat(interruptKept.get()).isTrue();
    assertThat(pool.stats().waiting()).isZero();
    gates.get(0).open();
    PoolFixture.awaitIdle(pool, 1);
    assertThat(ran).isEmpty();
    assertThat(pool.stats().submitted()).isEqualTo(1);
  }

  @Test
  void interruptedTimedWaiterGetsInterruptedExceptionAndItsTaskNeverRuns() {
    List<PoolFixture.Gate> gates = fixture.gates(1);
    WorkerPool pool = fullPool(gates, 10);
    PoolFixture.Caller<Boolean> caller = fixture.call("interrupted",
        () -> pool.tryExecute(records("interrupted"), Duration.ofMinutes(1)));
    awaitWaiting(pool, 1);

    caller.thread().interrupt();

    assertThat(caller.outcome()).isInstanceOf(InterruptedException.class);
    assertThat(pool.stats().waiting()).isZero();
    gates.get(0).open();
    PoolFixture.awaitIdle(pool, 1);
    assertThat(ran).isEmpty();
  }

  // ---------------------------------------------------------------------------------------------
  // No lost wake-ups: one test per event that frees a place

  @Test
  void waiterWakesWhenAWorkerIsReleased() {
    List<PoolFixture.Gate> gates = fixture.gates(2);
    WorkerPool pool = fullPool(gates, 10);
    PoolFixture.Caller<Void> caller = blockedCaller(pool, "w");

    gates.get(1).open();

    assertThat(caller.result()).isNull();
    eventually().untilAsserted(() -> assertThat(ran).containsExactly("w"));
    assertThat(gates.get(0).passed()).isFalse();
  }

  @Test
  void waiterWakesWhenAWorkerDies() {
    AtomicReference<Thread> diedWith = new AtomicReference<>();
    ThreadFactory quietDeaths = r -> {
      Thread t = new Thread(r);
      t.setDaemon(true);
      t.setUncaughtExceptionHandler((thread, e) -> diedWith.set(thread));
      return t;
    };
    WorkerPool pool = fixture.pool("dies", b -> b.capacity(1).threadFactory(quietDeaths)
        .failureHandler((t, e) -> {
          throw new IllegalStateException("failure handler gives up: " + e.getMessage());
        }));
    PoolFixture.Gate gate = fixture.gate();
    pool.execute(() -> {
      gate.pass();
      throw new IllegalArgumentException("task fails");
    });
    Thread dying = gate.awaitArrival();
    AtomicReference<Thread> ranOn = new AtomicReference<>();
    PoolFixture.Caller<Void> caller =
        fixture.call("waiter", () -> pool.execute(() -> ranOn.set(Thread.currentThread())));
    awaitWaiting(pool, 1);

    gate.open(); // the task throws, the failure handler throws, the worker exits

    assertThat(caller.result()).isNull();
    eventually().untilAsserted(() -> assertThat(ranOn.get()).isNotNull());
    assertThat(ranOn.get()).isNotSameAs(dying);
    assertThat(diedWith.get()).isSameAs(dying);
    assertThat(pool.stats().workersStopped()).isEqualTo(1);
  }

  @Test
  void waiterWakesWhenResizeGrowsThePool() {
    List<PoolFixture.Gate> gates = fixture.gates(1);
    WorkerPool pool = fullPool(gates, 10);
    PoolFixture.Gate second = fixture.gate();
    PoolFixture.Caller<Void> caller = fixture.call("grow", () -> pool.execute(second.task()));
    awaitWaiting(pool, 1);

    pool.resize(2);

    assertThat(second.awaitArrival()).isNotSameAs(gates.get(0).thread());
    assertThat(caller.result()).isNull();
    assertThat(gates.get(0).passed()).as("first task still busy").isFalse();
  }

  @Test
  void waiterWakesWithPoolClosedWhenThePoolShutsDown() {
    List<PoolFixture.Gate> gates = fixture.gates(1);
    WorkerPool pool = fullPool(gates, 10);
    PoolFixture.Caller<Void> caller = blockedCaller(pool, "closed");

    pool.shutdown();

    assertThat(caller.outcome()).isInstanceOf(PoolClosedException.class)
        .hasMessageContaining(pool.name());
    gates.get(0).open();
    eventually().untilAsserted(() -> assertThat(pool.isTerminated()).isTrue());
    assertThat(ran).isEmpty();
  }

  @Test
  void timedWaiterWakesWithPoolClosedWhenThePoolShutsDown() {
    List<PoolFixture.Gate> gates = fixture.gates(1);
    WorkerPool pool = fullPool(gates, 10);
    PoolFixture.Caller<Boolean> caller =
        fixture.call("timed", () -> pool.tryExecute(records("timed"), Duration.ofMinutes(1)));
    awaitWaiting(pool, 1);

    pool.shutdown();

    assertThat(caller.outcome()).isInstanceOf(PoolClosedException.class);
    gates.get(0).open();
    eventually().untilAsserted(() -> assertThat(pool.isTerminated()).isTrue());
    assertThat(ran).isEmpty();
  }

  @Test
  void manyWaitersAllRunWhenWorkersKeepComingFree() throws Exception {
    WorkerPool pool = fixture.pool("many", b -> b.capacity(2).maxWaiting(1_000));
    int callers = 8;
    int perCaller = 2_000;
    AtomicInteger count = new AtomicInteger();
    CountDownLatch done = new CountDownLatch(callers * perCaller);
    List<PoolFixture.Caller<Void>> all = new ArrayList<>();
    for (int c = 0; c < callers; c++) {
      all.add(fixture.call("many" + c, () -> {
        for (int i = 0; i < perCaller; i++) {
          pool.execute(() -> {
            count.incrementAndGet();
            done.countDown();
          });
        }
      }));
    }
    all.forEach(PoolFixture.Caller::result);
    PoolFixture.await(done);
    assertThat(count.get()).isEqualTo(callers * perCaller);
    assertThat(pool.stats().rejected()).isZero();
  }

  @Test
  void oneCallerPingPongingWithOneWorkerNeverLosesAWakeUp() {
    // With one worker and tiny tasks, the caller's next execute keeps arriving while the worker is
    // between finishing a task and going back on the stack: the caller joins the line just as the
    // worker goes idle. A wake-up lost there leaves this lone caller parked for good.
    WorkerPool pool = fixture.pool("pingpong", b -> b.capacity(1));
    int tasks = 200_000;
    AtomicInteger count = new AtomicInteger();
    PoolFixture.Caller<Void> caller = fixture.call("pingpong", () -> {
      for (int i = 0; i < tasks; i++) {
        pool.execute(count::incrementAndGet);
      }
    });

    caller.result(Duration.ofSeconds(60));
    eventually().untilAsserted(() -> assertThat(count.get()).isEqualTo(tasks));
    assertThat(pool.stats().workersStarted()).isEqualTo(1);
  }

  private static RejectedExecutionException catchRejected(Runnable call) {
    try {
      call.run();
    } catch (RejectedExecutionException e) {
      return e;
    }
    throw new AssertionError("expected a rejection");
  }
}
