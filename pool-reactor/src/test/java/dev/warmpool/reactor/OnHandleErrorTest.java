package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Issue 12, fault 7: a task that throws reaches {@link Schedulers#onHandleError}, as on Reactor's own
 * schedulers, for immediate, delayed and periodic tasks, direct and on a worker; the pool's failure
 * handler still reports it once and counts it as failed.
 */
class OnHandleErrorTest {
  private final List<Throwable> hooked = new CopyOnWriteArrayList<>();
  private final List<Thread> hookThreads = new CopyOnWriteArrayList<>();
  private final List<Throwable> handled = new CopyOnWriteArrayList<>();
  private final WorkerPool pool = WorkerPool.builder().name("on-handle-error").capacity(2)
      .failureHandler((t, e) -> handled.add(e)).build();

  @AfterEach
  void close() {
    Schedulers.resetOnHandleError("warmpool-test");
    pool.shutdownNow();
  }

  @Test
  void taskErrorsReachTheOnHandleErrorHookAndThePoolsFailureHandler_fault7() {
    Schedulers.onHandleError("warmpool-test", (thread, error) -> {
      hookThreads.add(thread);
      hooked.add(error);
    });
    Scheduler s = PoolSchedulers.from(pool);
    Scheduler.Worker w = s.createWorker();
    RuntimeException direct = new IllegalStateException("direct");
    RuntimeException onWorker = new IllegalStateException("worker");
    RuntimeException delayed = new IllegalStateException("delayed");
    RuntimeException periodic = new IllegalStateException("periodic");
    s.schedule(() -> {
      throw direct;
    });
    w.schedule(() -> {
      throw onWorker;
    });
    s.schedule(() -> {
      throw delayed;
    }, 1, TimeUnit.MILLISECONDS);
    Disposable ticks = w.schedulePeriodically(() -> {
      throw periodic;
    }, 1, 1, TimeUnit.MILLISECONDS);

    await().dontCatchUncaughtExceptions().atMost(Duration.ofSeconds(10)).until(() -> hooked.contains(periodic)
        && hooked.containsAll(List.of(direct, onWorker, delayed)));
    ticks.dispose();
    assertThat(hookThreads).allMatch(t -> t.getName().startsWith("on-handle-error-"));
    await().dontCatchUncaughtExceptions().atMost(Duration.ofSeconds(10)).until(() -> handled.containsAll(
        List.of(direct, onWorker, delayed)));
    assertThat(handled.stream().filter(e -> e == direct).count())
        .as("the failure handler hears each failure once").isEqualTo(1);
    assertThat(pool.stats().failed()).isGreaterThanOrEqualTo(3);
    // the worker threads' own handlers are restored: none was left muted
    Thread worker = hookThreads.get(0);
    assertThat(worker.getUncaughtExceptionHandler()).isSameAs(worker.getThreadGroup());
    w.dispose();
  }

  @Test
  void withoutAHookNothingChanges() {
    Scheduler s = PoolSchedulers.from(pool);
    RuntimeException boom = new IllegalStateException("boom");
    s.schedule(() -> {
      throw boom;
    });
    await().dontCatchUncaughtExceptions().atMost(Duration.ofSeconds(10)).until(() -> handled.contains(boom));
    assertThat(pool.stats().failed()).isEqualTo(1);
  }
}
