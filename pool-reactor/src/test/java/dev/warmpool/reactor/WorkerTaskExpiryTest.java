package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.warmpool.CancellationAware;
import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.scheduler.Scheduler;
import reactor.test.subscriber.TestSubscriber;

/**
 * A worker's task told that it expired in line (core's {@code CancellationAware.onExpired}, which
 * core calls for a lane that waited past its line deadline) is refused as a direct task is: the
 * subscriber gets a {@code RejectedExecutionException} caused by core's
 * {@link PoolOverloadedException}, the task never runs, and the scheduler is quiescent. Core does
 * not call it for lanes yet, so the call is made here as core would make it.
 */
class WorkerTaskExpiryTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private final WorkerPool pool = WorkerPool.builder().name("worker-expiry").capacity(1).build();
  private final List<Throwable> dropped = new CopyOnWriteArrayList<>();

  @AfterEach
  void close() {
    Hooks.resetOnErrorDropped();
    pool.shutdownNow();
  }

  @Test
  void aWorkerTaskToldItExpiredEndsTheStreamWithCoresCause() throws Exception {
    Hooks.onErrorDropped(dropped::add);
    Scheduler s = PoolSchedulers.from(pool);
    AtomicReference<Disposable> firstTask = new AtomicReference<>();
    Scheduler capturing = new Scheduler() {
      @Override
      public Disposable schedule(Runnable task) {
        return s.schedule(task);
      }

      @Override
      public Worker createWorker() {
        Worker w = s.createWorker();
        return new Worker() {
          @Override
          public Disposable schedule(Runnable task) {
            Disposable d = w.schedule(task);
            firstTask.compareAndSet(null, d);
            return d;
          }

          @Override
          public void dispose() {
            w.dispose();
          }

          @Override
          public boolean isDisposed() {
            return w.isDisposed();
          }
        };
      }
    };
    AtomicInteger ran = new AtomicInteger();
    TestSubscriber<Object> ts = TestSubscriber.create();
    PoolOverloadedException cause =
        new PoolOverloadedException("pool 'worker-expiry': waited 5 ms in line");
    try (Occupied busy = Occupied.all(pool)) {
      Flux.just(1, 2).doOnNext(x -> ran.incrementAndGet()).subscribeOn(capturing).subscribe(ts);
      await().atMost(WAIT).until(() -> firstTask.get() != null);
      Disposable task = firstTask.get();
      assertThat(task.isDisposed()).as("waits in line").isFalse();
      ((CancellationAware) task).onExpired(cause);
      assertThat(task.isDisposed()).isTrue();
      assertThat(ts.isTerminated()).isTrue();
    }
    assertThat(ts.expectTerminalError()).isInstanceOf(RejectedExecutionException.class)
        .hasCause(cause);
    assertThat(ts.getReceivedOnNext()).isEmpty();
    assertThat(ts.getProtocolErrors()).isEmpty();
    assertThat(dropped).isEmpty();
    assertThat(s.disposeGracefully().block(WAIT)).isNull();
    assertThat(ran).hasValue(0);
  }
}
