package dev.warmpool.rxjava3;

import static dev.warmpool.rxjava3.ContextDecorator.CONTEXT;
import static dev.warmpool.rxjava3.ContextDecorator.USER;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.observers.TestObserver;
import io.reactivex.rxjava3.subjects.PublishSubject;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Guarantee 15 on every path of the RxJava adapter, as a table (review 4, faults 9, 11 and 14):
 * each row hands one task to the scheduler or to one of its workers from the test thread, which
 * holds the user's context, and lets it run once or, if periodic, three times. The pool's task
 * decorator must have been called exactly once, on the submitting thread, and every run must see
 * the user's context, never what an earlier run left behind. A periodic run that throws ends the
 * task, as in RxJava. Core's doors have their own table.
 */
@Timeout(60)
class TaskDecoratorTableTest {
  @RegisterExtension final RxFixture fx = new RxFixture();
  private final ContextDecorator decorator = new ContextDecorator();

  /** One path: whether the pool is full (nonblocking, one seat) at the call, and the call. */
  record Row(boolean full, int runs, int failing, Path path) { }

  /** Hands {@code task} to the scheduler {@code s} (or a worker of it). */
  interface Path {
    Disposable submit(Scheduler s, Runnable task);
  }

  static Stream<Named<Row>> paths() {
    return Stream.of(
        row("direct", false, 1, 0, (s, t) -> s.scheduleDirect(t)),
        row("Worker", false, 1, 0, (s, t) -> s.createWorker().schedule(t)),
        row("direct, delayed", false, 1, 0,
            (s, t) -> s.scheduleDirect(t, 1, TimeUnit.MILLISECONDS)),
        row("Worker, delayed", false, 1, 0,
            (s, t) -> s.createWorker().schedule(t, 1, TimeUnit.MILLISECONDS)),
        row("direct periodic, after successful runs", false, 3, 0,
            (s, t) -> s.schedulePeriodicallyDirect(t, 0, 1, TimeUnit.MILLISECONDS)),
        row("direct periodic, a failed run (ends it)", false, 1, 1,
            (s, t) -> s.schedulePeriodicallyDirect(t, 0, 1, TimeUnit.MILLISECONDS)),
        row("Worker periodic, after successful runs", false, 3, 0,
            (s, t) -> s.createWorker().schedulePeriodically(t, 0, 1, TimeUnit.MILLISECONDS)),
        row("Worker periodic with period 0, after successful runs", false, 3, 0,
            (s, t) -> s.createWorker().schedulePeriodically(t, 0, 0, TimeUnit.MILLISECONDS)),
        row("Worker periodic, a failed run (ends it)", false, 1, 1,
            (s, t) -> s.createWorker().schedulePeriodically(t, 0, 1, TimeUnit.MILLISECONDS)),
        row("direct, zero delay on a full nonblocking pool", true, 1, 0,
            (s, t) -> s.scheduleDirect(t, 0, TimeUnit.MILLISECONDS)),
        row("Worker, zero delay on a full nonblocking pool", true, 1, 0,
            (s, t) -> s.createWorker().schedule(t, 0, TimeUnit.MILLISECONDS)),
        row("direct, delay on a full nonblocking pool", true, 1, 0,
            (s, t) -> s.scheduleDirect(t, 5, TimeUnit.MILLISECONDS)),
        row("Worker, delay on a full nonblocking pool", true, 1, 0,
            (s, t) -> s.createWorker().schedule(t, 5, TimeUnit.MILLISECONDS)));
  }

  private static Named<Row> row(String name, boolean full, int runs, int failing, Path path) {
    return Named.of(name, new Row(full, runs, failing, path));
  }

  private WorkerPool pool(boolean full) {
    return fx.pool(b -> b.capacity(full ? 1 : 4).nonblocking(full).maxIdle(Duration.ofHours(1))
        .taskDecorator(decorator)
        .failureHandler((t, e) -> { })); // the failing rows fail on purpose
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("paths")
  void guarantee15_everyAdapterPathDecoratesOnceOnTheSubmittingThread(Row row) throws Exception {
    WorkerPool pool = pool(row.full());
    Scheduler s = PoolSchedulers.from(pool);
    CountDownLatch seat = row.full() ? fx.saturate(pool) : null;
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
      seat.countDown();
    }
    assertThat(runs.await(30, TimeUnit.SECONDS)).as("runs: %s", decorator.seen).isTrue();
    task.dispose();
    assertThat(decorator.seen).as("the context every run saw").containsOnly(USER);
    assertThat(decorator.calls.subList(before, decorator.calls.size()))
        .as("the decorator's calls, by thread: once, on the submitting thread")
        .containsExactly(Thread.currentThread());
    assertThat(fx.errors).as("nothing refused").isEmpty();
  }

  /**
   * Fault 9, as users meet it: {@code buffer(time, count)} arms a worker's periodic task, which was
   * decorated again before every run, on the pool thread, inside the previous run's scope.
   */
  @Test
  void guarantee15_aWorkersPeriodicTaskUnderBufferIsDecoratedOnce() {
    Scheduler s = PoolSchedulers.from(pool(false));
    PublishSubject<Integer> source = PublishSubject.create();
    TestObserver<List<Integer>> buffers;
    CONTEXT.set(USER);
    try {
      buffers = source.buffer(1, TimeUnit.MILLISECONDS, s, 1_000)
          .doOnNext(b -> {
            decorator.seen.add(String.valueOf(CONTEXT.get()));
            CONTEXT.set("left-by-a-buffer"); // as a careless subscriber leaves MDC behind
          })
          .test();
    } finally {
      CONTEXT.remove();
    }
    buffers.awaitCount(5);
    buffers.dispose();
    assertThat(decorator.seen).as("the context every emission saw").containsOnly(USER);
    assertThat(decorator.calls).as("decorated once, on the subscribing thread")
        .containsExactly(Thread.currentThread());
  }

  /** Fault 11, as users meet it: {@code Single.timer(0, ..)} on a full nonblocking pool. */
  @Test
  void guarantee15_aZeroDelayTimerOnAFullNonblockingPoolIsDecoratedOnce() {
    WorkerPool pool = pool(true);
    Scheduler s = PoolSchedulers.from(pool);
    CountDownLatch seat = fx.saturate(pool);
    int before = decorator.calls.size();
    TestObserver<Long> timer;
    CONTEXT.set(USER);
    try {
      timer = Single.timer(0, TimeUnit.MILLISECONDS, s)
          .doOnSuccess(x -> decorator.seen.add(CONTEXT.get())).test();
    } finally {
      CONTEXT.remove();
    }
    seat.countDown();
    timer.awaitDone(30, TimeUnit.SECONDS).assertValue(0L);
    assertThat(decorator.seen).containsExactly(USER);
    assertThat(decorator.calls.subList(before, decorator.calls.size()))
        .containsExactly(Thread.currentThread());
    assertThat(fx.errors).isEmpty();
  }
}
