package dev.warmpool.spring;

import static dev.warmpool.spring.Runners.warmpool;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@code warmpool.pools.<name>.parent}: the entry is a subpool of that pool (DESIGN section 5). */
class SubpoolPropertiesTest {

  @Test
  void parentMakesTheEntryASubpoolThatRunsOnItsParentsWorkers() {
    warmpool().withPropertyValues("warmpool.pools.app.capacity=4", "warmpool.pools.db.parent=app",
        "warmpool.pools.db.capacity=2").run(context -> {
          assertThat(context).hasNotFailed();
          WorkerPool db = context.getBean("db", WorkerPool.class);
          WorkerPool app = context.getBean("app", WorkerPool.class);
          assertThat(db.name()).isEqualTo("db");
          assertThat(db.capacity()).isEqualTo(2);
          AtomicReference<String> thread = new AtomicReference<>();
          db.submit(() -> thread.set(Thread.currentThread().getName())).get(5, TimeUnit.SECONDS);
          assertThat(thread.get()).startsWith("app-");
          assertThat(app.stats().submitted()).isEqualTo(1);
        });
  }

  @Test
  void aSubpoolBoundsItsOwnWorkAndRejectsOnItsOwnWhenNonblocking() {
    warmpool().withPropertyValues("warmpool.pools.app.capacity=4", "warmpool.pools.db.parent=app",
        "warmpool.pools.db.capacity=1", "warmpool.pools.db.nonblocking=true").run(context -> {
          WorkerPool db = context.getBean("db", WorkerPool.class);
          WorkerPool app = context.getBean("app", WorkerPool.class);
          CountDownLatch release = new CountDownLatch(1);
          db.execute(() -> Runners.block(release));
          assertThatThrownBy(() -> db.execute(() -> {})).isInstanceOf(PoolOverloadedException.class);
          // the parent still has seats: the bulkhead is the subpool's own
          app.submit(() -> {}).get(5, TimeUnit.SECONDS);
          release.countDown();
        });
  }

  @Test
  void aSubpoolTakesItsParentsModeWhenItSetsNone() {
    warmpool().withPropertyValues("warmpool.pools.http.capacity=4", "warmpool.pools.http.nonblocking=true",
        "warmpool.pools.api.parent=http", "warmpool.pools.api.capacity=1").run(context -> {
          WorkerPool api = context.getBean("api", WorkerPool.class);
          CountDownLatch release = new CountDownLatch(1);
          api.execute(() -> Runners.block(release));
          assertThatThrownBy(() -> api.enqueue(() -> {})).isInstanceOf(PoolOverloadedException.class);
          release.countDown();
        });
  }

  @Test
  void aBlockingSubpoolsMaxWaitingBoundsItsLine() {
    warmpool().withPropertyValues("warmpool.pools.app.capacity=4", "warmpool.pools.db.parent=app",
        "warmpool.pools.db.capacity=1", "warmpool.pools.db.max-waiting=1").run(context -> {
          WorkerPool db = context.getBean("db", WorkerPool.class);
          CountDownLatch release = new CountDownLatch(1);
          db.execute(() -> Runners.block(release));
          db.enqueue(() -> {});
          assertThatThrownBy(() -> db.enqueue(() -> {})).isInstanceOf(PoolOverloadedException.class);
          release.countDown();
        });
  }

  @Test
  void aSubpoolOfASubpoolWorks() {
    warmpool().withPropertyValues("warmpool.pools.app.capacity=4", "warmpool.pools.io.parent=app",
        "warmpool.pools.io.capacity=3", "warmpool.pools.db.parent=io", "warmpool.pools.db.capacity=2")
        .run(context -> {
          assertThat(context).hasNotFailed();
          WorkerPool db = context.getBean("db", WorkerPool.class);
          db.submit(() -> {}).get(5, TimeUnit.SECONDS);
          assertThat(context.getBean("io", WorkerPool.class).stats().submitted()).isEqualTo(1);
        });
  }

  @Test
  void aSubpoolClosesWithTheContextBeforeItsParent() {
    AtomicReference<WorkerPool> db = new AtomicReference<>();
    AtomicReference<WorkerPool> app = new AtomicReference<>();
    warmpool().withPropertyValues("warmpool.pools.db.parent=app", "warmpool.pools.db.capacity=2",
        "warmpool.pools.app.capacity=4").run(context -> {
          db.set(context.getBean("db", WorkerPool.class));
          app.set(context.getBean("app", WorkerPool.class));
        });
    assertThat(db.get().isTerminated()).isTrue();
    assertThat(app.get().isTerminated()).isTrue();
  }
}
