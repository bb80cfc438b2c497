package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Guarantee 8 (version 3) in core: a task that throws counts in {@code failed} whatever its door;
 * a {@link FailureAware} task reports its own failure (an adapter's, to its ecosystem's hook)
 * exactly once, unless a failure handler was set on the builder, which then sees every failure.
 */
@Timeout(60)
class FailureRoutingTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  /** A task that throws and reports to its own list, like an adapter's task. */
  private static final class Reporting implements FailureAware {
    final List<Throwable> reported;
    final CountDownLatch ran;

    Reporting(List<Throwable> reported, CountDownLatch ran) {
      this.reported = reported;
      this.ran = ran;
    }

    @Override
    public void run() {
      ran.countDown();
      throw new IllegalStateException("boom");
    }

    @Override
    public void onFailure(Throwable failure) {
      reported.add(failure);
    }
  }

  @Test
  void aFailureAwareTaskReportsItsOwnFailureOnceAtEveryDoor() throws Exception {
    List<Throwable> uncaught = new CopyOnWriteArrayList<>();
    WorkerPool pool = fixture.track(WorkerPool.builder().name(PoolFixture.uniqueName("fail-aware"))
        .capacity(2).threadFactory(r -> {
          Thread t = new Thread(r);
          t.setDaemon(true);
          t.setUncaughtExceptionHandler((th, e) -> uncaught.add(e));
          return t;
        }).build());
    List<Throwable> reported = new CopyOnWriteArrayList<>();
    CountDownLatch ran = new CountDownLatch(4);
    pool.execute(new Reporting(reported, ran));
    pool.newSerialExecutor().execute(new Reporting(reported, ran));
    pool.schedule(new Reporting(reported, ran), 1, TimeUnit.MILLISECONDS);
    pool.newSubpool("sub", 1).execute(new Reporting(reported, ran));
    PoolFixture.await(ran);
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10),
        () -> pool.stats().failed() == 4 && reported.size() == 4)).isTrue();
    assertThat(uncaught).as("reported once, by the task, not also to the default").isEmpty();
  }

  @Test
  void aPeriodicFailureAwareTaskReportsOnceAndStops() throws Exception {
    WorkerPool pool = fixture.track(WorkerPool.builder().name(PoolFixture.uniqueName("fail-period"))
        .capacity(1).build());
    List<Throwable> reported = new CopyOnWriteArrayList<>();
    CountDownLatch ran = new CountDownLatch(1);
    ScheduledFuture<?> f = pool.scheduleAtFixedRate(new Reporting(reported, ran), 0, 1,
        TimeUnit.MILLISECONDS);
    PoolFixture.await(ran);
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10), f::isDone)).isTrue();
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10), () -> reported.size() == 1)).isTrue();
    assertThat(pool.stats().failed()).isEqualTo(1);
  }

  @Test
  void anExplicitFailureHandlerSeesEveryFailureAdapterTasksIncluded() throws Exception {
    List<Throwable> handled = new CopyOnWriteArrayList<>();
    WorkerPool pool = fixture.track(WorkerPool.builder().name(PoolFixture.uniqueName("fail-handler"))
        .capacity(2).failureHandler((t, e) -> handled.add(e)).build());
    List<Throwable> reported = new CopyOnWriteArrayList<>();
    CountDownLatch ran = new CountDownLatch(3);
    pool.execute(new Reporting(reported, ran));
    pool.schedule(new Reporting(reported, ran), 1, TimeUnit.MILLISECONDS);
    pool.newSubpool("sub", 1).execute(new Reporting(reported, ran));
    PoolFixture.await(ran);
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10), () -> handled.size() == 3)).isTrue();
    assertThat(reported).as("the handler replaces the task's own report").isEmpty();
    assertThat(pool.stats().failed()).isEqualTo(3);
  }
}
