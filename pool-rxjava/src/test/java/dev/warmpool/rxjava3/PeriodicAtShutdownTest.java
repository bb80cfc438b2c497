package dev.warmpool.rxjava3;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.PoolClosedException;
import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Observable;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.observers.TestObserver;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Guarantee 7 for a periodic task whose run is in progress when the pool shuts down: its next run,
 * not yet due, completes cancelled, the same for a worker's task as for a direct one. A
 * conventional scheduler is quiet (see AdapterReviewTest); a {@link PoolScope} tells its stream
 * with a {@link PoolClosedException}, as for any timer the shutdown cancelled.
 */
class PeriodicAtShutdownTest {
  @RegisterExtension final RxFixture fx = new RxFixture();

  private void inAScope(boolean ofWorker) throws Exception {
    WorkerPool p = fx.pool(b -> b.capacity(1));
    CountDownLatch inRun = new CountDownLatch(1);
    CountDownLatch release = fx.hold();
    AtomicInteger runs = new AtomicInteger();
    TestObserver<Integer> ticks = PoolScope.observable(p, s ->
        Observable.<Integer>create(e -> {
          Runnable body = () -> {
            if (runs.incrementAndGet() == 1) {
              inRun.countDown();
              RxFixture.awaitQuietly(release);
            }
          };
          if (ofWorker) {
            Scheduler.Worker w = s.createWorker();
            e.setDisposable(w);
            w.schedulePeriodically(body, 0, 1, TimeUnit.MILLISECONDS);
          } else {
            e.setDisposable(s.schedulePeriodicallyDirect(body, 0, 1, TimeUnit.MILLISECONDS));
          }
        })).test();
    assertThat(inRun.await(10, TimeUnit.SECONDS)).isTrue();
    p.shutdown(); // while the first run is in progress
    release.countDown();
    assertThat(p.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    ticks.awaitDone(10, TimeUnit.SECONDS).assertError(PoolClosedException.class);
    assertThat(runs.get()).isEqualTo(1);
    assertThat(fx.errors).isEmpty();
  }

  @Test
  void workerPeriodicOfAScopeRunningAtShutdownEndsItsStreamWithPoolClosed() throws Exception {
    inAScope(true);
  }

  @Test
  void directPeriodicOfAScopeRunningAtShutdownEndsItsStreamWithPoolClosed() throws Exception {
    inAScope(false);
  }
}
