package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link TaskHandle} version 3 (how a task ended: {@code isDone}, {@code isExpired},
 * {@code cancel(boolean)}) and {@link WorkerPool#whenTerminated()} (DESIGN.md section 3).
 */
@Timeout(60)
class TaskHandleV3Test {
  private static final Duration HOUR = Duration.ofHours(1);
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private WorkerPool pool(int capacity) {
    return fixture.track(WorkerPool.builder().name(PoolFixture.uniqueName("handle3"))
        .capacity(capacity).maxIdle(HOUR).build());
  }

  @Test
  void aHandleReadsDoneOnceItsTaskRan() throws Exception {
    WorkerPool pool = pool(1);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch running = new CountDownLatch(1);
    TaskHandle h = pool.enqueue(() -> {
      running.countDown();
      PoolFixture.awaitQuietly(release, Duration.ofSeconds(30));
    });
    PoolFixture.await(running);
    assertThat(h.isDone()).as("running, not done").isFalse();
    release.countDown();
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10), h::isDone)).isTrue();
    assertThat(h.isCancelled()).isFalse();
    assertThat(h.isExpired()).isFalse();
    assertThat(h.cancel()).as("a task that ran cannot be withdrawn").isFalse();
  }

  @Test
  void aWithdrawnTaskReadsDoneAndCancelledAndAHandedBackOneDoneOnly() {
    WorkerPool pool = pool(1);
    fixture.occupy(pool);
    TaskHandle withdrawn = pool.enqueue(() -> { });
    TaskHandle handedBack = pool.enqueue(() -> { });
    assertThat(withdrawn.isDone()).as("waiting in line").isFalse();
    assertThat(withdrawn.cancel(true)).isTrue();
    assertThat(withdrawn.isDone()).isTrue();
    assertThat(withdrawn.isCancelled()).isTrue();
    List<Runnable> back = pool.shutdownNow();
    assertThat(back).hasSize(1);
    assertThat(handedBack.isDone()).isTrue();
    assertThat(handedBack.isCancelled()).isFalse();
    assertThat(handedBack.isExpired()).isFalse();
  }

  /**
   * cancel(true) interrupts the running task, and only it: the next task on the same (only)
   * worker does not see the interrupt. Repeated, so that the interrupt also lands as the task ends.
   */
  @Test
  void cancelTrueInterruptsOnlyTheRunningTaskNeverTheNextOne() throws Exception {
    WorkerPool pool = pool(1);
    AtomicInteger leaked = new AtomicInteger();
    for (int round = 0; round < 300; round++) {
      CountDownLatch running = new CountDownLatch(1);
      AtomicBoolean sawInterrupt = new AtomicBoolean();
      boolean waitForInterrupt = round % 2 == 0; // half: the task ends on its own, racing the cancel
      TaskHandle h = pool.enqueue(() -> {
        running.countDown();
        if (waitForInterrupt) {
          try {
            new CountDownLatch(1).await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            sawInterrupt.set(true);
          }
        }
      });
      PoolFixture.await(running);
      assertThat(h.cancel(true)).as("a started task is not withdrawn").isFalse();
      CompletableFuture<Boolean> next = new CompletableFuture<>();
      pool.execute(() -> next.complete(Thread.currentThread().isInterrupted()));
      if (next.get(30, TimeUnit.SECONDS)) {
        leaked.incrementAndGet();
      }
      if (waitForInterrupt) {
        assertThat(sawInterrupt).as("round %d: the running task was interrupted", round).isTrue();
      }
      assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10), h::isDone)).isTrue();
    }
    assertThat(leaked).as("next tasks that saw the interrupt").hasValue(0);
  }

  @Test
  void whenTerminatedCompletesAtTerminationAndAFreshStageFollowsAReboot() throws Exception {
    WorkerPool pool = pool(2);
    pool.execute(() -> { });
    CompletableFuture<Void> first = pool.whenTerminated().toCompletableFuture();
    assertThat(first).isNotDone();
    pool.shutdown();
    first.get(10, TimeUnit.SECONDS);
    assertThat(pool.isTerminated()).isTrue();

    pool.reboot();
    CompletableFuture<Void> second = pool.whenTerminated().toCompletableFuture();
    assertThat(second).as("a fresh generation").isNotDone();
    assertThat(first).isDone();
    pool.execute(() -> { });
    pool.shutdown();
    second.get(10, TimeUnit.SECONDS);
  }

  @Test
  void whenTerminatedOfASubpoolAndOfAShardedPool() throws Exception {
    WorkerPool parent = pool(2);
    WorkerPool sub = parent.newSubpool("sub", 1);
    CompletableFuture<Void> subDone = sub.whenTerminated().toCompletableFuture();
    sub.execute(() -> { });
    sub.shutdown();
    subDone.get(10, TimeUnit.SECONDS);
    assertThat(parent.isShutdown()).isFalse();

    WorkerPool sharded = fixture.track(ShardedPool.of(2, ShardedPool.Placement.ROUND_ROBIN,
        WorkerPool.builder().name(PoolFixture.uniqueName("handle3-sharded")).capacity(1)));
    CompletableFuture<Void> all = sharded.whenTerminated().toCompletableFuture();
    sharded.execute(() -> { });
    assertThat(all).isNotDone();
    sharded.shutdown();
    all.get(10, TimeUnit.SECONDS);
    assertThat(sharded.isTerminated()).isTrue();
  }

  @Test
  void whenTerminatedCannotBeCompletedFromOutside() {
    WorkerPool pool = pool(1);
    CompletableFuture<Void> f = pool.whenTerminated().toCompletableFuture();
    f.complete(null); // a copy: the pool's own stage stays pending
    assertThat(pool.whenTerminated().toCompletableFuture()).isNotDone();
    assertThat(pool.isTerminated()).isFalse();
  }
}
