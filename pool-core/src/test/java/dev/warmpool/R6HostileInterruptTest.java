package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review r6: a hostile thread factory against shutdownNow's interrupt ({@code
 * ThreadStarter.interruptAll}, {@code Worker.interruptToStop}). {@link Thread#interrupt()} may throw
 * {@link SecurityException} by contract (a thread whose access check fails); a factory's thread
 * subclass can also throw from it. {@code ThreadPoolExecutor.interruptIfStarted} ignores a
 * {@code SecurityException} and goes on. Guarantee 4 (nothing is dropped silently, also when a
 * ThreadFactory misbehaves) and 11 (a misbehaving factory costs at most the task that needed the
 * thread).
 */
@Timeout(60)
class R6HostileInterruptTest {
  private static final Duration HOUR = Duration.ofHours(1);
  @AutoClose final PoolFixture fixture = new PoolFixture();

  /**
   * The line's tasks are taken out of the line (HANDED_BACK) by shutdownNow before it interrupts the
   * workers; the interrupt throws, shutdownNow throws, and the list that held them is lost: two
   * accepted tasks neither run nor come back, and their handles read done.
   */
  @Test
  void guarantee4_shutdownNowHandsBackTheLineEvenIfAWorkersInterruptThrows() throws Exception {
    WorkerPool pool = fixture.pool("r6hostile", b -> b.capacity(1).maxIdle(HOUR)
        .threadFactory(r -> {
          Thread t = new Thread(r) {
            @Override
            public void interrupt() {
              throw new SecurityException("r6: no access");
            }
          };
          t.setDaemon(true);
          return t;
        }));
    PoolFixture.Gate gate = fixture.occupy(pool);
    gate.awaitArrival();
    Runnable a = () -> { };
    Runnable b = () -> { };
    TaskHandle ha = pool.enqueue(a);
    TaskHandle hb = pool.enqueue(b);
    List<Runnable> back = new ArrayList<>();
    Throwable thrown = null;
    try {
      back.addAll(pool.shutdownNow());
    } catch (RuntimeException e) {
      thrown = e;
    }
    gate.open();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ha.isDone() && hb.isDone()).isTrue();
    assertThat(back).as("shutdownNow threw %s", String.valueOf(thrown)).containsExactly(a, b);
    PoolStats s = pool.stats();
    assertThat(s.submitted()).as("%s", s).isEqualTo(s.completed() + s.failed() + back.size());
  }
}
