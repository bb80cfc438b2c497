package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 30, fault 7; guarantees 8 and 13 as a table over every door: a task that throws counts once,
 * in {@code failed} (never in {@code completed}), and is reported exactly once. Where it is reported
 * depends on the door, as in the JDK: a task whose caller holds a future ({@code submit},
 * {@code invokeAll}, {@code invokeAny}, {@code schedule}) reports through that future; the default
 * failure handler (the thread's uncaught-exception handler) hears plain tasks and timers, not the
 * futures of {@code submit}, {@code invokeAll} and {@code invokeAny} (as {@code ThreadPoolExecutor}'s
 * {@code FutureTask} keeps it); a failure handler set on the builder hears every one.
 *
 * <p>Each pool has one seat, and a fence task follows the failing one: the fence runs only once the
 * failing task gave its seat back, which is after it was counted and reported, so "not reported"
 * is checked at a point where a report could no longer come.
 */
class FailureCountTableTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  /** What a door does with a throwing task; returns the future its caller holds, or null. */
  @FunctionalInterface
  interface Door {
    Future<?> submit(WorkerPool pool, Runnable throwing) throws Exception;
  }

  /** How the failure reaches the caller besides the handler. */
  enum ViaFuture {
    NONE, // no future: only a handler hears of it
    GET, // the returned future's get() throws ExecutionException with the failure as cause
    THROWN // the call itself threw ExecutionException (invokeAny)
  }

  static Stream<Arguments> doors() {
    return Stream.of(
        door("execute", true, ViaFuture.NONE, (p, t) -> {
          p.execute(t);
          return null;
        }),
        door("tryExecute", true, ViaFuture.NONE, (p, t) -> {
          assertThat(p.tryExecute(t)).isTrue();
          return null;
        }),
        door("enqueue", true, ViaFuture.NONE, (p, t) -> {
          p.enqueue(t);
          return null;
        }),
        door("submit(Runnable)", false, ViaFuture.GET, WorkerPool::submit),
        door("submit(Runnable, result)", false, ViaFuture.GET, (p, t) -> p.submit(t, "result")),
        door("submit(Callable)", false, ViaFuture.GET, (p, t) -> p.submit(callable(t))),
        door("invokeAll", false, ViaFuture.GET, (p, t) -> p.invokeAll(List.of(callable(t))).get(0)),
        door("invokeAll(timeout)", false, ViaFuture.GET,
            (p, t) -> p.invokeAll(List.of(callable(t)), 10, TimeUnit.SECONDS).get(0)),
        door("invokeAny", false, ViaFuture.THROWN, (p, t) -> {
          assertThatThrownBy(() -> p.invokeAny(List.of(callable(t))))
              .isInstanceOf(ExecutionException.class).hasCause(FAILURE.get());
          return null;
        }),
        door("invokeAny(timeout)", false, ViaFuture.THROWN, (p, t) -> {
          assertThatThrownBy(() -> p.invokeAny(List.of(callable(t)), 10, TimeUnit.SECONDS))
              .isInstanceOf(ExecutionException.class).hasCause(FAILURE.get());
          return null;
        }),
        door("schedule(Runnable)", true, ViaFuture.GET,
            (p, t) -> p.schedule(t, 1, TimeUnit.MILLISECONDS)),
        door("schedule(Callable)", true, ViaFuture.GET,
            (p, t) -> p.schedule(callable(t), 1, TimeUnit.MILLISECONDS)),
        door("scheduleAtFixedRate", true, ViaFuture.GET,
            (p, t) -> p.scheduleAtFixedRate(t, 1, 1, TimeUnit.MILLISECONDS)),
        door("scheduleWithFixedDelay", true, ViaFuture.GET,
            (p, t) -> p.scheduleWithFixedDelay(t, 1, 1, TimeUnit.MILLISECONDS)),
        door("serial lane", true, ViaFuture.NONE, (p, t) -> {
          p.newSerialExecutor().execute(t);
          return null;
        }),
        door("subpool execute", true, ViaFuture.NONE, (p, t) -> {
          p.newSubpool("sub", 1).execute(t);
          return null;
        }),
        door("subpool submit", false, ViaFuture.GET, (p, t) -> p.newSubpool("sub", 1).submit(t)),
        door("FuncPool", true, ViaFuture.NONE, (p, t) -> {
          FuncPool.<Runnable>of(p, Runnable::run).invoke(t);
          return null;
        }));
  }

  /** The failure of the current case, for the doors that assert on it themselves. */
  private static final ThreadLocal<RuntimeException> FAILURE = new ThreadLocal<>();

  private static Arguments door(String name, boolean defaultHandlerHears, ViaFuture via,
      Door door) {
    return Arguments.of(Named.of(name, door), defaultHandlerHears, via);
  }

  private static Callable<Object> callable(Runnable task) {
    return () -> {
      task.run();
      return "unreachable";
    };
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("doors")
  void guarantee8_aTaskThatThrowsCountsOnceAsFailedAndIsReportedOnceByDefault(Door door,
      boolean defaultHandlerHears, ViaFuture via) throws Exception {
    List<Throwable> uncaught = new CopyOnWriteArrayList<>();
    WorkerPool pool = fixture.pool("fail-table", b -> b.capacity(1).threadFactory(r -> {
      Thread t = new Thread(r);
      t.setDaemon(true);
      t.setUncaughtExceptionHandler((th, e) -> uncaught.add(e));
      return t;
    }));
    checkDoor(pool, door, via, uncaught, defaultHandlerHears ? 1 : 0);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("doors")
  void guarantee8_aFailureHandlerSetOnTheBuilderHearsEveryDoorOnce(Door door,
      boolean defaultHandlerHears, ViaFuture via) throws Exception {
    List<Throwable> handled = new CopyOnWriteArrayList<>();
    WorkerPool pool = fixture.pool("fail-table-handler",
        b -> b.capacity(1).failureHandler((th, e) -> handled.add(e)));
    checkDoor(pool, door, via, handled, 1);
  }

  private static void checkDoor(WorkerPool pool, Door door, ViaFuture via, List<Throwable> heard,
      int expectedReports) throws Exception {
    RuntimeException failure = new IllegalStateException("boom");
    FAILURE.set(failure);
    CountDownLatch ran = new CountDownLatch(1);
    Runnable throwing = () -> {
      ran.countDown();
      throw failure;
    };
    try {
      Future<?> future = door.submit(pool, throwing);
      PoolFixture.await(ran);
      if (via == ViaFuture.GET) {
        assertThatThrownBy(() -> future.get(10, TimeUnit.SECONDS))
            .isInstanceOf(ExecutionException.class).hasCause(failure);
      }
      // The fence: with one seat it runs only after the failing task was counted and reported.
      pool.submit(() -> { }).get(10, TimeUnit.SECONDS);
    } finally {
      FAILURE.remove();
    }
    // The fence's future completes before its worker counts it: wait for both counts to land.
    PoolFixture.waitUntil(Duration.ofSeconds(10),
        () -> pool.stats().completed() + pool.stats().failed() >= 2);
    PoolStats s = pool.stats();
    assertThat(s.failed()).as("counted once, as failed: %s", s).isEqualTo(1);
    assertThat(s.completed()).as("the fence only: %s", s).isEqualTo(1);
    assertThat(heard).as("reported to the handler").hasSize(expectedReports)
        .allMatch(e -> e == failure);
  }
}
