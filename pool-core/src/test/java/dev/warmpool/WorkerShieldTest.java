package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The worker's interrupt shield: shutdownNow's interrupt of every worker never lands while the
 * worker runs termination dependents, and is never lost (it is owed until the shield lifts).
 */
class WorkerShieldTest {

  private static Worker onThisThread() {
    Worker w = new Worker(null, null, null);
    w.offerThread(Thread.currentThread());
    return w;
  }

  @Test
  void anInterruptWhileShieldedIsOwedUntilTheShieldLifts() throws InterruptedException {
    Worker w = onThisThread();
    assertThat(w.shield()).isEqualTo(Worker.CLEAR);
    Thread other = new Thread(w::interruptToStop);
    other.start();
    other.join();
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
    w.unshield(Worker.CLEAR);
    assertThat(Thread.interrupted()).as("owed, then delivered").isTrue();
  }

  @Test
  void theFlagSetBeforeTheShieldIsClearedInsideAndRestoredAfter() {
    Worker w = onThisThread();
    Thread.currentThread().interrupt();
    int raised = w.shield();
    assertThat(raised).isEqualTo(Worker.WAS_INTERRUPTED);
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
    w.unshield(raised);
    assertThat(Thread.interrupted()).isTrue();
  }

  @Test
  void aNestedShieldLeavesTheOuterOneUp() {
    Worker w = onThisThread();
    int outer = w.shield();
    int inner = w.shield();
    assertThat(inner).isEqualTo(Worker.NESTED);
    w.unshield(inner);
    w.interruptToStop();
    assertThat(Thread.currentThread().isInterrupted()).as("still shielded").isFalse();
    w.unshield(outer);
    assertThat(Thread.interrupted()).isTrue();
  }

  @Test
  void withoutAShieldTheInterruptLandsAtOnce() {
    Worker w = onThisThread();
    w.interruptToStop();
    assertThat(Thread.interrupted()).isTrue();
  }

  @Test
  void racingInterruptersNeverReachTheShieldedStretchAndNeverGoMissing() throws Exception {
    // One thread shields and lifts in a loop; two interrupt it in a loop. Inside the shield the
    // flag is never set; every interrupt made while the shield was up shows after it lifts.
    Worker[] holder = new Worker[1];
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong violations = new AtomicLong();
    AtomicLong rounds = new AtomicLong();
    CountDownLatch ready = new CountDownLatch(1);
    Thread worker = new Thread(() -> {
      holder[0] = onThisThread();
      ready.countDown();
      Worker w = holder[0];
      while (!stop.get()) {
        int raised = w.shield();
        for (int i = 0; i < 50; i++) {
          if (Thread.currentThread().isInterrupted()) {
            violations.incrementAndGet();
          }
        }
        w.unshield(raised);
        Thread.interrupted();
        rounds.incrementAndGet();
      }
    });
    worker.start();
    ready.await();
    Runnable interrupter = () -> {
      while (!stop.get()) {
        holder[0].interruptToStop();
      }
    };
    Thread a = new Thread(interrupter);
    Thread b = new Thread(interrupter);
    a.start();
    b.start();
    long end = System.nanoTime() + PoolFixture.stress(Duration.ofMillis(500)).toNanos();
    while (System.nanoTime() < end) {
      Thread.sleep(10);
    }
    stop.set(true);
    a.join();
    b.join();
    worker.join();
    assertThat(rounds.get()).isPositive();
    assertThat(violations.get()).isZero();

    // Never missing: an interrupt made while shielded is there when the shield lifts.
    Worker w = onThisThread();
    for (int i = 0; i < 1_000; i++) {
      int raised = w.shield();
      Thread t = new Thread(w::interruptToStop);
      t.start();
      t.join();
      w.unshield(raised);
      assertThat(Thread.interrupted()).as("round %d", i).isTrue();
    }
  }
}
