package dev.warmpool.reactor;

import static dev.warmpool.reactor.ContextDecorator.CONTEXT;
import static dev.warmpool.reactor.ContextDecorator.USER;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Guarantee 15 on every path of the Reactor adapter, as a table (review 4, faults 10, 11 and 14):
 * each row hands one task to the scheduler or to one of its workers from the test thread, which
 * holds the user's context, and lets it run once or, if periodic, three times. The pool's task
 * decorator must have been called exactly once, on the submitting thread, and every run must see
 * the user's context, never what an earlier run left behind. Core's doors have their own table.
 */
@Timeout(60)
class TaskDecoratorTableTest {
  private final ContextDecorator decorator = new ContextDecorator();
  private final List<WorkerPool> pools = new CopyOnWriteArrayList<>();

  @AfterEach
  void close() throws InterruptedException {
    for (WorkerPool p : pools) {
      p.shutdownNow();
      p.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  /** One path: whether the pool is full (nonblocking, one seat) at the call, and the call. */
  record Row(boolean full, int runs, int failing, Path path) { }

  /** Hands {@code task} to the scheduler {@code s} (or a worker of it). */
  interface Path {
    Disposable submit(Scheduler s, Runnable task);
  }

  static Stream<Named<Row>> paths() {
    return Stream.of(
        row("direct", false, 1, 0, (s, t) -> s.schedule(t)),
        row("Worker", false, 1, 0, (s, t) -> s.createWorker().schedule(t)),
        row("direct, delayed", false, 1, 0, (s, t) -> s.schedule(t, 1, TimeUnit.MILLISECONDS)),
        row("Worker, delayed", false, 1, 0,
            (s, t) -> s.createWorker().schedule(t, 1, TimeUnit.MILLISECONDS)),
        row("direct periodic, after successful runs", false, 3, 0,
            (s, t) -> s.schedulePeriodically(t, 0, 1, TimeUnit.MILLISECONDS)),
        row("direct periodic, after a failed run", false, 3, 1,
            (s, t) -> s.schedulePeriodically(t, 0, 1, TimeUnit.MILLISECONDS)),
        row("direct periodic with period 0, after a failed run", false, 3, 1,
            (s, t) -> s.schedulePeriodically(t, 0, 0, TimeUnit.MILLISECONDS)),
        row("Worker periodic, after successful runs", false, 3, 0,
            (s, t) -> s.createWorker().schedulePeriodically(t, 0, 1, TimeUnit.MILLISECONDS)),
        row("Worker periodic, after a failed run", false, 3, 1,
            (s, t) -> s.createWorker().schedulePeriodically(t, 0, 1, TimeUnit.MILLISECONDS)),
        row("direct, zero delay on a full nonblocking pool", true, 1, 0,
            (s, t) -> s.schedule(t, 0, TimeUnit.MILLISECONDS)),
        row("Worker, zero delay on a full nonblocking pool", true, 1, 0,
            (s, t) -> s.createWorker().schedule(t, 0, TimeUnit.MILLISECONDS)),
        row("direct, delay on a full nonblocking pool", true, 1, 0,
            (s, t) -> s.schedule(t, 5, TimeUnit.MILLISECONDS)),
        row("Worker, delay on a full nonblocking pool", true, 1, 0,
            (s, t) -> s.createWorker().schedule(t, 5, TimeUnit.MILLISECONDS)));
  }

  private static Named<Row> row(String name, boolean full, int runs, int failing, Path path) {
    return Named.of(name, new Row(full, runs, failing, path));
  }

  private WorkerPool pool(boolean full) {
    WorkerPool p = WorkerPool.builder().name("decorated").capacity(full ? 1 : 4).nonblocking(full)
        .maxIdle(Duration.ofHours(1)).taskDecorator(decorator)
        .failureHandler((t, e) -> { }) // the failing rows fail on purpose
        .build();
    pools.add(p);
    return p;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("paths")
  void guarantee15_everyAdapterPathDecoratesOnceOnTheSubmittingThread(Row row) throws Exception {
    WorkerPool pool = pool(row.full());
    Scheduler s = PoolSchedulers.from(pool);
    Occupied seat = row.full() ? Occupied.all(pool) : null;
    int before = decorator.calls.size(); // the seat's occupier was decorated too
    CountDownLatch runs = new CountDownLatch(row.runs());
    Disposable task;
    CONTEXT.set(USER);
    try {
      task = row.path().submit(s, decorator.body(runs, row.failing()));
    } finally {
      CONTEXT.remove();
    }
    if (seat != null) {
      seat.close();
    }
    assertThat(runs.await(30, TimeUnit.SECONDS)).as("runs: %s", decorator.seen).isTrue();
    task.dispose();
    assertThat(decorator.seen).as("the context every run saw").containsOnly(USER);
    assertThat(decorator.calls.subList(before, decorator.calls.size()))
        .as("the decorator's calls, by thread: once, on the submitting thread")
        .containsExactly(Thread.currentThread());
  }

  /**
   * Fault 11, as users meet it: {@code Mono.delay(Duration.ZERO, s)} on a full nonblocking pool
   * tried an immediate task, was refused, and fell back to a timer: two decorations, one leaked.
   */
  @Test
  void guarantee15_aZeroDelayOnAFullNonblockingPoolIsDecoratedOnce() throws Exception {
    WorkerPool pool = pool(true);
    Scheduler s = PoolSchedulers.from(pool);
    int before;
    Mono<Long> delay;
    try (Occupied seat = Occupied.all(pool)) {
      before = decorator.calls.size();
      CONTEXT.set(USER);
      try {
        delay = Mono.delay(Duration.ZERO, s).doOnNext(x -> decorator.seen.add(CONTEXT.get()))
            .cache();
        delay.subscribe();
      } finally {
        CONTEXT.remove();
      }
    }
    assertThat(delay.block(Duration.ofSeconds(30))).isZero();
    assertThat(decorator.seen).containsExactly(USER);
    assertThat(decorator.calls.subList(before, decorator.calls.size()))
        .containsExactly(Thread.currentThread());
  }
}
