package dev.warmpool.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.scheduler.Scheduler;

/**
 * The protocols of a worker's compact task set (issue 33: an idle worker with a pending timer
 * holds no {@code ConcurrentHashMap}): a dispose racing schedules from other threads, a worker
 * whose set grows past its first member and shrinks back, and the scheduler's sweep reaching the
 * tasks of its workers. Each ends with a graceful disposal of the scheduler, which completes only
 * once every accepted task has ended (the root's count is exact at quiescence).
 */
class WorkerFootprintTest {
  private final WorkerPool pool = WorkerPool.builder().name("footprint").capacity(2).build();

  @AfterEach
  void close() {
    pool.shutdownNow();
    pool.close();
  }

  /** DESIGN section 5: a worker's dispose cancels everything pending, whatever races it. */
  @Test
  void workerDisposeRacingSchedulesLeavesNoTaskPending() throws Exception {
    Scheduler s = PoolSchedulers.from(pool);
    for (int round = 0; round < 300; round++) {
      Scheduler.Worker w = s.createWorker();
      List<Disposable> returned = Collections.synchronizedList(new ArrayList<>());
      CountDownLatch go = new CountDownLatch(1);
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < 2; t++) {
        boolean timers = t == 0;
        Thread th = new Thread(() -> {
          try {
            go.await();
            for (int i = 0; i < 40; i++) {
              returned.add(timers ? w.schedule(() -> { }, 1, TimeUnit.HOURS)
                  : w.schedule(WorkerFootprintTest::parkBriefly));
            }
          } catch (RejectedExecutionException refused) {
            // the worker was disposed: Reactor's rejection, and every later schedule is refused
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
        th.start();
        threads.add(th);
      }
      go.countDown();
      w.dispose();
      for (Thread th : threads) {
        th.join();
      }
      synchronized (returned) {
        for (Disposable d : returned) {
          assertThat(d.isDisposed()).as("round %d: a task outlived its worker's dispose", round)
              .isTrue();
        }
      }
      assertThat(Scannable.from(w).scanUnsafe(Scannable.Attr.BUFFERED)).isEqualTo(0);
    }
    s.disposeGracefully().block(Duration.ofSeconds(30)); // every accepted task ended, once
  }

  /** The set past its first member (a table that grows, then empties): dispose reaches them all. */
  @Test
  void aWorkerWithAThousandPendingTimersDisposesEachAndEndsEach() {
    Scheduler s = PoolSchedulers.from(pool);
    Scheduler.Worker w = s.createWorker();
    List<Disposable> tasks = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      tasks.add(w.schedule(() -> { }, 1, TimeUnit.HOURS));
    }
    for (int i = 0; i < 1000; i += 3) {
      tasks.get(i).dispose(); // leaves the set from the middle of its table
    }
    assertThat(Scannable.from(w).scanUnsafe(Scannable.Attr.BUFFERED)).isEqualTo(666);
    w.dispose();
    assertThat(tasks).allMatch(Disposable::isDisposed);
    assertThat(Scannable.from(w).scanUnsafe(Scannable.Attr.BUFFERED)).isEqualTo(0);
    s.disposeGracefully().block(Duration.ofSeconds(30));
  }

  /** The scheduler's dispose reaches the tasks each worker holds in its compact set. */
  @Test
  void schedulerDisposeCancelsThePendingTasksOfEveryWorker() {
    Scheduler s = PoolSchedulers.from(pool);
    List<Disposable> tasks = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      Scheduler.Worker w = s.createWorker();
      for (int j = 0; j < i % 4; j++) {
        tasks.add(w.schedule(() -> { }, 1, TimeUnit.HOURS));
      }
    }
    s.dispose();
    assertThat(tasks).hasSize(150).allMatch(Disposable::isDisposed);
    s.disposeGracefully().block(Duration.ofSeconds(30)); // already disposed: completes once quiet
  }

  /**
   * The scheduler's live workers are a list through the workers' own links (issue 33): a dispose of
   * the scheduler racing workers that join and leave it from two threads still reaches every task
   * (DESIGN section 5, adapters: dispose cancels everything pending): each schedule was refused or
   * its task reads disposed, and the root's count reaches zero (the graceful disposal completes).
   */
  @Test
  void schedulerDisposeRacingWorkersJoiningAndLeavingLeavesNoTaskPending() throws Exception {
    for (int round = 0; round < 200; round++) {
      Scheduler s = PoolSchedulers.from(pool);
      List<Disposable> returned = Collections.synchronizedList(new ArrayList<>());
      CountDownLatch go = new CountDownLatch(1);
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < 2; t++) {
        Thread th = new Thread(() -> {
          try {
            go.await();
            for (int i = 0; i < 50; i++) {
              Scheduler.Worker w = s.createWorker();
              returned.add(w.schedule(() -> { }, 1, TimeUnit.HOURS));
              if (i % 2 == 0) {
                w.dispose(); // leaves the root while the scheduler's sweep may walk its list
              }
            }
          } catch (RejectedExecutionException refused) {
            // the scheduler was disposed: every later schedule is refused
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
        th.start();
        threads.add(th);
      }
      go.countDown();
      s.dispose();
      for (Thread th : threads) {
        th.join();
      }
      synchronized (returned) {
        assertThat(returned).as("round %d", round).allMatch(Disposable::isDisposed);
      }
      s.disposeGracefully().block(Duration.ofSeconds(30)); // every accepted task ended, once
    }
  }

  private static void parkBriefly() {
    java.util.concurrent.locks.LockSupport.parkNanos(10_000);
  }
}
