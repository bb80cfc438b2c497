package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Every rejection names the pool that refused in {@code poolName()}, so a web layer can answer 503
 * with the pool's name without parsing the message (DESIGN section 6, "Overload is 503").
 */
class RejectionPoolNameTest {

  @Test
  void overloadAndLineFullAndLineDeadlineNameThePool() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    try (WorkerPool nonblocking = WorkerPool.builder().name("nb").capacity(1).nonblocking(true).build();
        WorkerPool blocking = WorkerPool.builder().name("bl").capacity(1).maxWaiting(0).build();
        WorkerPool deadline = WorkerPool.builder().name("dl").capacity(1)
            .maxWaitInLine(Duration.ofMillis(20)).build()) {
      nonblocking.execute(() -> await(release));
      PoolOverloadedException full = catchThrowableOfType(PoolOverloadedException.class,
          () -> nonblocking.execute(() -> {}));
      assertThat(full.poolName()).isEqualTo("nb");

      blocking.execute(() -> await(release));
      PoolOverloadedException lineFull = catchThrowableOfType(PoolOverloadedException.class,
          () -> blocking.enqueue(() -> {}));
      assertThat(lineFull.poolName()).isEqualTo("bl");
      deadline.execute(() -> await(release));
      Future<?> expires = deadline.submit(() -> {});
      ExecutionException expired = catchThrowableOfType(ExecutionException.class,
          () -> expires.get(10, TimeUnit.SECONDS));
      assertThat(expired.getCause()).isInstanceOf(PoolOverloadedException.class);
      assertThat(((PoolOverloadedException) expired.getCause()).poolName()).isEqualTo("dl");
      release.countDown();
    } finally {
      release.countDown();
    }
  }

  @Test
  void aSubpoolsRejectionNamesTheSubpoolAndAClosedPoolNamesItself() {
    CountDownLatch release = new CountDownLatch(1);
    try (WorkerPool parent = WorkerPool.builder().name("parent").capacity(4).nonblocking(true).build()) {
      WorkerPool db = parent.newSubpool("db", 1);
      db.execute(() -> await(release));
      PoolOverloadedException full = catchThrowableOfType(PoolOverloadedException.class,
          () -> db.execute(() -> {}));
      assertThat(full.poolName()).isEqualTo("db");
      release.countDown();
      parent.shutdown();
      assertThatThrownBy(() -> parent.execute(() -> {})).isInstanceOfSatisfying(
          PoolClosedException.class, closed -> assertThat(closed.poolName()).isEqualTo("parent"));
    } finally {
      release.countDown();
    }
  }

  @Test
  void anExceptionMadeWithoutANameHasNone() {
    assertThat(new PoolOverloadedException("m").poolName()).isNull();
    assertThat(new PoolClosedException("m").poolName()).isNull();
    assertThat(new PoolClosedException("p", "m").poolName()).isEqualTo("p");
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
