package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Line deadlines (DESIGN.md section 3, guarantees 4, 5 and 13): an entry that waits in line past
 * its deadline leaves unrun, found by a timer even while no seat frees; each way of waiting hears
 * of it; admitted work never expires; counters stay exact; expiry racing the hand-off, cancel and
 * shutdownNow ends each task exactly one way.
 */
@Timeout(120)
class LineDeadlineTest {
  private static final Duration HOUR = Duration.ofHours(1);
  private static final Duration SHORT = Duration.ofMillis(30);
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private WorkerPool pool(int capacity, Duration maxWaitInLine) {
    WorkerPool.Builder b = WorkerPool.builder().name(PoolFixture.uniqueName("deadline"))
        .capacity(capacity).maxIdle(HOUR);
    if (maxWaitInLine != null) {
      b.maxWaitInLine(maxWaitInLine);
    }
    return fixture.track(b.build());
  }

  private static boolean eventually(java.util.function.BooleanSupplier c) {
    return PoolFixture.waitUntil(Duration.ofSeconds(20), c);
  }

  @Test
  void anEntryExpiresOnItsTimerWhileNoSeatFrees() {
    WorkerPool pool = pool(1, SHORT);
    fixture.occupy(pool); // the only seat stays taken for the whole test
    AtomicInteger ran = new AtomicInteger();
    long t0 = System.nanoTime();
    TaskHandle h = pool.enqueue(ran::incrementAndGet);
    assertThat(pool.stats().waiting()).isEqualTo(1);
    assertThat(eventually(h::isExpired)).isTrue();
    long waited = System.nanoTime() - t0;
    assertThat(waited).as("not before its deadline").isGreaterThanOrEqualTo(SHORT.toNanos());
    assertThat(h.isDone()).isTrue();
    assertThat(h.isCancelled()).isFalse();
    assertThat(h.cancel()).as("an expired task cannot be withdrawn").isFalse();
    PoolStats s = pool.stats();
    assertThat(s.waiting()).isZero();
    assertThat(s.expired()).isEqualTo(1);
    assertThat(s.submitted()).as("only the occupying task").isEqualTo(1);
    assertThat(ran).hasValue(0);
  }

  @Test
  void aBlockedExecuteThrowsSayingHowLongItWaited() throws Exception {
    WorkerPool pool = pool(1, SHORT);
    fixture.occupy(pool);
    PoolFixture.Caller<Void> caller = fixture.call("execute", () -> {
      pool.execute(() -> { });
      return null;
    });
    Throwable thrown = caller.outcome(Duration.ofSeconds(20));
    assertThat(thrown).isInstanceOf(PoolOverloadedException.class)
        .hasMessageContaining("waited").hasMessageContaining("ms in line");
    assertThat(pool.stats().expired()).isEqualTo(1);
    assertThat(pool.stats().submitted()).isEqualTo(1);
  }

