package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitIdle;
import static dev.warmpool.PoolFixture.awaitNoThreadsOf;
import static dev.warmpool.PoolFixture.awaitWaiting;
import static dev.warmpool.PoolFixture.eventually;
import static dev.warmpool.PoolFixture.liveThreadsOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Guarantee 8: close stops intake, stops idle workers at once, lets busy ones finish, runs
 * (shutdown) or returns (shutdownNow) the tasks waiting in line, wakes blocked callers with
 * {@link PoolClosedException}, and {@code reboot()} reopens a terminated pool.
 */
@Timeout(60) // seconds per test: a hang fails the test instead of stalling the build
class ShutdownTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private final Queue<String> ran = new ConcurrentLinkedQueue<>();

  private Runnable records(String name) {
    return () -> ran.add(name);
  }

  private WorkerPool pool(int capacity) {
    return fixture.pool("close", b -> b.capacity(capacity).maxIdle(Duration.ofMinutes(5)));
  }

  private static List<Thread> busy(WorkerPool pool, List<PoolFixture.Gate> gates) {
    gates.forEach(g -> pool.execute(g.task()));
    List<Thread> threads = new ArrayList<>();
    gates.forEach(g -> threads.add(g.awaitArrival()));
    return threads;
  }

  @Test
  void shutdownRejectsEveryKindOfSubmissionWithPoolClosed() {
    WorkerPool pool = pool(2);
    pool.shutdown();

    assertThat(pool.isShutdown()).isTrue();
    List<Runnable> calls = List.of(
        () -> pool.execute(records("execute")),
        () -> pool.tryExecute(records("tryExecute")),
        () -> {
          try {
            pool.tryExecute(records("tryExecuteTimed"), Duration.ofSeconds(1));
          } catch (InterruptedException e) {
            throw new AssertionError(e);
          }
        },
        () -> pool.enqueue(records("enqueue")),
        () -> pool.submit(records("submit")),
        () -> pool.schedule(records("schedule"), 1, TimeUnit.MILLISECONDS));
    for (Runnable call : calls) {
      assertThatThrownBy(call::run).isInstanceOf(PoolClosedException.class)
          .hasMessageContaining(pool.name());
    }
    assertThat(pool.stats().rejected()).isEqualTo(calls.size());
    assertThat(pool.stats().submitted()).isZero();
    assertThat(ran).isEmpty();
  }

  @Test
  void poolThatNeverRanATaskTerminatesAtOnce() {
    WorkerPool pool = pool(2);
    pool.shutdown();
    assertThat(pool.isTerminated()).isTrue();
  }

  @Test
  void shutdownStopsIdleWorkersAtOnce() throws Exception {
    WorkerPool pool = pool(3);
    List<PoolFixture.Gate> gates = fixture.gates(3);
    busy(pool, gates);
    gates.forEach(PoolFixture.Gate::open);
    awaitIdle(pool, 3);

    pool.shutdown();

    awaitNoThreadsOf(pool.name());
    assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    assertThat(pool.isTerminated()).isTrue();
    PoolStats stats = pool.stats();
    assertThat(stats.workers()).isZero();
    assertThat(stats.workersStopped()).isEqualTo(3);
  }

  @Test
  void shutdownLetsBusyWorkersFinishTheirTask() throws Exception {
    WorkerPool pool = pool(2);
    List<PoolFixture.Gate> gates = fixture.gates(2);
    busy(pool, gates);

    pool.shutdown();

    assertThat(pool.isShutdown()).isTrue();
    assertThat(pool.isTerminated()).isFalse();
    assertThat(pool.awaitTermination(50, TimeUnit.MILLISECONDS)).isFalse();
    gates.get(0).open();
    eventually().untilAsserted(() -> assertThat(pool.stats().workers()).isEqualTo(1));
    assertThat(pool.isTerminated()).isFalse();
    gates.get(1).open();
    assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    assertThat(gates).allMatch(PoolFixture.Gate::passed).noneMatch(PoolFixture.Gate::wasInterrupted);
    assertThat(pool.stats().completed()).isEqualTo(2);
  }

  @Test
  void shutdownLetsTasksAlreadyWaitingInLineRun() throws Exception {
    WorkerPool pool = pool(1);
    List<PoolFixture.Gate> gates = fixture.gates(1);
    busy(pool, gates);
    pool.enqueue(records("a"));
    pool.enqueue(records("b"));
    pool.enqueue(records("c"));

    pool.shutdown();
    assertThatThrownBy(() -> pool.enqueue(records("late"))).isInstanceOf(PoolClosedException.class);
    gates.get(0).open();

    assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    assertThat(ran).containsExactly("a", "b", "c");
    assertThat(pool.stats().completed()).isEqualTo(4);
  }

  @Test
  void shutdownWakesBlockedCallersWithPoolClosedAndTheirTasksNeverRun() throws Exception {
    WorkerPool pool = pool(1);
    List<PoolFixture.Gate> gates = fixture.gates(1);
    busy(pool, gates);
    List<PoolFixture.Caller<Void>> callers = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      String name = "blocked" + i;
      callers.add(fixture.call(name, () -> pool.execute(records(name))));
      awaitWaiting(pool, i + 1);
    }

    pool.shutdown();

    for (PoolFixture.Caller<Void> c : callers) {
      assertThat(c.outcome()).isInstanceOf(PoolClosedException.class);
    }
    gates.get(0).open();
    assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    assertThat(ran).isEmpty();
  }

  @Test
  void shutdownNowReturnsTheTasksWaitingInLineThatNeverRan() throws Exception {
    WorkerPool pool = pool(1);
    List<PoolFixture.Gate> gates = fixture.gates(1);
    busy(pool, gates);
    Runnable a = records("a");
    Runnable b = records("b");
    Runnable c = records("c");
    pool.enqueue(a);
    pool.enqueue(b);
    pool.enqueue(c);
    PoolFixture.Caller<Void> blocked = fixture.call("blocked", () -> pool.execute(records("blocked")));
    awaitWaiting(pool, 4);

    List<Runnable> returned = pool.shutdownNow();

    assertThat(returned).containsExactly(a, b, c);
    assertThat(blocked.outcome()).isInstanceOf(PoolClosedException.class);
    assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    assertThat(gates.get(0).wasInterrupted()).as("the running task was interrupted").isTrue();
    assertThat(ran).isEmpty();
    assertThat(pool.stats().waiting()).isZero();
  }

  @Test
  void shutdownNowOnAnIdlePoolReturnsNothingAndTerminates() throws Exception {
    WorkerPool pool = pool(2);
    List<PoolFixture.Gate> gates = fixture.gates(2);
    busy(pool, gates);
    gates.forEach(PoolFixture.Gate::open);
    awaitIdle(pool, 2);

    assertThat(pool.shutdownNow()).isEmpty();
    assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    assertThat(liveThreadsOf(pool.name())).isEmpty();
  }

  @Test
  void closeReturnsOnlyWhenNoPoolThreadIsAlive() {
    WorkerPool pool = pool(4);
    List<PoolFixture.Gate> gates = fixture.gates(4);
    busy(pool, gates);
    gates.get(0).open();
    gates.get(1).open();
    awaitIdle(pool, 2);
    // The busy ones finish once close has begun.
    fixture.call("opener", () -> {
      eventually().until(pool::isShutdown);
      gates.forEach(PoolFixture.Gate::open);
    });

    pool.close();

    assertThat(liveThreadsOf(pool.name())).isEmpty();
    assertThat(pool.isTerminated()).isTrue();
    assertThat(gates).allMatch(PoolFixture.Gate::passed);
  }

  @Test
  void awaitTerminationReturnsTrueOnlyAfterEveryWorkerThreadExited() throws Exception {
    WorkerPool pool = pool(3);
    List<PoolFixture.Gate> gates = fixture.gates(3);
    busy(pool, gates);
    pool.shutdown();

    assertThat(pool.awaitTermination(100, TimeUnit.MILLISECONDS)).isFalse();
    gates.forEach(PoolFixture.Gate::open);
    assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue();

    assertThat(liveThreadsOf(pool.name())).isEmpty();
  }

  @Test
  void shutdownRacingWithWorkersGoingIdleAlwaysTerminates() throws Exception {
    // Workers finishing their tasks go back on the stack while shutdown empties it; one that pushes
    // itself just after shutdown's sweep must still stop, or the pool never terminates.
    for (int round = 0; round < 1_000; round++) {
      WorkerPool pool = fixture.pool("race", b -> b.capacity(4));
      for (int i = 0; i < 8; i++) {
        pool.execute(() -> { });
      }
      pool.shutdown();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).as("round %d terminated", round).isTrue();
      assertThat(pool.stats().completed()).isEqualTo(8);
    }
  }

  @Test
  void rebootReopensATerminatedPool() throws Exception {
    WorkerPool pool = pool(2);
    List<PoolFixture.Gate> before = fixture.gates(2);
    List<Thread> oldWorkers = busy(pool, before);
    before.forEach(PoolFixture.Gate::open);
    pool.close();

    pool.reboot();

    assertThat(pool.isShutdown()).isFalse();
    assertThat(pool.isTerminated()).isFalse();
    List<PoolFixture.Gate> after = fixture.gates(2);
    List<Thread> newWorkers = busy(pool, after);
    assertThat(newWorkers).doesNotContainAnyElementsOf(oldWorkers);
    after.forEach(PoolFixture.Gate::open);
    awaitIdle(pool, 2);
    PoolStats stats = pool.stats();
    assertThat(stats.submitted()).as("counters are cumulative").isEqualTo(4);
    assertThat(stats.completed()).isEqualTo(4);
    assertThat(stats.workersStarted()).isEqualTo(4);

    pool.close(); // and it can be closed again
    assertThat(liveThreadsOf(pool.name())).isEmpty();
  }

  @Test
  void rebootThrowsWhenThePoolIsNotTerminated() {
    WorkerPool pool = pool(1);
    assertThatThrownBy(pool::reboot).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(pool.name());

    List<PoolFixture.Gate> gates = fixture.gates(1);
    busy(pool, gates);
    pool.shutdown(); // shut down but a worker is still busy: not terminated
    assertThatThrownBy(pool::reboot).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> pool.execute(() -> { })).isInstanceOf(PoolClosedException.class);
  }

  @Test
  void submitAndInvokeAllWork() throws Exception {
    WorkerPool pool = pool(3);

    Future<String> one = pool.submit(() -> "one");
    List<Callable<Integer>> many = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      int n = i;
      many.add(() -> n * n);
    }
    List<Future<Integer>> squares = pool.invokeAll(many);
    Future<?> failing = pool.submit((Callable<Object>) () -> {
      throw new IllegalStateException("in a future");
    });

    assertThat(one.get(5, TimeUnit.SECONDS)).isEqualTo("one");
    List<Integer> values = new ArrayList<>();
    for (Future<Integer> f : squares) {
      values.add(f.get());
    }
    assertThat(values).containsExactly(0, 1, 4, 9, 16, 25);
    assertThatThrownBy(() -> failing.get(5, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(IllegalStateException.class);
    Callable<String> any = () -> "any";
    assertThat(pool.invokeAny(List.of(any))).isEqualTo("any");
  }
}
