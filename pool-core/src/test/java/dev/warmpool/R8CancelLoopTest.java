package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review r8, W1: threads that call {@code cancel(true)} in a loop on a running task kept it from
 * ending for up to seconds. Each call on a started task began a new interrupt, and the runner, its
 * task returned, waited for a moment with no interrupt on its way. Now a runner that finds an
 * interrupt on its way marks the task ending, and no interrupt starts after that: a task that has
 * returned gets none, whatever the interrupters do.
 */
@Timeout(60)
class R8CancelLoopTest {
  private static final Duration HOUR = Duration.ofHours(1);
  @AutoClose final PoolFixture fixture = new PoolFixture();

  /**
   * Threads that count the interrupt() calls of other threads; the first sets the flag, then waits
   * for release.
   */
  private static final class CountingThreads {
    final AtomicInteger interrupts = new AtomicInteger();
    final CountDownLatch inFirst = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);

    Thread make(Runnable r) {
      Thread t = new Thread(r) {
        @Override
        public void interrupt() {
          super.interrupt();
          if (Thread.currentThread() == this) {
            return; // the thread restoring its own flag (the class loader does, reading a class)
          }
          if (interrupts.incrementAndGet() == 1) {
            inFirst.countDown();
            PoolFixture.awaitQuietly(release, Duration.ofSeconds(30));
          }
        }
      };
      t.setDaemon(true);
      return t;
    }
  }

  /** Where the task goes: its enqueue, and the next task's execute on the same worker. */
  private interface Target {
    TaskHandle enqueue(Runnable task);

    void execute(Runnable task);
  }

  private void aReturnedTaskGetsNoNewInterrupt(String name, Function<WorkerPool, Target> where)
      throws Exception {
    CountingThreads threads = new CountingThreads();
    WorkerPool pool = fixture.pool(name, b -> b.capacity(1).maxIdle(HOUR)
        .threadFactory(threads::make));
    Target target = where.apply(pool);
    CountDownLatch started = new CountDownLatch(1);
    AtomicBoolean go = new AtomicBoolean();
    TaskHandle h = target.enqueue(() -> {
      started.countDown();
      while (!go.get()) {
        Thread.onSpinWait(); // ignores interrupts; returns when told
      }
    });
    PoolFixture.await(started);
    PoolFixture.Caller<Boolean> first = fixture.call("first", () -> h.cancel(true));
    PoolFixture.await(threads.inFirst); // its interrupt is on its way, held inside interrupt()
    go.set(true);
    TaskEnvelope e = (TaskEnvelope) h;
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(20), () -> e.state == TaskEnvelope.ENDING))
        .as("the task returned; its runner marked it ending and waits for the interrupt on its way")
        .isTrue();
    // A second cancel(true) after the task returned: it must start no interrupt of its own.
    assertThat(h.cancel(true)).isFalse();
    threads.release.countDown();
    assertThat(first.result()).isFalse();
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(20), h::isDone)).isTrue();
    assertThat(threads.interrupts.get())
        .as("interrupt() calls: the first only; none after the task returned").isEqualTo(1);
    // and the next task on the same (only) worker starts without an interrupt
    AtomicBoolean sawInterrupt = new AtomicBoolean(true);
    CountDownLatch ran = new CountDownLatch(1);
    target.execute(() -> {
      sawInterrupt.set(Thread.currentThread().isInterrupted());
      ran.countDown();
    });
    PoolFixture.await(ran);
    assertThat(sawInterrupt).isFalse();
  }

  private static Target of(WorkerPool p) {
    return new Target() {
      @Override
      public TaskHandle enqueue(Runnable task) {
        return p.enqueue(task);
      }

      @Override
      public void execute(Runnable task) {
        p.execute(task);
      }
    };
  }

  private static Target of(SerialExecutor lane) {
    return new Target() {
      @Override
      public TaskHandle enqueue(Runnable task) {
        return lane.enqueue(task);
      }

      @Override
      public void execute(Runnable task) {
        lane.execute(task);
      }
    };
  }

  /** Was a fault (review r8, W1): the second cancel(true) interrupted a task that had returned. */
  @Test
  void guarantee9_aTaskThatReturnedGetsNoNewInterruptFromALaterCancel() throws Exception {
    aReturnedTaskGetsNoNewInterrupt("r8w1", R8CancelLoopTest::of);
  }

  /** The same for a serial lane's task and a subpool's task (other envelopes, one handshake). */
  @Test
  void guarantee9_laneAndSubpoolTasksThatReturnedGetNoNewInterrupt() throws Exception {
    aReturnedTaskGetsNoNewInterrupt("r8w1lane", p -> of(p.newSerialExecutor()));
    aReturnedTaskGetsNoNewInterrupt("r8w1sub", p -> of(p.newSubpool("s", 1)));
  }
}
