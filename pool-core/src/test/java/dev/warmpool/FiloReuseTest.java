package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitIdle;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Guarantee 2: the most recently released idle worker takes the next task. */
@Timeout(60) // seconds per test: a hang fails the test instead of stalling the build
class FiloReuseTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private WorkerPool pool(int capacity) {
    return fixture.pool("filo", b -> b.capacity(capacity).maxIdle(Duration.ofMinutes(5)));
  }

  /**
   * Starts one worker per gate, each held busy by its gate; returns the workers' threads in gate
   * order.
   */
  private static List<Thread> startBusyWorkers(WorkerPool pool, List<PoolFixture.Gate> gates) {
    List<Thread> threads = new ArrayList<>();
    for (PoolFixture.Gate g : gates) {
      pool.execute(g.task());
      threads.add(g.awaitArrival());
    }
    assertThat(threads).doesNotHaveDuplicates();
    return threads;
  }

  /** Opens the gates in the given order, each time waiting until that worker is back on the stack. */
  private static void releaseInOrder(WorkerPool pool, List<PoolFixture.Gate> gates, int... order) {
    int idle = pool.stats().idle();
    for (int i : order) {
      gates.get(i).open();
      awaitIdle(pool, ++idle);
    }
  }

  /** Runs a task held by a new gate and returns the worker thread that took it. */
  private Thread nextTaskThread(WorkerPool pool) {
    return fixture.occupy(pool).thread();
  }

  @Test
  void idleWorkerIsReusedLastInFirstOut() {
    WorkerPool pool = pool(3);
    List<PoolFixture.Gate> gates = fixture.gates(3);
    List<Thread> workers = startBusyWorkers(pool, gates);

    releaseInOrder(pool, gates, 0, 1, 2);

    // Each next task (held busy) takes the top of the stack: the last released first.
    assertThat(nextTaskThread(pool)).isSameAs(workers.get(2));
    assertThat(nextTaskThread(pool)).isSameAs(workers.get(1));
    assertThat(nextTaskThread(pool)).isSameAs(workers.get(0));
    assertThat(pool.stats().workersStarted()).isEqualTo(3);
  }

  @Test
  void reuseFollowsTheOrderOfReleaseNotTheOrderOfStart() {
    WorkerPool pool = pool(4);
    List<PoolFixture.Gate> gates = fixture.gates(4);
    List<Thread> workers = startBusyWorkers(pool, gates);

    releaseInOrder(pool, gates, 2, 0, 3, 1);

    assertThat(nextTaskThread(pool)).isSameAs(workers.get(1));
    assertThat(nextTaskThread(pool)).isSameAs(workers.get(3));
    assertThat(nextTaskThread(pool)).isSameAs(workers.get(0));
    assertThat(nextTaskThread(pool)).isSameAs(workers.get(2));
  }

  @Test
  void workerReleasedAgainGoesBackOnTop() {
    WorkerPool pool = pool(3);
    List<PoolFixture.Gate> gates = fixture.gates(3);
    List<Thread> workers = startBusyWorkers(pool, gates);
    releaseInOrder(pool, gates, 0, 1, 2);

    // Take the bottom two out of the stack, then release the bottom one (worker 0) again.
    PoolFixture.Gate top = fixture.gate();
    PoolFixture.Gate middle = fixture.gate();
    PoolFixture.Gate bottom = fixture.gate();
    pool.execute(top.task());
    pool.execute(middle.task());
    pool.execute(bottom.task());
    assertThat(bottom.awaitArrival()).isSameAs(workers.get(0));
    bottom.open();
    awaitIdle(pool, 1);
    middle.open();
    awaitIdle(pool, 2);

    assertThat(nextTaskThread(pool)).isSameAs(workers.get(1));
    assertThat(nextTaskThread(pool)).isSameAs(workers.get(0));
  }

  @Test
  void sequentialTasksAllRunOnTheOneWarmWorker() {
    WorkerPool pool = pool(8);
    List<Thread> ran = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      PoolFixture.Gate g = fixture.gate();
      g.open();
      pool.execute(g.task());
      ran.add(g.awaitArrival());
      awaitIdle(pool, 1);
    }
    assertThat(ran).containsOnly(ran.get(0));
    assertThat(pool.stats().workersStarted()).isEqualTo(1);
  }
}
