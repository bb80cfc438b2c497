package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The builder's documented defaults, and what each setting does to the pool and its threads. */
@Timeout(60) // seconds per test: a hang fails the test instead of stalling the build
class BuilderTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  @Test
  void defaultsAreTheDocumentedOnes() {
    WorkerPool pool = fixture.track(WorkerPool.builder().build());

    assertThat(pool.name()).isEqualTo("warmpool");
    assertThat(pool.capacity()).isEqualTo(10 * Runtime.getRuntime().availableProcessors());
    assertThat(pool.maxIdle()).isEqualTo(Duration.ofSeconds(60));
    assertThat(pool.isNonblocking()).isFalse();
    assertThat(pool.isShutdown()).isFalse();
    assertThat(pool.stats().workers()).as("no thread before the first task").isZero();
  }

  @Test
  void workerThreadsAreNamedAfterThePoolAndAreDaemonsByDefault() {
    WorkerPool pool = fixture.pool("named", b -> b.capacity(2));
    PoolFixture.Gate a = fixture.gate();
    PoolFixture.Gate b = fixture.gate();
    pool.execute(a.task());
    pool.execute(b.task());

    assertThat(a.awaitArrival().getName()).isEqualTo(pool.name() + "-1");
    assertThat(b.awaitArrival().getName()).isEqualTo(pool.name() + "-2");
    assertThat(a.thread().isDaemon()).isTrue();
  }

  @Test
  void daemonFalseMakesNonDaemonWorkers() {
    WorkerPool pool = fixture.pool("nondaemon", b -> b.capacity(1).daemon(false));
    PoolFixture.Gate g = fixture.gate();
    g.open();
    pool.execute(g.task());
    assertThat(g.awaitArrival().isDaemon()).isFalse();
  }

  @Test
  void settingsAreReflectedByThePool() {
    WorkerPool pool = fixture.track(WorkerPool.builder().name("io").capacity(64)
        .maxIdle(Duration.ofSeconds(10)).nonblocking(true).build());

    assertThat(pool.name()).isEqualTo("io");
    assertThat(pool.capacity()).isEqualTo(64);
    assertThat(pool.maxIdle()).isEqualTo(Duration.ofSeconds(10));
    assertThat(pool.isNonblocking()).isTrue();
    assertThat(pool.stats().capacity()).isEqualTo(64);
    assertThat(pool).hasToString("workerPool(\"io\",capacity=64,maxIdle=10s)");
  }
}
