package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review r6: {@code SerialLane.admit}, a lane's first dispatch. A rejection is counted exactly when
 * a call throws it (guarantees 5 and 13: {@code stats().rejected()} equals the refusals thrown).
 */
@Timeout(120)
class R6LaneAdmitTest {
  private static final Duration HOUR = Duration.ofHours(1);
  @AutoClose final PoolFixture fixture = new PoolFixture();

  /**
   * A lane's first {@code execute} into a full pool whose line is full too (maxWaiting 0) is
   * refused: {@code join} counts the rejection, then {@code admit} takes the task back out of the
   * lane's queue to throw. A {@code close()} of the lane in between takes the task first (it
   * discards it as a cancelled pending task), so {@code admit} returns normally: the rejection is
   * counted, and nobody throws it. Each round races one such execute against one close.
   */
  @Test
  void guarantee13_aRefusedFirstDispatchRacingCloseCountsARejectionOnlyIfOneIsThrown()
      throws Exception {
    WorkerPool pool = fixture.pool("r6admit", b -> b.capacity(1).maxIdle(HOUR).maxWaiting(0));
    PoolFixture.Gate gate = fixture.occupy(pool);
    gate.awaitArrival();
    AtomicInteger thrown = new AtomicInteger();
    AtomicInteger ran = new AtomicInteger();
    AtomicReference<SerialExecutor> lane = new AtomicReference<>();
    CyclicBarrier go = new CyclicBarrier(2);
    long end = System.nanoTime() + PoolFixture.stress(Duration.ofSeconds(2)).toNanos();
    AtomicInteger rounds = new AtomicInteger();
    PoolFixture.Background closer = PoolFixture.background("closer", () -> {
      for (;;) {
        go.await();
        SerialExecutor l = lane.get();
        if (l == null) {
          return;
        }
        l.close();
        go.await();
      }
    });
    while (System.nanoTime() < end) {
      SerialExecutor l = pool.newSerialExecutor();
      lane.set(l);
      go.await();
      try {
        l.execute(ran::incrementAndGet);
      } catch (RejectedExecutionException refused) {
        thrown.incrementAndGet();
      }
      go.await();
      rounds.incrementAndGet();
    }
    lane.set(null);
    go.await();
    closer.join();
    gate.open();
    PoolStats s = pool.stats();
    assertThat(ran.get()).isZero();
    assertThat(s.rejected()).as("rejections counted vs thrown over %s rounds", rounds.get())
        .isEqualTo(thrown.get());
    assertThat(closer.failures()).isZero();
  }

  /**
   * HELD (no lane close in the mix): lanes' first dispatches into a one-place line with a deadline
   * of tens of microseconds race each other's expiries, ride-alongs, admitted work, plain tasks
   * (refused when the line is full) and seat hand-offs. Every refusal thrown is counted once and
   * no other; every accepted lane task ran or expired exactly once; counters exact.
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.ValueSource(strings = {"pool", "subpool"})
  void heldRefusalsThrownEqualRejectionsCountedWhileFirstDispatchesRaceExpiry(String where)
      throws Exception {
    long end = System.nanoTime() + PoolFixture.stress(Duration.ofSeconds(2)).toNanos();
    int rounds = 0;
    while (System.nanoTime() < end || rounds < 10) {
      rounds++;
      round(where.equals("subpool"), rounds);
    }
  }

  private void round(boolean sub, int round) throws Exception {
    java.util.concurrent.ThreadLocalRandom rnd = java.util.concurrent.ThreadLocalRandom.current();
    WorkerPool parent = fixture.pool("r6admitx", b -> b.capacity(sub ? 2 : 1).maxIdle(HOUR)
        .maxWaiting(1).maxWaitInLine(Duration.ofNanos(10_000 + rnd.nextInt(200_000))));
    WorkerPool pool = sub ? parent.newSubpool("s", 1) : parent;
    SerialExecutor[] lanes = new SerialExecutor[4];
    for (int i = 0; i < lanes.length; i++) {
      lanes[i] = pool.newSerialExecutor();
    }
    java.util.List<CountingTask> accepted =
        java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    AtomicInteger thrown = new AtomicInteger();
    AtomicInteger plainRan = new AtomicInteger();
    java.util.List<TaskHandle> plain = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    java.util.List<PoolFixture.Background> subs = new java.util.ArrayList<>();
    for (int t = 0; t < 2; t++) {
      subs.add(PoolFixture.background("submitter", () -> {
        java.util.concurrent.ThreadLocalRandom r = java.util.concurrent.ThreadLocalRandom.current();
        for (int op = 0; op < 60; op++) {
          int l = r.nextInt(lanes.length);
          int k = r.nextInt(100);
          try {
            if (k < 55) {
              CountingTask p = new CountingTask();
              lanes[l].execute(p);
              accepted.add(p);
            } else if (k < 65) {
              CountingTask p = new CountingTask();
              lanes[l].executeAdmitted(p);
              accepted.add(p);
            } else {
              int micros = r.nextInt(200);
              plain.add(pool.enqueue(() -> {
                plainRan.incrementAndGet();
                PoolFixture.spinFor(micros * 1000L);
              }));
            }
          } catch (RejectedExecutionException refused) {
            thrown.incrementAndGet();
          }
        }
      }));
    }
    for (PoolFixture.Background b : subs) {
      b.join();
      assertThat(b.failures()).isZero();
    }
    pool.shutdown();
    parent.shutdown();
    assertThat(parent.awaitTermination(20, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    int plainExpired = 0;
    for (TaskHandle h : plain) {
      plainExpired += h.isExpired() ? 1 : 0;
    }
    int pe = plainExpired;
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(20), () -> {
      long h = pe;
      for (CountingTask p : accepted) {
        h += p.expired.get();
      }
      return h == pool.stats().expired();
    })).as("round %d: every expiry heard %s", round, pool.stats()).isTrue();
    long ran = plainRan.get();
    for (CountingTask p : accepted) {
      assertThat(p.ran.get() + p.expired.get()).as("round %d: one way", round).isEqualTo(1);
      assertThat(p.cancels).hasValue(0);
      ran += p.ran.get();
    }
    PoolStats s = pool.stats();
    assertThat(s.rejected()).as("round %d: counted vs thrown %s", round, s).isEqualTo(thrown.get());
    assertThat(s.completed()).as("round %d: %s", round, s).isEqualTo(ran);
    assertThat(s.submitted()).as("round %d: %s", round, s).isEqualTo(s.completed() + s.failed());
  }
}
