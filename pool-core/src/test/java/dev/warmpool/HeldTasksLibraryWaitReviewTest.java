package dev.warmpool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review 5: every wait on this library by a task for work it queued on its own pool publishes what
 * its worker holds first (Engine.beforeBlocking), rather than leaving it to the hold watch, which
 * costs each such wait at least the watch period (1 ms, against a few microseconds before held
 * tasks). To see which waits do, the pool's engine is given a timer whose thread never runs
 * (set by reflection), so the watch never fires: a wait that relies on it hangs until the
 * safety bound.
 */
@Timeout(60)
class HeldTasksLibraryWaitReviewTest {

  /** A pool whose hold watch never fires. */
  static WorkerPool poolWithoutWatch(String name) throws Exception {
    WorkerPool pool = WorkerPool.builder().name(name).capacity(4).build();
    Field timer = Engine.class.getDeclaredField("timer");
    timer.setAccessible(true);
    timer.set(((BoundedPool) pool).engine,
        new SharedTimer(loop -> new Thread(() -> { }, "never-fires")));
    return pool;
  }

  @Test
  void controlFutureGetOfASubtaskPublishesItWithoutTheWatch() throws Exception {
    WorkerPool pool = poolWithoutWatch("held-nowatch-get");
    try {
      Future<Integer> outer = pool.submit(() -> pool.submit(() -> 42).get(5, TimeUnit.SECONDS));
      assertEquals(42, outer.get(10, TimeUnit.SECONDS));
    } finally {
      pool.shutdownNow();
      assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }
  }

  @Test
  void invokeAllFromATaskPublishesItsTasksBeforeItWaits() throws Exception {
    WorkerPool pool = poolWithoutWatch("held-nowatch-invokeall");
    try {
      Callable<Integer> one = () -> 1;
      Future<Integer> outer = pool.submit(() -> {
        int sum = 0;
        for (Future<Integer> f : pool.invokeAll(List.of(one, one, one), 5, TimeUnit.SECONDS)) {
          sum += f.get(); // cancelled (CancellationException) if the bound passed first
        }
        return sum;
      });
      assertEquals(3, outer.get(10, TimeUnit.SECONDS));
    } finally {
      pool.shutdownNow();
      assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }
  }

  @Test
  void untimedInvokeAllFromATaskPublishesItsTasksBeforeItWaits() throws Exception {
    WorkerPool pool = poolWithoutWatch("held-nowatch-invokeall2");
    try {
      Callable<Integer> one = () -> 1;
      Future<Integer> outer = pool.submit(() -> {
        int sum = 0;
        for (Future<Integer> f : pool.invokeAll(List.of(one, one))) {
          sum += f.get();
        }
        return sum;
      });
      assertEquals(2, outer.get(10, TimeUnit.SECONDS));
    } finally {
      pool.shutdownNow(); // interrupts a holder still waiting
      assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }
  }

  @Test
  void closingASubpoolFromATaskOfItsParentRunsTheSubpoolsHeldTasks() throws Exception {
    // Structured use: a task opens a subpool for its own fan-out and closes it (shutdown, then
    // await termination), which waits for the tasks its own worker holds.
    WorkerPool pool = poolWithoutWatch("held-nowatch-subclose");
    try {
      java.util.concurrent.atomic.AtomicInteger ran = new java.util.concurrent.atomic.AtomicInteger();
      Future<Boolean> outer = pool.submit(() -> {
        WorkerPool sub = pool.newSubpool("fan-out", 2);
        sub.execute(ran::incrementAndGet);
        sub.execute(ran::incrementAndGet);
        sub.shutdown();
        return sub.awaitTermination(5, TimeUnit.SECONDS);
      });
      assertTrue(outer.get(10, TimeUnit.SECONDS), "the subpool terminated while its closer waited");
      assertEquals(2, ran.get());
    } finally {
      pool.shutdownNow();
      assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }
  }

  @Test
  void invokeAnyFromATaskPublishesItsTasksBeforeItWaits() throws Exception {
    WorkerPool pool = poolWithoutWatch("held-nowatch-invokeany");
    try {
      Callable<Integer> one = () -> 1;
      Future<Integer> outer = pool.submit(() -> pool.invokeAny(List.of(one, one), 5, TimeUnit.SECONDS));
      assertEquals(1, outer.get(10, TimeUnit.SECONDS));
    } finally {
      pool.shutdownNow();
      assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }
  }
}
