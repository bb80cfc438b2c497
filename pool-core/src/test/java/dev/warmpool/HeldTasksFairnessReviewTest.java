package dev.warmpool;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review 5: a task queued from outside, with a seat, waits in the run queue while the only worker
 * runs a chain of tasks each of which queues the next (a trampolined loop, an actor, a coroutine that
 * yields): the worker runs each held next task itself and never looks at the queue. With a thread
 * factory that blocks (guarantee 12: it may delay only the task that needs its thread, never one a
 * running worker could take), only the hold watch lets the queued task through.
 */
@Timeout(60)
class HeldTasksFairnessReviewTest {

  static void chainAndOutsider(WorkerPool pool, HeldTasksReviewTest.OneWorkerFactory factory,
      long[] delayOut, boolean[] ranWhileChainRan) throws Exception {
    AtomicBoolean outsiderRan = new AtomicBoolean();
    CountDownLatch chainRuns = new CountDownLatch(1);
    CountDownLatch chainEnded = new CountDownLatch(1);
    long bound = System.nanoTime() + TimeUnit.SECONDS.toNanos(5); // safety bound of the chain
    Runnable[] step = new Runnable[1];
    step[0] = () -> {
      chainRuns.countDown();
      if (!outsiderRan.get() && System.nanoTime() - bound < 0) {
        pool.enqueue(step[0]);
      } else {
        chainEnded.countDown();
      }
    };
    pool.execute(step[0]);
    assertTrue(chainRuns.await(10, TimeUnit.SECONDS));
    AtomicLong ranAt = new AtomicLong();
    long queuedAt = System.nanoTime();
    CountDownLatch outsider = new CountDownLatch(1);
    pool.enqueue(() -> {
      ranAt.set(System.nanoTime());
      outsiderRan.set(true);
      outsider.countDown();
    });
    assertTrue(chainEnded.await(20, TimeUnit.SECONDS));
    ranWhileChainRan[0] = outsiderRan.get();
    factory.release.countDown();
    assertTrue(outsider.await(10, TimeUnit.SECONDS));
    delayOut[0] = ranAt.get() - queuedAt;
  }

  @Test
  void aTaskQueuedFromOutsideIsNotStarvedByAChainOfHeldTasksWithoutTheWatch() throws Exception {
    HeldTasksReviewTest.OneWorkerFactory factory =
        new HeldTasksReviewTest.OneWorkerFactory("held-fair");
    WorkerPool pool = WorkerPool.builder().name("held-fair").capacity(3).threadFactory(factory)
        .build();
    java.lang.reflect.Field timer = Engine.class.getDeclaredField("timer");
    timer.setAccessible(true);
    timer.set(((BoundedPool) pool).engine,
        new SharedTimer(loop -> new Thread(() -> { }, "never-fires")));
    try {
      long[] delay = new long[1];
      boolean[] ran = new boolean[1];
      chainAndOutsider(pool, factory, delay, ran);
      assertTrue(ran[0], "the outsider waited behind the chain until it ended (5 s)");
    } finally {
      pool.shutdownNow();
      assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }
  }

  @Test
  void withTheWatchTheOutsiderGetsThroughAndItsDelayIsReported() throws Exception {
    HeldTasksReviewTest.OneWorkerFactory factory =
        new HeldTasksReviewTest.OneWorkerFactory("held-fair-w");
    WorkerPool pool = WorkerPool.builder().name("held-fair-w").capacity(3).threadFactory(factory)
        .build();
    try {
      long[] delay = new long[1];
      boolean[] ran = new boolean[1];
      chainAndOutsider(pool, factory, delay, ran);
      System.out.printf("HeldTasksFairnessReviewTest: outsider delayed %.1f us behind the chain%n",
          delay[0] / 1e3);
      assertTrue(ran[0], "the outsider waited behind the chain until it ended (5 s)");
    } finally {
      pool.shutdownNow();
      assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }
  }
}
