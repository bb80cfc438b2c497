package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.test.StepVerifier;

/**
 * Disposals racing with runs, from other threads and from the tasks themselves: each task must end
 * exactly once, or a graceful disposal would never complete (a lost end) or complete too early (a
 * double end, caught by the running-task check).
 */
@Tag("stress")
class DisposalStressTest {
  private final WorkerPool pool = WorkerPool.builder().name("stress").capacity(4).build();
  private final Scheduler scheduler = PoolSchedulers.from(pool);

  @AfterEach
  void close() {
    scheduler.dispose();
    pool.shutdownNow();
    pool.close();
  }

  @Test
  void everyTaskEndsExactlyOnceWhateverRacesItsDisposal() throws Exception {
    int n = 3000;
    List<Scheduler.Worker> workers = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      workers.add(scheduler.createWorker());
    }
    List<Disposable> tasks = new ArrayList<>();
    AtomicInteger running = new AtomicInteger();
    AtomicInteger ran = new AtomicInteger();
    CountDownLatch disposerDone = new CountDownLatch(1);
    Runnable task = () -> {
      running.incrementAndGet();
      ran.incrementAndGet();
      Thread.onSpinWait();
      running.decrementAndGet();
    };
    for (int i = 0; i < n; i++) {
      ThreadLocalRandom r = ThreadLocalRandom.current();
      Scheduler.Worker w = workers.get(i % workers.size());
      switch (i % 5) {
        case 0:
          tasks.add(scheduler.schedule(task));
          break;
        case 1:
          tasks.add(w.schedule(task));
          break;
        case 2:
          tasks.add(scheduler.schedule(task, r.nextInt(3), TimeUnit.MILLISECONDS));
          break;
        case 3:
          tasks.add(w.schedule(task, r.nextInt(3), TimeUnit.MILLISECONDS));
          break;
        default:
          Disposable[] self = new Disposable[1];
          synchronized (self) {
            self[0] = w.schedule(() -> {
              synchronized (self) {
                self[0].dispose(); // from its own thread
              }
            });
          }
          tasks.add(self[0]);
      }
    }
    Thread disposer = new Thread(() -> {
      ThreadLocalRandom r = ThreadLocalRandom.current();
      for (int i = 0; i < n; i += 1 + r.nextInt(3)) {
        tasks.get(i).dispose();
      }
      workers.get(0).dispose(); // and one whole worker
      disposerDone.countDown();
    });
    disposer.start();
    assertThat(disposerDone.await(10, TimeUnit.SECONDS)).isTrue();

    StepVerifier.create(scheduler.disposeGracefully()).expectComplete()
        .verify(Duration.ofSeconds(10));
    assertThat(running).as("nothing runs once graceful disposal completed").hasValue(0);
    assertThat(tasks).allMatch(Disposable::isDisposed);
    assertThat(ran.get()).isLessThanOrEqualTo(n);
  }

  /**
   * Issue 21, suspected: a timer scheduled while dispose() sweeps the scheduler's timers must not
   * stay armed (it would hold a later graceful disposal open until it came due).
   */
  @Test
  void noTimerOfADisposedSchedulerStaysArmed_guarantee7() throws Exception {
    for (int round = 0; round < 300; round++) {
      Scheduler s = PoolSchedulers.from(pool);
      Scheduler.Worker w = s.createWorker();
      CountDownLatch go = new CountDownLatch(1);
      Thread scheduling = new Thread(() -> {
        Occupied.awaitQuietly(go);
        try {
          for (int i = 0; ; i++) {
            if (i % 2 == 0) {
              s.schedule(() -> { }, 1, TimeUnit.HOURS);
            } else {
              w.schedule(() -> { }, 1, TimeUnit.HOURS);
            }
          }
        } catch (java.util.concurrent.RejectedExecutionException disposed) {
          // the end of the round
        }
      });
      scheduling.start();
      go.countDown();
      s.dispose();
      scheduling.join(10_000);
      assertThat(s.disposeGracefully().block(Duration.ofSeconds(10))).as("round %d", round)
          .isNull();
    }
  }
}
