package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code Builder.taskDecorator} (DESIGN.md section 3): applied once per task, on the submitting
 * thread, at every door; the context it captures there is seen where the task runs;
 * {@code shutdownNow()} hands tasks back undecorated; a throwing decorator rejects the task.
 */
@Timeout(60)
class TaskDecoratorTest {
  private static final Duration HOUR = Duration.ofHours(1);
  private static final ThreadLocal<String> CONTEXT = new ThreadLocal<>();

  @AutoClose final PoolFixture fixture = new PoolFixture();
  /** How often the decorator ran, and on which threads. */
  private final AtomicInteger decorated = new AtomicInteger();
  private final List<Thread> decoratorThreads = new java.util.concurrent.CopyOnWriteArrayList<>();
  /** What each run saw: the context captured at submission, keyed by a task id. */
  private final ConcurrentHashMap<String, String> seen = new ConcurrentHashMap<>();

  /** A decorator that carries {@link #CONTEXT} from the submitting thread to the run (as MDC). */
  private final UnaryOperator<Runnable> carryContext = task -> {
    decorated.incrementAndGet();
    decoratorThreads.add(Thread.currentThread());
    String captured = CONTEXT.get();
    return () -> {
      String before = CONTEXT.get();
      CONTEXT.set(captured);
      try {
        task.run();
      } finally {
        CONTEXT.set(before);
      }
    };
  };

  private WorkerPool pool(int capacity) {
    return fixture.track(WorkerPool.builder().name(PoolFixture.uniqueName("decorator"))
        .capacity(capacity).maxIdle(HOUR).taskDecorator(carryContext).build());
  }

  private Runnable record(String id, CountDownLatch done) {
    return () -> {
      seen.put(id, String.valueOf(CONTEXT.get()));
      done.countDown();
    };
  }

  @Test
  void everyDoorDecoratesOnceOnTheSubmittingThreadAndTheRunSeesTheContext() throws Exception {
    WorkerPool pool = pool(4);
    WorkerPool sub = pool.newSubpool("sub", 2);
    SerialExecutor lane = pool.newSerialExecutor();
    SerialExecutor subLane = sub.newSerialExecutor();
    CountDownLatch done = new CountDownLatch(12);
    CONTEXT.set("request-42");
    try {
      pool.execute(record("execute", done));
      assertThat(pool.tryExecute(record("tryExecute", done))).isTrue();
      assertThat(pool.tryExecute(record("tryExecuteTimed", done), Duration.ofSeconds(5))).isTrue();
      pool.enqueue(record("enqueue", done));
      Future<?> f = pool.submit(record("submit", done));
      pool.schedule(record("schedule", done), 1, TimeUnit.MILLISECONDS);
      pool.schedule(() -> {
        record("scheduleCallable", done).run();
        return 1;
      }, 1, TimeUnit.MILLISECONDS);
      lane.execute(record("lane", done));
      lane.schedule(record("laneSchedule", done), 1, TimeUnit.MILLISECONDS);
      sub.execute(record("subpool", done));
      subLane.execute(record("subpoolLane", done));
      sub.enqueue(record("subpoolEnqueue", done));
      PoolFixture.await(done);
      f.get(10, TimeUnit.SECONDS);
    } finally {
      CONTEXT.remove();
    }
    assertThat(seen).hasSize(12);
    assertThat(seen.values()).as("every run saw the submitter's context").containsOnly("request-42");
    assertThat(decorated).as("once per task").hasValue(12);
    assertThat(decoratorThreads).as("on the submitting thread").containsOnly(Thread.currentThread());
  }

  @Test
  void aPeriodicTaskIsDecoratedOnceForAllRuns() throws Exception {
    WorkerPool pool = pool(2);
    CountDownLatch runs = new CountDownLatch(5);
    CONTEXT.set("periodic");
    ScheduledFuture<?> f;
    try {
      f = pool.scheduleAtFixedRate(() -> {
        if ("periodic".equals(CONTEXT.get())) {
          runs.countDown();
        }
      }, 0, 1, TimeUnit.MILLISECONDS);
    } finally {
      CONTEXT.remove();
    }
    PoolFixture.await(runs);
    f.cancel(false);
    assertThat(decorated).hasValue(1);
  }

  @Test
  void shutdownNowHandsBackTheTasksAsSubmitted() {
    WorkerPool pool = pool(1);
    fixture.occupy(pool);
    SerialExecutor lane = pool.newSerialExecutor();
    Runnable waiting = () -> { };
    Runnable laneTask = () -> { };
    pool.enqueue(waiting);
    lane.execute(laneTask);
    List<Runnable> back = new ArrayList<>(pool.shutdownNow());
    assertThat(back).containsExactlyInAnyOrder(waiting, laneTask);
  }

  @Test
  void aThrowingDecoratorRejectsTheTaskAtItsCallAndCountsNothing() {
    WorkerPool pool = fixture.track(WorkerPool.builder().name(PoolFixture.uniqueName("decorator-x"))
        .capacity(1).taskDecorator(task -> {
          throw new IllegalStateException("no context");
        }).build());
    assertThatThrownBy(() -> pool.execute(() -> { }))
        .isInstanceOf(RejectedExecutionException.class)
        .hasMessageContaining("task decorator").hasCauseInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> pool.enqueue(() -> { })).isInstanceOf(RejectedExecutionException.class);
    assertThatThrownBy(() -> pool.schedule(() -> { }, 1, TimeUnit.SECONDS))
        .isInstanceOf(RejectedExecutionException.class);
    SerialExecutor lane = pool.newSerialExecutor();
    assertThatThrownBy(() -> lane.execute(() -> { })).isInstanceOf(RejectedExecutionException.class);
    PoolStats s = pool.stats();
    assertThat(s.submitted()).isZero();
    assertThat(s.rejected()).isZero();
    assertThat(((AbstractWorkerPool) pool).delayedCount()).isZero();
  }

  @Test
  void aDecoratorReturningNullRejectsTheTask() {
    WorkerPool pool = fixture.track(WorkerPool.builder().name(PoolFixture.uniqueName("decorator-n"))
        .capacity(1).taskDecorator(task -> null).build());
    assertThatThrownBy(() -> pool.execute(() -> { }))
        .isInstanceOf(RejectedExecutionException.class).hasMessageContaining("returned null");
    assertThat(pool.stats().submitted()).isZero();
  }

  @Test
  void aNullDecoratorIsBadInput() {
    assertThatThrownBy(() -> WorkerPool.builder().taskDecorator(null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("taskDecorator");
  }
}
