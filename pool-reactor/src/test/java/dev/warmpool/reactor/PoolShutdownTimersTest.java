package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.scheduler.Scheduler;

/**
 * Issue 12, faults 3 and 4 (Reactor part): when a shared pool shuts down, core cancels the pending
 * timers; the scheduler must hear of it (through {@code CancellationAware}), stop holding them, and
 * let a graceful disposal finish.
 */
class PoolShutdownTimersTest {
  private final WorkerPool pool = WorkerPool.builder().name("shared-timers").capacity(2).build();

  @AfterEach
  void close() {
    pool.shutdownNow();
  }

  @Test
  void disposeGracefullyCompletesWhenTheSharedPoolShutsDownUnderAPendingTimer_fault3() {
    Scheduler s = PoolSchedulers.from(pool);
    s.schedule(() -> { }, 1, TimeUnit.HOURS);
    var graceful = s.disposeGracefully().toFuture();
    assertThat(graceful).isNotDone(); // waits for the pending timer
    pool.shutdown();
    assertThat(s.disposeGracefully().block(Duration.ofSeconds(10))).isNull();
    assertThat(graceful).isDone();
  }

  @Test
  void pendingTimersReadDisposedAndAreNotHeldOnceThePoolShutsDown_fault4() {
    Scheduler s = PoolSchedulers.from(pool);
    Scheduler.Worker w = s.createWorker();
    List<Disposable> timers = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      timers.add(s.schedule(() -> { }, 1, TimeUnit.HOURS));
      timers.add(w.schedule(() -> { }, 1, TimeUnit.HOURS));
    }
    assertThat(((Scannable) w).scan(Scannable.Attr.BUFFERED)).isEqualTo(500);
    pool.shutdown();
    assertThat(timers).allMatch(Disposable::isDisposed);
    assertThat(((Scannable) w).scan(Scannable.Attr.BUFFERED)).as("worker's pending tasks")
        .isEqualTo(0);
  }
}
