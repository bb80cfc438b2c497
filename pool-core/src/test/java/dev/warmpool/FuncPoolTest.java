package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class FuncPoolTest {

  @Test
  void invokeRunsTheBoundFunctionWithEachArgument() throws Exception {
    try (WorkerPool pool = WorkerPool.builder().name("func").capacity(4).build()) {
      AtomicLong sum = new AtomicLong();
      CountDownLatch done = new CountDownLatch(1000);
      FuncPool<Integer> f = FuncPool.of(pool, (Integer i) -> {
        sum.addAndGet(i);
        done.countDown();
      });
      for (int i = 1; i <= 1000; i++) {
        f.invoke(i);
      }
      assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
      assertThat(sum).hasValue(500_500);
      assertThat(f.pool()).isSameAs(pool);
      await().until(() -> pool.stats().completed() == 1000);
      assertThat(pool.stats().submitted()).isEqualTo(1000);
    }
  }

  @Test
  void invokeFollowsThePoolsRejectionRules() throws Exception {
    try (WorkerPool pool = WorkerPool.builder().name("func-full").capacity(1).nonblocking(true).build()) {
      CountDownLatch release = new CountDownLatch(1);
      FuncPool<CountDownLatch> f = FuncPool.of(pool, SerialLaneTest::block);
      f.invoke(release);
      assertThatThrownBy(() -> f.invoke(release)).isInstanceOf(PoolOverloadedException.class)
          .hasMessageContaining("func-full");
      assertThat(f.tryInvoke(release)).isFalse();
      release.countDown();
    }
  }

  @Test
  void nullsAreRejectedWithTheParameterName() {
    try (WorkerPool pool = WorkerPool.builder().build()) {
      assertThatThrownBy(() -> FuncPool.of(pool, null)).isInstanceOf(NullPointerException.class)
          .hasMessageContaining("function");
      assertThatThrownBy(() -> FuncPool.of(null, x -> {})).isInstanceOf(NullPointerException.class)
          .hasMessageContaining("pool");
      FuncPool<String> f = FuncPool.of(pool, s -> {});
      assertThatThrownBy(() -> f.invoke(null)).isInstanceOf(NullPointerException.class)
          .hasMessageContaining("arg");
    }
  }
}
