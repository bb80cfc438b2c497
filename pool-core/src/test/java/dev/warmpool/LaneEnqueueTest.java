package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link SerialExecutor#enqueue}: a lane task withdrawn by its handle (DESIGN guarantee 13). */
class LaneEnqueueTest {
  private static final Duration SAFETY = Duration.ofSeconds(30);
  private final List<WorkerPool> pools = new ArrayList<>();

  private WorkerPool pool(WorkerPool.Builder b) {
    WorkerPool p = b.build();
    pools.add(p);
    return p;
  }

  /** Every latch that holds seats; opened before the pools close, so a failure never hangs. */
  private final List<CountDownLatch> held = new ArrayList<>();

  @AfterEach
  void closePools() {
    held.forEach(CountDownLatch::countDown);
    pools.forEach(WorkerPool::shutdownNow);
    pools.forEach(WorkerPool::close);
  }

  /** Holds every seat of {@code p} until {@code release} opens. */
  private void fill(WorkerPool p, CountDownLatch release) throws InterruptedException {
    held.add(release);
    CountDownLatch holding = new CountDownLatch(p.capacity());
    for (int i = 0; i < p.capacity(); i++) {
      p.execute(() -> {
        holding.countDown();
        awaitQuietly(release);
      });
    }
    assertThat(holding.await(30, TimeUnit.SECONDS)).isTrue();
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void awaitQuiet(WorkerPool p) {
    await().atMost(SAFETY).until(() -> p.stats().busy() == 0 && p.stats().waiting() == 0);
  }

  @Test
  void cancelBeforeStartCountsInNoneAndTheLaneLeavesTheLine() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("enq-line").capacity(1).maxWaiting(1));
    SerialExecutor lane = p.newSerialExecutor();
    AtomicInteger ran = new AtomicInteger();
    CountDownLatch release = new CountDownLatch(1);
    fill(p, release);
    TaskHandle h = lane.enqueue(() -> ran.addAndGet(1));
    assertThat(p.stats().waiting()).isEqualTo(1);
    assertThat(p.stats().submitted()).isEqualTo(2);
    assertThat(h.isDone()).isFalse();

