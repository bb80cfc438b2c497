package dev.warmpool.rxjava3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.schedulers.Schedulers;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Issue 12: one line makes {@code Schedulers.io()} warmpool-backed, and it can be reset. */
class InstallAsIoTest {
  private final WorkerPool pool = WorkerPool.builder().name("rx-io").capacity(4).build();

  @AfterEach
  void reset() {
    PoolSchedulers.resetIo();
    pool.shutdownNow();
  }

  private static boolean onAWarmpoolWorker() {
    return Arrays.stream(Thread.currentThread().getStackTrace())
        .anyMatch(f -> f.getClassName().equals("dev.warmpool.Worker"));
  }

  @Test
  void ioRunsOnThePoolAfterInstallAndOnRxJavasOwnAfterReset() {
    PoolSchedulers.installAsIo(pool);
    assertThat(Single.fromCallable(InstallAsIoTest::onAWarmpoolWorker)
        .subscribeOn(Schedulers.io()).blockingGet()).as("io() on the pool").isTrue();
    assertThat(Single.fromCallable(() -> Thread.currentThread().getName())
        .subscribeOn(Schedulers.io()).blockingGet()).startsWith("rx-io-");
    // blockingGet returns when the value is delivered, inside the task: the pool counts the task
    // as completed only after it returned
    await().until(() -> pool.stats().completed() == 2);

    PoolSchedulers.resetIo();
    assertThat(Single.fromCallable(InstallAsIoTest::onAWarmpoolWorker)
        .subscribeOn(Schedulers.io()).blockingGet()).as("io() after reset").isFalse();
  }
}
