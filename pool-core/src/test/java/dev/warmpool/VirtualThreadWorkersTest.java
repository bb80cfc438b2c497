package dev.warmpool;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

/**
 * {@code Builder.virtualThreads(true)}: on Java 21+ the same bound, line and rejections with virtual
 * workers; on Java 17 to 20 {@code build()} fails naming the JDK it needs. The build runs this class
 * on Java 17 (surefire's default run) and again on Java 25 when that JDK is installed (the
 * {@code jdk25} profile in pool-core's POM), so both branches are exercised.
 */
@Tag("virtual-threads")
@Timeout(60)
class VirtualThreadWorkersTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  @Test
  @EnabledForJreRange(max = JRE.JAVA_20)
  void buildFailsBeforeJava21WithAMessageNamingTheJdkItNeeds() {
    WorkerPool.Builder builder = WorkerPool.builder().name("v").virtualThreads(true);

    assertThatThrownBy(builder::build)
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("virtualThreads(true) needs JDK 21 or newer")
        .hasMessageContaining("Java " + Runtime.version().feature());
  }

  @Test
  void virtualThreadsAndAThreadFactoryAreExclusive() {
    WorkerPool.Builder builder = WorkerPool.builder().virtualThreads(true)
        .threadFactory(Executors.defaultThreadFactory());

    assertThatThrownBy(builder::build).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("virtualThreads(true)").hasMessageContaining("threadFactory");
  }

  @Test
  @EnabledForJreRange(min = JRE.JAVA_21)
  void workersAreVirtualThreadsNamedAfterThePool() throws Exception {
    WorkerPool pool = fixture.pool("virtual", b -> b.capacity(2).virtualThreads(true));
    PoolFixture.Gate a = fixture.gate();
    PoolFixture.Gate b = fixture.gate();
    pool.execute(a.task());
    pool.execute(b.task());

    assertThat(isVirtual(a.awaitArrival())).isTrue();
    assertThat(isVirtual(b.awaitArrival())).isTrue();
    assertThat(a.thread().getName()).startsWith(pool.name() + "-");
    assertThat(b.thread().getName()).startsWith(pool.name() + "-").isNotEqualTo(a.thread().getName());
  }

  @Test
  @EnabledForJreRange(min = JRE.JAVA_21)
  void nonblockingPoolOfVirtualWorkersRejectsWhenEverySeatIsTaken() {
    WorkerPool pool = fixture.pool("virtual-nb", b -> b.capacity(2).nonblocking(true).virtualThreads(true));
    PoolFixture.Gate a = fixture.gate();
    PoolFixture.Gate b = fixture.gate();
    pool.execute(a.task());
    pool.execute(b.task());
    a.awaitArrival();
    b.awaitArrival();

    assertThatThrownBy(() -> pool.execute(() -> { })).isInstanceOf(PoolOverloadedException.class);
    assertThat(pool.tryExecute(() -> { })).isFalse();
    PoolStats s = pool.stats();
    assertThat(s.busy()).isEqualTo(2);
    assertThat(s.workers()).isEqualTo(2);
    assertThat(s.rejected()).isEqualTo(2);
  }

  @Test
  @EnabledForJreRange(min = JRE.JAVA_21)
  void blockingPoolOfVirtualWorkersKeepsTheBoundAndServesItsLine() throws Exception {
    WorkerPool pool = fixture.pool("virtual-line", b -> b.capacity(1).maxWaiting(1).virtualThreads(true));
    PoolFixture.Gate a = fixture.occupy(pool);
    CountDownLatch lineTaskRan = new CountDownLatch(1);
    pool.enqueue(lineTaskRan::countDown);

    assertThat(pool.stats().waiting()).isEqualTo(1);
    assertThatThrownBy(() -> pool.enqueue(() -> { })).isInstanceOf(PoolOverloadedException.class);
    assertThat(lineTaskRan.getCount()).as("bound of one: the line task waits").isEqualTo(1);

    a.open();
    assertThat(lineTaskRan.await(10, SECONDS)).isTrue();
    pool.shutdown();
    assertThat(pool.awaitTermination(10, SECONDS)).isTrue();
    PoolStats s = pool.stats();
    assertThat(s.completed()).isEqualTo(2);
    assertThat(s.workersStarted()).isEqualTo(1);
    assertThat(s.workers()).isZero();
  }

  /** {@code Thread.isVirtual()} is Java 21 API; this test class is compiled for 17. */
  private static boolean isVirtual(Thread t) throws Exception {
    return (boolean) Thread.class.getMethod("isVirtual").invoke(t);
  }
}
