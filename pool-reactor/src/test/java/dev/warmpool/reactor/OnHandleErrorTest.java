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
 * Issue 12, fault 7, and guarantee 8: a task that throws is reported as on Reactor's own schedulers
 * (the thread's uncaught-exception handler, then {@link Schedulers#onHandleError}), once, for
 * immediate, delayed and periodic tasks, direct and on a worker, and counts as failed. A failure
 * handler set on the pool's builder sees every failure instead.
 */
class OnHandleErrorTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private final List<Throwable> hooked = new CopyOnWriteArrayList<>();
  private final List<Thread> hookThreads = new CopyOnWriteArrayList<>();
  private final List<Throwable> threadHandler = new CopyOnWriteArrayList<>();
  private final List<Throwable> handled = new CopyOnWriteArrayList<>();
  private WorkerPool pool;

  @AfterEach
  void close() {
    Schedulers.resetOnHandleError("warmpool-test");
    if (pool != null) {
      pool.shutdownNow();
    }
  }

  private void hook() {
    Schedulers.onHandleError("warmpool-test", (thread, error) -> {
      hookThreads.add(thread);
      hooked.add(error);
    });
  }

  @Test
  void taskErrorsReachTheThreadsHandlerAndTheOnHandleErrorHookOnceByDefault_fault7() {
    pool = WorkerPool.builder().name("on-handle-error").capacity(2).threadFactory(r -> {
      Thread t = new Thread(r, "on-handle-error-worker");
      t.setDaemon(true);
      t.setUncaughtExceptionHandler((th, e) -> threadHandler.add(e));
      return t;
    }).build();
    hook();
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

    await().dontCatchUncaughtExceptions().atMost(WAIT).until(() -> hooked.contains(periodic)
        && hooked.containsAll(List.of(direct, onWorker, delayed)));
    ticks.dispose();
    w.dispose();
    pool.shutdown();
    await().atMost(WAIT).until(pool::isTerminated);
    assertThat(hookThreads).allMatch(t -> t.getName().startsWith("on-handle-error-"));
    for (RuntimeException e : List.of(direct, onWorker, delayed)) {
      assertThat(hooked.stream().filter(x -> x == e).count()).as("hook, %s", e).isEqualTo(1);
      assertThat(threadHandler.stream().filter(x -> x == e).count()).as("thread, %s", e)
          .isEqualTo(1);
    }
    assertThat(threadHandler).as("the thread's handler, as in Schedulers.handleError")
        .hasSameSizeAs(hooked);
    assertThat(pool.stats().failed()).isEqualTo(hooked.size());
  }

  @Test
  void anExplicitFailureHandlerSeesEveryFailureInsteadOfTheHook_guarantee8() {
    pool = WorkerPool.builder().name("explicit-handler").capacity(2)
        .failureHandler((t, e) -> handled.add(e)).build();
    hook();
    Scheduler s = PoolSchedulers.from(pool);
    Scheduler.Worker w = s.createWorker();
    RuntimeException direct = new IllegalStateException("direct");
    RuntimeException onWorker = new IllegalStateException("worker");
    RuntimeException delayed = new IllegalStateException("delayed");
    s.schedule(() -> {
      throw direct;
    });
    w.schedule(() -> {
      throw onWorker;
    });
    s.schedule(() -> {
      throw delayed;
    }, 1, TimeUnit.MILLISECONDS);

    await().dontCatchUncaughtExceptions().atMost(WAIT)
        .until(() -> handled.containsAll(List.of(direct, onWorker, delayed)));
    w.dispose();
    pool.shutdown();
    await().atMost(WAIT).until(pool::isTerminated);
    assertThat(handled).containsExactlyInAnyOrder(direct, onWorker, delayed);
    assertThat(hooked).as("onHandleError").isEmpty();
    assertThat(pool.stats().failed()).isEqualTo(3);
  }

  @Test
  void withoutAHookNothingChanges() {
    pool = WorkerPool.builder().name("no-hook").capacity(2)
        .failureHandler((t, e) -> handled.add(e)).build();
    Scheduler s = PoolSchedulers.from(pool);
    RuntimeException boom = new IllegalStateException("boom");
    s.schedule(() -> {
      throw boom;
    });
    await().dontCatchUncaughtExceptions().atMost(WAIT).until(() -> handled.contains(boom));
    assertThat(pool.stats().failed()).isEqualTo(1);
  }
}
