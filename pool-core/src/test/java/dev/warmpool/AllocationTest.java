package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The hand-off to an idle worker allocates nothing on the submitting thread. Measured with the
 * HotSpot per-thread allocation counter, after warm-up, over many calls: a single allocation per
 * call would show as at least 16 bytes per call.
 */
@Tag("allocation")
class AllocationTest {
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  private static long allocatedBytes() {
    return THREADS.getThreadAllocatedBytes(Thread.currentThread().getId());
  }

  @Test
  void tryExecuteOfAPrebuiltRunnableAllocatesNothing() {
    try (WorkerPool pool = WorkerPool.builder().name("alloc").capacity(2).build()) {
      LongAdder ran = new LongAdder();
      Runnable task = ran::increment;
      measure(() -> {
        while (!pool.tryExecute(task)) {
          Thread.onSpinWait();
        }
      }, 200_000); // warm-up
      double perCall = measure(() -> {
        while (!pool.tryExecute(task)) {
          Thread.onSpinWait();
        }
      }, 200_000);
      assertThat(perCall).isLessThan(1.0);
    }
  }

  @Test
  void funcPoolInvokeAllocatesNothingForTheHandOff() {
    try (WorkerPool pool = WorkerPool.builder().name("alloc-func").capacity(2).build()) {
      LongAdder sum = new LongAdder();
      FuncPool<Long> f = FuncPool.of(pool, sum::add);
      Long arg = 7L; // boxed once, outside the measurement
      measure(() -> {
        while (!f.tryInvoke(arg)) {
          Thread.onSpinWait();
        }
      }, 200_000);
      double perCall = measure(() -> {
        while (!f.tryInvoke(arg)) {
          Thread.onSpinWait();
        }
      }, 200_000);
      assertThat(perCall).isLessThan(1.0);
    }
  }

  /**
   * A serial lane dispatched to a free seat travels as a plain task: each call allocates the
   * lane queue's node (24 bytes) and nothing else, in particular no line entry (48 bytes).
   */
  @Test
  void serialLaneDispatchToAFreeSeatAllocatesOnlyItsQueueNode() {
    try (WorkerPool pool = WorkerPool.builder().name("alloc-lane").capacity(2).build()) {
      SerialExecutor lane = pool.newSerialExecutor();
      LongAdder ran = new LongAdder();
      Runnable task = ran::increment;
      Runnable call = () -> {
        long before = ran.sum();
        lane.execute(task);
        // Until the carrier has finished on its worker, so that each call dispatches the lane.
        while (ran.sum() == before || ((BoundedPool) pool).busy() != 0) {
          Thread.onSpinWait();
        }
      };
      measure(call, 50_000); // warm-up
      double perCall = measure(call, 50_000);
      assertThat(perCall).isLessThan(40.0);
    }
  }

  private static double measure(Runnable call, int times) {
    long before = allocatedBytes();
    for (int i = 0; i < times; i++) {
      call.run();
    }
    return (allocatedBytes() - before) / (double) times;
  }
}