  @Test
  void aSubmitFutureFailsAndACancellationAwareTaskHearsOfItOffTheTimerThread() throws Exception {
    WorkerPool pool = pool(1, SHORT);
    fixture.occupy(pool);
    Future<?> f = pool.submit(() -> { });
    CompletableFuture<Thread> heard = new CompletableFuture<>();
    pool.enqueue(new CancellationAware() {
      @Override
      public void run() {}

      @Override
      public void onCancel() {
        heard.complete(Thread.currentThread());
      }
    });
    assertThatThrownBy(() -> f.get(20, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(PoolOverloadedException.class);
    Thread t = heard.get(20, TimeUnit.SECONDS);
    assertThat(t.getName()).isNotEqualTo("warmpool-timer");
    assertThat(eventually(() -> pool.stats().expired() == 2)).isTrue();
  }

  @Test
  void aCancellationAwareTaskThatOverridesOnExpiredHearsTheCause() throws Exception {
    WorkerPool pool = pool(1, SHORT);
    fixture.occupy(pool);
    CompletableFuture<PoolOverloadedException> cause = new CompletableFuture<>();
    AtomicInteger cancels = new AtomicInteger();
    pool.enqueue(new CancellationAware() {
      @Override
      public void run() {}

      @Override
      public void onCancel() {
        cancels.incrementAndGet();
      }

      @Override
      public void onExpired(PoolOverloadedException e) {
        cause.complete(e);
      }
    });
    assertThat(cause.get(20, TimeUnit.SECONDS)).hasMessageContaining("ms in line");
    assertThat(cancels).as("onExpired instead of onCancel").hasValue(0);
  }

  @Test
  void perTaskDeadlineOverridesThePoolsAndEntriesWithinTheirDeadlineKeepFifoOrder()
      throws Exception {
    WorkerPool pool = pool(1, null); // no pool limit
    PoolFixture.Gate gate = fixture.occupy(pool);
    List<Integer> order = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<TaskHandle> keep = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      int n = i;
      keep.add(pool.enqueue(() -> order.add(n)));
    }
    TaskHandle shortOne = pool.enqueue(() -> order.add(99), SHORT);
    assertThat(eventually(shortOne::isExpired)).isTrue();
    gate.open();
    assertThat(eventually(() -> order.size() == 5)).isTrue();
    assertThat(order).containsExactly(0, 1, 2, 3, 4);
    for (TaskHandle h : keep) {
      assertThat(h.isExpired()).isFalse();
    }
    assertThatThrownBy(() -> pool.enqueue(() -> { }, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxWait");
    assertThatThrownBy(() -> WorkerPool.builder().maxWaitInLine(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxWaitInLine");
  }

  @Test
  void aSubpoolTakesItsParentsDeadline() {
    WorkerPool parent = pool(2, SHORT);
    WorkerPool sub = parent.newSubpool("sub", 1);
    fixture.occupy(sub);
    TaskHandle h = sub.enqueue(() -> { });
    assertThat(eventually(h::isExpired)).isTrue();
    assertThat(sub.stats().expired()).isEqualTo(1);
    assertThat(parent.stats().expired()).as("counted in the parent too").isEqualTo(1);
    assertThat(sub.stats().submitted()).isEqualTo(1);
  }

  /**
   * Admitted work never expires: a lane's later task and a due timer wait past the deadline (a
   * plain task that joined after them, with the same deadline, expires first) and then run. (A
   * lane waiting for its first seat does expire: {@link LaneDeadlineTest}.)
   */
  @Test
  void admittedWorkNeverExpires() throws Exception {
    WorkerPool pool = pool(1, SHORT);
    SerialExecutor lane = pool.newSerialExecutor();
    CountDownLatch first = new CountDownLatch(1);
    lane.execute(first::countDown); // a free seat: the lane is admitted
    PoolFixture.await(first);
    PoolFixture.Gate gate = fixture.occupy(pool);
    CountDownLatch ran = new CountDownLatch(2);
    lane.execute(ran::countDown); // waits in line as the admitted lane's place
    pool.schedule(ran::countDown, 0, TimeUnit.MILLISECONDS); // due at once: admitted work
    assertThat(eventually(() -> pool.stats().waiting() == 2)).isTrue();
    TaskHandle canary = pool.enqueue(() -> { });
    assertThat(eventually(canary::isExpired)).isTrue();
    gate.open();
    PoolFixture.await(ran);
    assertThat(pool.stats().expired()).isEqualTo(1);
  }

  /**
   * Expiry racing the hand-off, cancel, resize and shutdownNow: every task ends exactly one way
   * (ran, withdrawn, expired, handed back), and the counters are exact at quiescence.
   */
  @Test
  void expiryRacingHandOffCancelResizeAndShutdownNowEndsEachTaskOneWay() throws Exception {
    long end = System.nanoTime() + PoolFixture.stress(Duration.ofSeconds(2)).toNanos();
    int rounds = 0;
    while (System.nanoTime() < end) {
      rounds++;
      WorkerPool pool = WorkerPool.builder().name(PoolFixture.uniqueName("deadline-race"))
          .capacity(2).maxIdle(HOUR).maxWaitInLine(Duration.ofMillis(1)).build();
      ThreadLocalRandom rnd = ThreadLocalRandom.current();
      AtomicInteger ran = new AtomicInteger();
      List<TaskHandle> handles = new ArrayList<>();
      ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
      for (int i = 0; i < 40; i++) {
        Runnable task = () -> {
          ran.incrementAndGet();
          PoolFixture.spinFor(rnd.nextInt(200_000));
        };
        tasks.add(task);
        handles.add(rnd.nextBoolean() ? pool.enqueue(task)
            : pool.enqueue(task, Duration.ofNanos(1 + rnd.nextInt(2_000_000))));
        if (rnd.nextInt(8) == 0) {
          handles.get(rnd.nextInt(handles.size())).cancel();
        }
        if (rnd.nextInt(16) == 0) {
          pool.resize(1 + rnd.nextInt(3));
        }
      }
      List<Runnable> back = rnd.nextBoolean() ? pool.shutdownNow() : List.of();
      pool.shutdown();
      boolean terminated = pool.awaitTermination(20, TimeUnit.SECONDS);
      assertThat(terminated).as("round %d: %s %s %s", rounds, pool.stats(), pool, handles).isTrue();
      int cancelled = 0;
      int expired = 0;
      for (TaskHandle h : handles) {
        assertThat(h.isDone()).as("round %d: every handle ended", rounds).isTrue();
        int ways = (h.isCancelled() ? 1 : 0) + (h.isExpired() ? 1 : 0);
        assertThat(ways).as("round %d: at most one of cancelled, expired", rounds).isLessThan(2);
        cancelled += h.isCancelled() ? 1 : 0;
        expired += h.isExpired() ? 1 : 0;
      }
      PoolStats s = pool.stats();
      assertThat(ran.get() + cancelled + expired + back.size()).as("round %d: each task one way",
          rounds).isEqualTo(handles.size());
      assertThat(s.expired()).as("round %d", rounds).isEqualTo(expired);
      assertThat(s.submitted()).as("round %d: %s", rounds, s)
          .isEqualTo(s.completed() + s.failed() + back.size());
      assertThat(s.completed()).isEqualTo(ran.get());
      assertThat(s.waiting()).isZero();
    }
    assertThat(rounds).isPositive();
  }
}