    assertThat(h.cancel()).isTrue();
    assertThat(h.isCancelled()).isTrue();
    assertThat(h.isDone()).isTrue();
    assertThat(h.isExpired()).isFalse();
    assertThat(h.cancel()).as("only once").isFalse();
    assertThat(p.stats().waiting()).as("the lane gave up its place at once").isZero();
    assertThat(p.stats().submitted()).isEqualTo(1);
    // the line holds no live work: another task takes the one place under maxWaiting
    assertThatCode(() -> p.enqueue(() -> ran.addAndGet(10))).doesNotThrowAnyException();
    release.countDown();
    await().atMost(SAFETY).until(() -> ran.get() == 10);
    awaitQuiet(p);
    PoolStats st = p.stats();
    assertThat(st.submitted()).isEqualTo(2);
    assertThat(st.completed()).isEqualTo(2);
    assertThat(st.failed()).isZero();
    // and the lane still works
    CountDownLatch later = new CountDownLatch(1);
    TaskHandle h2 = lane.enqueue(later::countDown);
    assertThat(later.await(30, TimeUnit.SECONDS)).isTrue();
    await().atMost(SAFETY).until(h2::isDone);
    assertThat(h2.isCancelled()).isFalse();
  }

  @Test
  void cancelOfOneOfSeveralKeepsTheLaneInLineAndTheOrder() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("enq-mid").capacity(1));
    SerialExecutor lane = p.newSerialExecutor();
    List<Integer> order = new java.util.concurrent.CopyOnWriteArrayList<>();
    CountDownLatch release = new CountDownLatch(1);
    fill(p, release);
    Runnable same = () -> order.add(0);
    TaskHandle a = lane.enqueue(same);
    TaskHandle b = lane.enqueue(same); // the same runnable twice: the handle withdraws its own
    lane.execute(() -> order.add(3));
    assertThat(b.cancel()).isTrue();
    assertThat(p.stats().waiting()).isEqualTo(1);
    release.countDown();
    await().atMost(SAFETY).until(() -> order.size() == 2);
    awaitQuiet(p);
    assertThat(order).containsExactly(0, 3);
    assertThat(a.isDone()).isTrue();
    assertThat(a.isCancelled()).isFalse();
    assertThat(p.stats().submitted()).isEqualTo(3);
    assertThat(p.stats().completed()).isEqualTo(3);
  }

  @Test
  void cancelAfterStartReturnsFalseAndMayInterruptThatRunOnly() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("enq-run").capacity(1));
    SerialExecutor lane = p.newSerialExecutor();
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch interrupted = new CountDownLatch(1);
    TaskHandle h = lane.enqueue(() -> {
      started.countDown();
      try {
        new CountDownLatch(1).await();
      } catch (InterruptedException e) {
        interrupted.countDown();
      }
    });
    AtomicInteger nextSawInterrupt = new AtomicInteger(-1);
    lane.execute(() -> nextSawInterrupt.set(Thread.currentThread().isInterrupted() ? 1 : 0));
    assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(h.cancel()).isFalse();
    assertThat(h.isCancelled()).isFalse();
    assertThat(h.isDone()).isFalse();
    assertThat(h.cancel(true)).isFalse();
    assertThat(interrupted.await(30, TimeUnit.SECONDS)).isTrue();
    await().atMost(SAFETY).until(() -> nextSawInterrupt.get() >= 0);
    assertThat(nextSawInterrupt.get()).as("the interrupt reached the next task").isZero();
    assertThat(h.isDone()).isTrue();
    assertThat(h.isCancelled()).isFalse();
    awaitQuiet(p);
    assertThat(p.stats().completed()).isEqualTo(2);
  }

  @Test
  void closedLaneTaskReadsDoneNotCancelledAndShutdownNowHandsBackTheOriginal() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("enq-close").capacity(1));
    SerialExecutor lane = p.newSerialExecutor();
    SerialExecutor other = p.newSerialExecutor();
    CountDownLatch release = new CountDownLatch(1);
    fill(p, release);
    TaskHandle h = lane.enqueue(() -> { });
    lane.close();
    assertThat(h.isDone()).isTrue();
    assertThat(h.isCancelled()).isFalse();
    assertThat(h.cancel()).isFalse();
    Runnable original = () -> { };
    TaskHandle g = other.enqueue(original);
    List<Runnable> back = p.shutdownNow();
    assertThat(back).contains(original);
    assertThat(g.isDone()).isTrue();
    assertThat(g.cancel()).isFalse();
    release.countDown();
  }

  /** The unadmitted lane expires in line with its task: it reads expired, and counts once. */
  @Test
  void taskOfALaneExpiringInLineReadsExpired() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("enq-exp").capacity(1)
        .maxWaitInLine(Duration.ofMillis(20)));
    SerialExecutor lane = p.newSerialExecutor();
    CountDownLatch release = new CountDownLatch(1);
    fill(p, release);
    TaskHandle h = lane.enqueue(() -> { });
    await().atMost(SAFETY).until(h::isExpired);
    assertThat(h.isDone()).isTrue();
    assertThat(h.cancel()).isFalse();
    release.countDown();
    awaitQuiet(p);
    assertThat(p.stats().expired()).isEqualTo(1);
    assertThat(p.stats().submitted()).isEqualTo(1);
  }

  /**
   * A cancel racing the lane's worker: exactly one of "ran" and "withdrawn", and the counters say
   * exactly that, round after round.
   */
  @Test
  void cancelRacingTheDrainEndsEachTaskExactlyOnce() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("enq-race").capacity(2));
    SerialExecutor lane = p.newSerialExecutor();
    int rounds = 10_000;
    AtomicInteger ran = new AtomicInteger();
    int withdrawn = 0;
    CyclicBarrier both = new CyclicBarrier(2);
    for (int i = 0; i < rounds; i++) {
      CountDownLatch gate = new CountDownLatch(1);
      lane.execute(() -> awaitQuietly(gate)); // holds the lane's worker until the race starts
      TaskHandle h = lane.enqueue(ran::incrementAndGet);
      CountDownLatch after = new CountDownLatch(1);
      lane.execute(after::countDown); // serial: once it ran, h ran or was skipped
      TaskHandle[] mine = {h};
      Thread canceller = new Thread(() -> {
        try {
          both.await();
        } catch (Exception e) {
          throw new AssertionError(e);
        }
        mine[0].cancel();
      });
      canceller.start();
      both.await();
      gate.countDown();
      canceller.join();
      assertThat(after.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(h.isDone()).isTrue();
      if (h.isCancelled()) {
        withdrawn++;
      }
      if (i % 64 == 63) {
        assertThat(ran.get() + withdrawn).isEqualTo(i + 1);
      }
    }
    awaitQuiet(p);
    assertThat(ran.get() + withdrawn).isEqualTo(rounds);
    PoolStats st = p.stats();
    assertThat(st.submitted()).as(st.toString()).isEqualTo(2L * rounds + ran.get());
    assertThat(st.completed()).as(st.toString()).isEqualTo(2L * rounds + ran.get());
    assertThat(st.failed()).isZero();
    assertThat(withdrawn).as("both outcomes occurred").isPositive();
  }
}
