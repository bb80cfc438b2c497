package dev.warmpool;

import static dev.warmpool.ContextDecorator.CONTEXT;
import static dev.warmpool.ContextDecorator.USER;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Guarantee 15 at every door of core, as a table (review 4, fault 14): each row submits one task
 * (or two, for {@code invokeAll}) from the test thread, which holds the user's context, and lets it
 * run once or, if periodic, three times. The decorator must have been called exactly once per task,
 * on the submitting thread, and every run must see the user's context, never what an earlier run
 * left behind. A new door is a new row. The adapters' rows live in their modules.
 */
@Timeout(60)
class TaskDecoratorTableTest {
  private static final Duration HOUR = Duration.ofHours(1);

  @AutoClose final PoolFixture fixture = new PoolFixture();
  private final ContextDecorator decorator = new ContextDecorator();

  /** Where a row submits. */
  enum Target {
    /** A blocking pool of capacity 4. */
    POOL,
    /** A nonblocking pool of capacity 1 whose seat is taken until the row's call returned. */
    FULL_NONBLOCKING,
    /** Two shards of capacity 2. */
    SHARDED
  }

  /** What a row does: submits {@code task} through one door and returns what stops it, if any. */
  interface Door {
    Object submit(WorkerPool pool, Runnable task) throws Exception;
  }

  /**
   * One door: its target, how many runs to wait for, how many tasks it submits (each decorated
   * once) and the context its runs must see.
   */
  record Row(Target target, int runs, int tasks, String context, Door door) { }

  static Stream<Named<Row>> doors() {
    return Stream.of(
        row("execute", Target.POOL, 1, (p, t) -> {
          p.execute(t);
          return null;
        }),
        row("tryExecute", Target.POOL, 1, (p, t) -> p.tryExecute(t)),
        row("tryExecute(timeout)", Target.POOL, 1, (p, t) -> p.tryExecute(t, HOUR)),
        row("enqueue", Target.POOL, 1, (p, t) -> p.enqueue(t)),
        row("enqueue(maxWait)", Target.POOL, 1, (p, t) -> p.enqueue(t, HOUR)),
        row("submit(Runnable)", Target.POOL, 1, (p, t) -> p.submit(t)),
        row("submit(Callable)", Target.POOL, 1, (p, t) -> p.submit(Executors.callable(t))),
        named("invokeAll (two tasks)", new Row(Target.POOL, 2, 2, USER,
            (p, t) -> p.invokeAll(List.<Callable<Object>>of(Executors.callable(t),
                Executors.callable(t))))),
        row("invokeAny", Target.POOL, 1, (p, t) -> p.invokeAny(List.of(Executors.callable(t)))),
        row("schedule one-shot", Target.POOL, 1, (p, t) -> p.schedule(t, 1, TimeUnit.MILLISECONDS)),
        row("schedule(Callable)", Target.POOL, 1,
            (p, t) -> p.schedule(Executors.callable(t), 1, TimeUnit.MILLISECONDS)),
        row("scheduleAtFixedRate", Target.POOL, 3,
            (p, t) -> p.scheduleAtFixedRate(t, 0, 1, TimeUnit.MILLISECONDS)),
        row("scheduleWithFixedDelay", Target.POOL, 3,
            (p, t) -> p.scheduleWithFixedDelay(t, 0, 1, TimeUnit.MILLISECONDS)),
        row("schedule zero delay, full nonblocking pool", Target.FULL_NONBLOCKING, 1,
            (p, t) -> p.schedule(t, 0, TimeUnit.MILLISECONDS)),
        row("schedule with delay, full nonblocking pool", Target.FULL_NONBLOCKING, 1,
            (p, t) -> p.schedule(t, 5, TimeUnit.MILLISECONDS)),
        row("a task that re-submits itself from its run", Target.POOL, 3,
            (p, t) -> {
              p.execute(new Resubmitting(p, t, 3));
              return null;
            }),
        row("lane execute", Target.POOL, 1, (p, t) -> {
          p.newSerialExecutor().execute(t);
          return null;
        }),
        row("lane enqueue", Target.POOL, 1, (p, t) -> p.newSerialExecutor().enqueue(t)),
        row("lane executeAdmitted", Target.POOL, 1, (p, t) -> {
          p.newSerialExecutor().executeAdmitted(t);
          return null;
        }),
        row("lane schedule", Target.POOL, 1,
            (p, t) -> p.newSerialExecutor().schedule(t, 1, TimeUnit.MILLISECONDS)),
        row("lane schedule zero delay, full nonblocking pool", Target.FULL_NONBLOCKING, 1,
            (p, t) -> p.newSerialExecutor().schedule(t, 0, TimeUnit.MILLISECONDS)),
        row("lane scheduleAtFixedRate", Target.POOL, 3,
            (p, t) -> p.newSerialExecutor().scheduleAtFixedRate(t, 0, 1, TimeUnit.MILLISECONDS)),
        row("lane scheduleWithFixedDelay", Target.POOL, 3,
            (p, t) -> p.newSerialExecutor().scheduleWithFixedDelay(t, 0, 1, TimeUnit.MILLISECONDS)),
        row("subpool execute", Target.POOL, 1, (p, t) -> {
          p.newSubpool("sub", 2).execute(t);
          return null;
        }),
        row("subpool scheduleAtFixedRate", Target.POOL, 3,
            (p, t) -> p.newSubpool("sub", 2).scheduleAtFixedRate(t, 0, 1, TimeUnit.MILLISECONDS)),
        row("subpool lane execute", Target.POOL, 1, (p, t) -> {
          p.newSubpool("sub", 2).newSerialExecutor().execute(t);
          return null;
        }),
        row("sharded execute", Target.SHARDED, 1, (p, t) -> {
          p.execute(t);
          return null;
        }),
        row("sharded enqueue", Target.SHARDED, 1, (p, t) -> p.enqueue(t)),
        row("sharded submit", Target.SHARDED, 1, (p, t) -> p.submit(t)),
        row("sharded scheduleAtFixedRate", Target.SHARDED, 3,
            (p, t) -> p.scheduleAtFixedRate(t, 0, 1, TimeUnit.MILLISECONDS)),
        row("sharded lane execute", Target.SHARDED, 1, (p, t) -> {
          p.newSerialExecutor().execute(t);
          return null;
        }),
        // FuncPool arguments are not tasks (WorkerPool.Builder#taskDecorator): never decorated.
        named("FuncPool invoke (not decorated)", new Row(Target.POOL, 1, 0, "null", (p, t) -> {
          FuncPool.<String>of(p, arg -> t.run()).invoke("x");
          return null;
        })));
  }

