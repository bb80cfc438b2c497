package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Review r7: {@code cancel(true)} of task A racing A's end and the start of task B on the same (one)
 * worker, on a pool, a subpool and a lane: B must never see A's interrupt (the envelope's
 * handshake, {@code TaskEnvelope.finish}, and the stale-interrupt clear before each task).
 */
@Timeout(120)
@Tag("stress")
class R7CancelInterruptStressTest {
  private static final Duration HOUR = Duration.ofHours(1);
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private static void spin(long nanos) {
    PoolFixture.spinFor(nanos);
  }

  /** HELD. */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"pool", "subpool", "lane"})
  void heldACancelTrueOfOneTaskNeverInterruptsTheNextOnTheSameWorker(String where)
      throws Exception {
    WorkerPool parent = fixture.pool("r7cancel", b -> b.capacity(1).maxIdle(HOUR));
    WorkerPool pool = where.equals("subpool") ? parent.newSubpool("s", 1) : parent;
    SerialExecutor lane = where.equals("lane") ? pool.newSerialExecutor() : null;
    AtomicInteger leaked = new AtomicInteger();
    AtomicInteger interruptedA = new AtomicInteger();
    // Short in the default build (CI time); longer with -Dwarmpool.stress.scale.
    long end = System.nanoTime() + PoolFixture.stress(Duration.ofMillis(1500)).toNanos();
    int rounds = 0;
    while (System.nanoTime() < end) {
      rounds++;
      ThreadLocalRandom r = ThreadLocalRandom.current();
      long aSpin = r.nextInt(30_000);
      CountDownLatch bDone = new CountDownLatch(1);
      Runnable a = () -> {
        spin(aSpin);
        if (Thread.currentThread().isInterrupted()) {
          interruptedA.incrementAndGet(); // left set on purpose: the next task must not see it
        }
      };
      Runnable b = () -> {
        try {
          for (int i = 0; i < 20; i++) {
            if (Thread.currentThread().isInterrupted()) {
              leaked.incrementAndGet();
              return;
            }
            spin(1_000);
          }
        } finally {
          bDone.countDown();
        }
      };
      TaskHandle ha = lane != null ? lane.enqueue(a) : pool.enqueue(a);
      if (lane != null) {
        lane.enqueue(b);
      } else {
        pool.enqueue(b);
      }
      spin(r.nextInt(40_000));
      ha.cancel(true);
      assertThat(bDone.await(10, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(leaked).as("rounds %d, A interrupted in %s", rounds, interruptedA).hasValue(0);
  }
}
