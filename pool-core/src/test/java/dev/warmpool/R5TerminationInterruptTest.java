package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * r5 (adversarial review of version 4), an attack that held: {@code Lifecycle.ended} on a worker
 * that still carries a subpool's {@code shutdownNow} interrupt (its task ignored it). The
 * dependents run without it, and the parent's next task on that worker does not inherit it.
 */
@Timeout(60)
class R5TerminationInterruptTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  @Test
  void guarantee9_subpoolDependentsOnAnInterruptedWorkerRunWithoutItAndItDoesNotLeak()
      throws Exception {
    WorkerPool parent = fixture.pool("r5ended", b -> b.capacity(1).maxIdle(Duration.ofHours(1)));
    WorkerPool sub = parent.newSubpool("s", 1);
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<Thread> taskThread = new CompletableFuture<>();
    sub.execute(() -> {
      taskThread.complete(Thread.currentThread());
      started.countDown();
      while (release.getCount() > 0) {
        Thread.onSpinWait(); // ignores the interrupt: it is still set when the task returns
      }
    });
    PoolFixture.await(started);
    CompletableFuture<String> dependent = new CompletableFuture<>();
    sub.whenTerminated().thenRun(() -> dependent.complete(Thread.currentThread().getName()
        + (Thread.currentThread().isInterrupted() ? " interrupted" : " clear")));
    sub.shutdownNow();
    assertThat(taskThread.get().isInterrupted()).as("shutdownNow interrupted the task").isTrue();
    release.countDown();
    assertThat(dependent.get(10, TimeUnit.SECONDS))
        .isEqualTo(taskThread.get().getName() + " clear");
    CompletableFuture<Boolean> next = new CompletableFuture<>();
    parent.execute(() -> {
      next.complete(Thread.currentThread() == taskThread.join()
          && !Thread.currentThread().isInterrupted());
    });
    assertThat(next.get(10, TimeUnit.SECONDS)).as("same worker, no stale interrupt").isTrue();
  }
}