  private static Named<Row> row(String name, Target target, int runs, Door door) {
    return named(name, new Row(target, runs, 1, USER, door));
  }

  private static Named<Row> named(String name, Row row) {
    return Named.of(name, row);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("doors")
  void guarantee15_everyDoorDecoratesOnceOnTheSubmittingThread(Row row) throws Exception {
    PoolFixture.Gate seat = null;
    WorkerPool pool;
    switch (row.target()) {
      case POOL -> pool = fixture.pool("decorated", b -> b.capacity(4).maxIdle(HOUR)
          .taskDecorator(decorator).failureHandler((t, e) -> { }));
      case FULL_NONBLOCKING -> {
        pool = fixture.pool("decorated-full", b -> b.capacity(1).nonblocking(true).maxIdle(HOUR)
            .taskDecorator(decorator));
        seat = fixture.occupy(pool);
      }
      default -> pool = fixture.track(ShardedPool.of(2, ShardedPool.Placement.ROUND_ROBIN,
          WorkerPool.builder().name(PoolFixture.uniqueName("decorated-sharded")).capacity(2)
              .maxIdle(HOUR).taskDecorator(decorator)));
    }
    int before = decorator.calls.size(); // the seat's occupier was decorated too
    CountDownLatch runs = new CountDownLatch(row.runs());
    Object stop;
    CONTEXT.set(USER);
    try {
      stop = row.door().submit(pool, decorator.body(runs, 0));
    } finally {
      CONTEXT.remove();
    }
    if (seat != null) {
      seat.open();
    }
    PoolFixture.await(runs);
    if (stop instanceof Future<?> f && row.runs() > 1) {
      f.cancel(false); // a periodic schedule ends here
    }
    assertThat(decorator.seen).as("the context every run saw").isNotEmpty()
        .containsOnly(row.context());
    assertThat(decorator.calls.subList(before, decorator.calls.size()))
        .as("the decorator's calls, by thread: once per task, on the submitting thread")
        .hasSize(row.tasks()).allMatch(t -> t == Thread.currentThread());
  }

  /** A task that submits itself again from its own run, {@code times} runs in all (a re-arm). */
  private static final class Resubmitting implements Runnable {
    private final WorkerPool pool;
    private final Runnable body;
    private final AtomicInteger left;

    Resubmitting(WorkerPool pool, Runnable body, int times) {
      this.pool = pool;
      this.body = body;
      this.left = new AtomicInteger(times);
    }

    @Override
    public void run() {
      body.run();
      if (left.decrementAndGet() > 0) {
        pool.execute(this);
      }
    }
  }
}
