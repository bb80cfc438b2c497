package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Guarantee 6: a serial lane is one unit. A due timer that entered the lane admitted it, so the
 * lane's later tasks wait their turn on a full nonblocking pool instead of being rejected (issue
 * 21 fault 2: a Reactor or RxJava worker that ran a delayed task had its next task rejected).
 */
@Timeout(60)
class LaneAdmissionTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  @Test
  void aLaneAdmittedByItsDueTimerIsNotRejectedForLoadLater_guarantee6() throws Exception {
    WorkerPool pool = fixture.track(WorkerPool.builder().name(PoolFixture.uniqueName("lane-admit"))
        .capacity(1).nonblocking(true).maxIdle(Duration.ofHours(1)).build());
    SerialExecutor lane = pool.newSerialExecutor();
    CountDownLatch timerRan = new CountDownLatch(1);
    lane.schedule(timerRan::countDown, 1, TimeUnit.MILLISECONDS);
    PoolFixture.await(timerRan);
    // The lane's carrier gives its seat back just after the task ran: wait for it, or the
    // occupying task below would find the nonblocking pool full.
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10), () -> pool.stats().busy() == 0))
        .isTrue();
    PoolFixture.Gate gate = fixture.occupy(pool); // the pool is full now
    CountDownLatch later = new CountDownLatch(1);
    lane.execute(later::countDown); // must wait its turn: the lane was admitted by its timer
    assertThat(pool.stats().rejected()).isZero();
    gate.open();
    PoolFixture.await(later);
  }
}
