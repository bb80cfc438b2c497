package dev.warmpool;

import static dev.warmpool.PoolFixture.await;
import static dev.warmpool.PoolFixture.awaitWaiting;
import static dev.warmpool.PoolFixture.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Subpools (issue 14): per-dependency limits on one pool's warm threads. Two bounds at once, each
 * subpool's own rejection, line, stats and close, the fairness policy across subpools, and every
 * {@link WorkerPool} operation on a subpool.
 */
@Timeout(60)
class SubpoolTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private WorkerPool parent(int capacity, UnaryOperator<WorkerPool.Builder> config) {
    return fixture.pool("sub", b -> config.apply(b.capacity(capacity)
        .maxIdle(Duration.ofMinutes(5))));
  }

  /** Counts tasks running at once and remembers the most. */
  private static final class Probe {
    final AtomicInteger now = new AtomicInteger();
    final AtomicInteger max = new AtomicInteger();

    void enter() {
      max.accumulateAndGet(now.incrementAndGet(), Math::max);
    }

    void exit() {
      now.decrementAndGet();
    }
  }

  @Test
  void twoSubpoolsOnAParentOfSixNeverRunMoreThanThreeFiveAndSix() throws Exception {
    WorkerPool pool = parent(6, b -> b);
    WorkerPool db = pool.newSubpool("db", 3);
    WorkerPool api = pool.newSubpool("api", 5);
    Probe all = new Probe();
    Probe inDb = new Probe();
    Probe inApi = new Probe();
    int perSubpool = 400;
    CountDownLatch done = new CountDownLatch(2 * perSubpool);
    List<String> threadNames = new CopyOnWriteArrayList<>();
    for (int i = 0; i < perSubpool; i++) {
      for (WorkerPool sub : List.of(db, api)) {
        Probe own = sub == db ? inDb : inApi;
        sub.enqueue(() -> {
          all.enter();
          own.enter();
          threadNames.add(Thread.currentThread().getName());
          try {
            Thread.sleep(0, 200_000); // long enough for the tasks to overlap
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } finally {
            own.exit();
            all.exit();
            done.countDown();
          }
        });
      }
    }
    await(done);
    assertThat(inDb.max.get()).as("db at once").isBetween(1, 3);
    assertThat(inApi.max.get()).as("api at once").isBetween(1, 5);
    assertThat(all.max.get()).as("all at once").isBetween(1, 6);
    assertThat(threadNames).as("subpools run on the parent's workers")
        .allMatch(n -> n.startsWith(pool.name() + "-"));
    eventually().untilAsserted(() -> {
      assertThat(db.stats().completed()).isEqualTo(perSubpool);
      assertThat(api.stats().completed()).isEqualTo(perSubpool);
    });
    PoolStats d = db.stats();
    assertThat(d.submitted()).isEqualTo(perSubpool);
    assertThat(d.workersStarted()).as("a subpool starts no threads").isZero();
    assertThat(d.waiting()).isZero();
    assertThat(pool.stats().submitted()).as("the parent counts its subpools' tasks")
        .isEqualTo(2L * perSubpool);
    assertThat(pool.stats().workersStarted()).isLessThanOrEqualTo(6);
  }

  @Test
  void aSaturatedNonblockingSubpoolRejectsWhileTheOtherStillAccepts() {
    WorkerPool pool = parent(6, b -> b.nonblocking(true));
    WorkerPool db = pool.newSubpool("db", 3);
    WorkerPool api = pool.newSubpool("api", 5);
    assertThat(db.isNonblocking()).as("takes the parent's mode").isTrue();
    for (PoolFixture.Gate g : fixture.gates(3)) {
      db.execute(g.task());
      g.awaitArrival();
    }
    assertThatThrownBy(() -> db.execute(() -> { }))
        .isInstanceOf(PoolOverloadedException.class)
        .hasMessageContaining("subpool \"db\"").hasMessageContaining("3 of 3 seats taken");
    assertThat(db.tryExecute(() -> { })).isFalse();
    PoolFixture.Gate apiGate = fixture.occupy(api);
    assertThat(api.tryExecute(() -> { })).as("api still has seats").isTrue();

    PoolStats d = db.stats();
    assertThat(d.rejected()).isEqualTo(2);
    assertThat(d.submitted()).isEqualTo(3);
    assertThat(d.busy()).isEqualTo(3);
    assertThat(pool.stats().rejected()).as("the parent was not full").isZero();
  }

  @Test
  void aNonblockingSubpoolRejectsAtTheCallWhenTheParentIsFull() {
    WorkerPool pool = parent(2, b -> b.nonblocking(true));
    WorkerPool db = pool.newSubpool("db", 5);
    for (PoolFixture.Gate g : fixture.gates(2)) {
      pool.execute(g.task());
      g.awaitArrival();
    }
    AtomicInteger ran = new AtomicInteger();
    assertThatThrownBy(() -> db.execute(ran::incrementAndGet))
        .isInstanceOf(PoolOverloadedException.class)
        .hasMessageContaining("subpool \"db\" of pool \"" + pool.name() + "\"")
        .hasMessageContaining("parent");
    assertThatThrownBy(() -> db.enqueue(ran::incrementAndGet))
        .isInstanceOf(PoolOverloadedException.class);
    assertThat(db.tryExecute(ran::incrementAndGet)).isFalse();
    PoolStats d = db.stats();
    assertThat(d.rejected()).isEqualTo(3);
    assertThat(d.submitted()).isZero();
    assertThat(d.waiting()).as("no seat kept by a rejected task").isZero();
    assertThat(pool.stats().rejected()).as("the parent was full: counted there too").isEqualTo(3);
    assertThat(ran).hasValue(0);
  }

  @Test
  void aBlockingSubpoolLinesUpFifoWithoutHoldingAThread() {
    WorkerPool pool = parent(4, b -> b);
    WorkerPool db = pool.newSubpool("db", 1);
    PoolFixture.Gate gate = fixture.occupy(db);
    List<Integer> order = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 5; i++) {
      int n = i;
      db.enqueue(() -> order.add(n));
    }
    assertThat(db.stats().waiting()).isEqualTo(5);
    assertThat(pool.stats().waiting()).as("the parent's line holds none of them").isZero();
    assertThat(pool.stats().workers()).as("no thread held by the waiting tasks").isEqualTo(1);

    gate.open();
    eventually().untilAsserted(() -> assertThat(order).hasSize(5));
    assertThat(order).containsExactly(0, 1, 2, 3, 4);
  }

  @Test
  void aBlockingSubpoolsExecuteWaitsForItsOwnSeatOnly() {
    WorkerPool pool = parent(1, b -> b);
    WorkerPool db = pool.newSubpool("db", 1);
    PoolFixture.Gate parentGate = fixture.occupy(pool);
    AtomicInteger ran = new AtomicInteger();
    db.execute(ran::incrementAndGet); // the parent is full: the task waits there, admitted
    assertThat(pool.stats().waiting()).isEqualTo(1);
    PoolFixture.Caller<Void> blocked = fixture.call("db-execute", () -> db.execute(ran::incrementAndGet));
    awaitWaiting(db, 2); // one seated in the parent's line, one caller in the subpool's line
    assertThat(blocked.isDone()).isFalse();

    parentGate.open();
    blocked.result();
    eventually().untilAsserted(() -> assertThat(ran).hasValue(2));
  }

  @Test
  void cancelWithdrawsATaskFromTheSubpoolsLineAndFromTheParentsLine() {
    WorkerPool pool = parent(1, b -> b);
    WorkerPool db = pool.newSubpool("db", 2);
    PoolFixture.Gate gate = fixture.occupy(pool);
    AtomicInteger ran = new AtomicInteger();
    TaskHandle seated = db.enqueue(ran::incrementAndGet); // holds a db seat, waits in the parent's line
    TaskHandle second = db.enqueue(ran::incrementAndGet);
    TaskHandle lined = db.enqueue(ran::incrementAndGet); // waits in db's own line
    assertThat(pool.stats().waiting()).isEqualTo(2);
    assertThat(db.stats().waiting()).isEqualTo(3);

    assertThat(lined.cancel()).isTrue();
    assertThat(db.stats().waiting()).isEqualTo(2);
    assertThat(seated.cancel()).isTrue();
    assertThat(seated.cancel()).isFalse();
    assertThat(seated.isCancelled()).isTrue();
    assertThat(pool.stats().waiting()).as("left the parent's line at once").isEqualTo(1);
    assertThat(db.stats().waiting()).isEqualTo(1);
    assertThat(db.stats().submitted()).isEqualTo(1);
    assertThat(pool.stats().submitted()).isEqualTo(2); // the gate and `second`

    gate.open();
    eventually().untilAsserted(() -> assertThat(db.stats().completed()).isEqualTo(1));
    assertThat(ran).hasValue(1);
    assertThat(second.cancel()).as("it ran").isFalse();
    assertThat(db.stats().waiting()).isZero();
  }

  @Test
  void cancellingASubmittedFutureWithdrawsItsTask() throws Exception {
    WorkerPool pool = parent(2, b -> b);
    WorkerPool db = pool.newSubpool("db", 1);
    PoolFixture.Gate gate = fixture.occupy(db);
    Future<String> f = db.submit(() -> "x");
    assertThat(f.cancel(false)).isTrue();
    assertThat(db.stats().waiting()).isZero();
    Future<String> g = db.submit(() -> "y");
    gate.open();
    assertThat(g.get(30, TimeUnit.SECONDS)).isEqualTo("y");
  }

  /**
   * The fairness policy: each subpool holds at most its capacity of places in the parent's FIFO
   * line, and a freed subpool seat sends the subpool's next task to the end of that line. With one
   * worker the order is exact: db (capacity 4) and api (capacity 2) alternate 4 to 2, however long
   * db's own line is.
   */
  @Test
  void subpoolsShareTheParentInProportionToTheirCapacitiesHoweverLongAnotherLineIs() {
    WorkerPool pool = parent(1, b -> b);
    WorkerPool db = pool.newSubpool("db", 4);
    WorkerPool api = pool.newSubpool("api", 2);
    PoolFixture.Gate gate = fixture.occupy(pool);
    List<String> order = Collections.synchronizedList(new ArrayList<>());
    for (int i = 0; i < 40; i++) {
      db.enqueue(() -> order.add("d"));
    }
    for (int i = 0; i < 10; i++) {
      api.enqueue(() -> order.add("a"));
    }
    gate.open();
    eventually().untilAsserted(() -> assertThat(order).hasSize(50));
    String seq = String.join("", order);
    assertThat(seq).startsWith("ddddaadddd" + "aadddd" + "aadddd" + "aadddd" + "aa");
    assertThat(seq.lastIndexOf('a')).as("api done long before db's line").isEqualTo(29);
  }

  @Test
  void shutdownNowOfASubpoolReturnsAndInterruptsOnlyItsOwnWork() throws Exception {
    WorkerPool pool = parent(3, b -> b);
    WorkerPool db = pool.newSubpool("db", 2);
    PoolFixture.Gate parentTask = fixture.occupy(pool);
    PoolFixture.Gate dbRunning = fixture.occupy(db);
    PoolFixture.Gate other = fixture.occupy(pool); // the parent is full now
    Runnable seatedInParent = () -> { };
    Runnable inDbLine = () -> { };
    db.enqueue(seatedInParent);
    db.enqueue(inDbLine);
    assertThat(pool.stats().waiting()).isEqualTo(1);

    List<Runnable> back = db.shutdownNow();
    assertThat(back).containsExactlyInAnyOrder(seatedInParent, inDbLine);
    assertThat(pool.stats().waiting()).as("its place in the parent's line is given up").isZero();
    eventually().untilAsserted(() -> assertThat(dbRunning.wasInterrupted()).isTrue());
    assertThat(db.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    assertThat(parentTask.wasInterrupted()).isFalse();
    assertThat(other.wasInterrupted()).isFalse();
    assertThat(pool.isShutdown()).isFalse();
    assertThatThrownBy(() -> db.execute(() -> { })).isInstanceOf(PoolClosedException.class)
        .hasMessageContaining("subpool \"db\"");

    // the worker that ran the interrupted task is clean for the parent's next task
    parentTask.open();
    other.open();
    AtomicInteger interruptedAfter = new AtomicInteger(-1);
    CountDownLatch ran = new CountDownLatch(3);
    for (int i = 0; i < 3; i++) {
      pool.execute(() -> {
        if (Thread.currentThread().isInterrupted()) {
          interruptedAfter.set(1);
        }
        ran.countDown();
      });
    }
    await(ran);
    assertThat(interruptedAfter).hasValue(-1);
    PoolStats d = db.stats();
    assertThat(d.submitted()).isEqualTo(d.completed() + d.failed() + back.size());
  }

  @Test
  void shuttingDownTheParentClosesItsSubpoolsAndTheyFinishTheirAcceptedWork() throws Exception {
    WorkerPool pool = parent(2, b -> b);
    WorkerPool db = pool.newSubpool("db", 1);
    PoolFixture.Gate gate = fixture.occupy(db);
    AtomicInteger ran = new AtomicInteger();
    db.enqueue(ran::incrementAndGet);
    db.enqueue(ran::incrementAndGet);

    pool.shutdown();
    assertThat(db.isShutdown()).isTrue();
    assertThatThrownBy(() -> db.execute(() -> { })).isInstanceOf(PoolClosedException.class);
    assertThat(pool.awaitTermination(50, TimeUnit.MILLISECONDS))
        .as("the parent waits for its subpool's accepted work").isFalse();
    gate.open();
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    assertThat(db.isTerminated()).isTrue();
    assertThat(ran).hasValue(2);
  }

  @Test
  void shutdownNowOfTheParentReturnsItsSubpoolsTasksToo() throws Exception {
    WorkerPool pool = parent(1, b -> b);
    WorkerPool db = pool.newSubpool("db", 1);
    PoolFixture.Gate gate = fixture.occupy(pool);
    Runnable a = () -> { };
    Runnable b = () -> { };
    Runnable c = () -> { };
    db.enqueue(a); // seated, in the parent's line
    db.enqueue(b); // in db's line
    pool.enqueue(c);
    assertThat(pool.shutdownNow()).containsExactlyInAnyOrder(a, b, c);
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    assertThat(db.isTerminated()).isTrue();
    PoolStats d = db.stats();
    assertThat(d.submitted()).isEqualTo(2);
    assertThat(d.completed()).isZero();
  }

  @Test
  void countsFailuresInTheSubpoolAndTheParentAndUsesTheParentsFailureHandler() {
    List<Throwable> handled = new CopyOnWriteArrayList<>();
    WorkerPool pool = parent(3, b -> b.failureHandler((t, e) -> handled.add(e)));
    WorkerPool db = pool.newSubpool("db", 2);
    for (int i = 0; i < 30; i++) {
      int n = i;
      db.execute(() -> {
        if (n % 3 == 0) {
          throw new IllegalStateException("boom " + n);
        }
      });
    }
    eventually().untilAsserted(() -> assertThat(db.stats().completed() + db.stats().failed())
        .isEqualTo(30));
    PoolStats d = db.stats();
    assertThat(d.failed()).isEqualTo(10);
    assertThat(d.completed()).isEqualTo(20);
    assertThat(d.submitted()).isEqualTo(30);
    assertThat(handled).hasSize(10);
    PoolStats p = pool.stats();
    assertThat(p.failed()).isEqualTo(10);
    assertThat(p.completed()).isEqualTo(20);
  }

  @Test
  void serialLanesAndTimersWorkOnASubpool() throws Exception {
    WorkerPool pool = parent(4, b -> b);
    WorkerPool db = pool.newSubpool("db", 2);
    List<Integer> order = new CopyOnWriteArrayList<>();
    CountDownLatch laneDone = new CountDownLatch(200);
    try (SerialExecutor lane = db.newSerialExecutor()) {
      for (int i = 0; i < 200; i++) {
        int n = i;
        lane.execute(() -> {
          order.add(n);
          laneDone.countDown();
        });
      }
      await(laneDone);
    }
    for (int i = 0; i < 200; i++) {
      assertThat(order.get(i)).isEqualTo(i);
    }
    CountDownLatch fired = new CountDownLatch(1);
    db.schedule(fired::countDown, 5, TimeUnit.MILLISECONDS);
    await(fired);
    CountDownLatch ticks = new CountDownLatch(3);
    ScheduledFuture<?> periodic = db.scheduleAtFixedRate(ticks::countDown, 1, 1, TimeUnit.MILLISECONDS);
    await(ticks);
    periodic.cancel(false);
    eventually().untilAsserted(() -> {
      PoolStats d = db.stats();
      assertThat(d.completed()).isGreaterThanOrEqualTo(204);
      assertThat(d.submitted()).isEqualTo(d.completed());
    });
  }

  @Test
  void aPendingTimerOfASubpoolIsCancelledWhenTheSubpoolShutsDown() {
    WorkerPool pool = parent(2, b -> b);
    WorkerPool db = pool.newSubpool("db", 1);
    ScheduledFuture<?> timer = db.schedule(() -> { }, 1, TimeUnit.HOURS);
    db.shutdown();
    assertThat(timer.isCancelled()).isTrue();
    assertThat(db.isTerminated()).isTrue();
    assertThat(pool.isShutdown()).isFalse();
  }

  @Test
  void growingASubpoolServesItsLineAndRebootReopensIt() throws Exception {
    WorkerPool pool = parent(4, b -> b);
    WorkerPool db = pool.newSubpool("db", 1);
    List<PoolFixture.Gate> gates = fixture.gates(3);
    for (PoolFixture.Gate g : gates) {
      db.enqueue(g.task());
    }
    gates.get(0).awaitArrival();
    assertThat(db.stats().waiting()).isEqualTo(2);
    db.resize(3);
    assertThat(db.capacity()).isEqualTo(3);
    gates.get(1).awaitArrival();
    gates.get(2).awaitArrival();
    assertThat(db.stats().busy()).isEqualTo(3);
    gates.forEach(PoolFixture.Gate::open);

    db.close();
    assertThat(db.isTerminated()).isTrue();
    db.reboot();
    CountDownLatch ran = new CountDownLatch(1);
    db.execute(ran::countDown);
    await(ran);
    pool.close();
    assertThat(db.isTerminated()).as("the parent's close closed the rebooted subpool").isTrue();
    assertThatThrownBy(db::reboot).isInstanceOf(PoolClosedException.class);
  }

  @Test
  void timedTryExecuteGivesUpWhenTheSubpoolStaysFull() throws Exception {
    WorkerPool pool = parent(3, b -> b);
    WorkerPool db = pool.newSubpool("db", 1);
    PoolFixture.Gate gate = fixture.occupy(db);
    assertThat(db.tryExecute(() -> { }, Duration.ofMillis(20))).isFalse();
    assertThat(db.stats().rejected()).isEqualTo(1);
    assertThat(db.stats().waiting()).isZero();
  }

  @Test
  void aSubpoolOfASubpoolIsBoundedByBoth() {
    WorkerPool pool = parent(4, b -> b.nonblocking(true));
    WorkerPool db = pool.newSubpool("db", 2);
    WorkerPool reports = db.newSubpool("reports", 3);
    for (PoolFixture.Gate g : fixture.gates(2)) {
      reports.execute(g.task());
      g.awaitArrival();
    }
    assertThatThrownBy(() -> reports.execute(() -> { }))
        .isInstanceOf(PoolOverloadedException.class)
        .hasMessageContaining("subpool \"reports\" of subpool \"db\"");
    assertThat(db.stats().busy()).isEqualTo(2);
    assertThat(pool.stats().busy()).isEqualTo(2);
  }

  /**
   * A parent's shutdown closes every subpool, also one made or rebooted while it closes the others
   * (here from a cancelled timer's callback, which runs inside that sweep): otherwise the subpool
   * stays open on a shut-down parent, which then never terminates.
   */
  @Test
  void aSubpoolMadeWhileTheParentShutsDownIsClosedWithIt_guarantee9() throws Exception {
    WorkerPool pool = parent(2, b -> b);
    WorkerPool timers = pool.newSubpool("timers", 1);
    List<WorkerPool> late = new CopyOnWriteArrayList<>();
    timers.schedule(new CancellationAware() {
      @Override
      public void run() { }

      @Override
      public void onCancel() {
        late.add(pool.newSubpool("late", 1)); // the parent is still open: no exception
      }
    }, 1, TimeUnit.HOURS);
    pool.shutdown();
    assertThat(late).hasSize(1);
    assertThat(late.get(0).isShutdown()).as("closed with its parent").isTrue();
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).as("parent terminated").isTrue();
    assertThat(late.get(0).isTerminated()).isTrue();
  }

  @Test
  void aSubpoolRebootedWhileTheParentShutsDownIsClosedWithIt_guarantee9() throws Exception {
    WorkerPool pool = parent(2, b -> b);
    WorkerPool db = pool.newSubpool("db", 1);
    db.shutdown();
    assertThat(db.isTerminated()).isTrue();
    WorkerPool timers = pool.newSubpool("timers", 1);
    timers.schedule(new CancellationAware() {
      @Override
      public void run() { }

      @Override
      public void onCancel() {
        db.reboot(); // the parent is still open: no exception
      }
    }, 1, TimeUnit.HOURS);
    pool.shutdown();
    assertThat(db.isShutdown()).as("closed with its parent").isTrue();
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).as("parent terminated").isTrue();
    assertThat(db.isTerminated()).isTrue();
  }

  @Test
  void badInputNamesTheParameter() {
    WorkerPool pool = parent(2, b -> b);
    assertThatThrownBy(() -> pool.newSubpool(null, 1)).isInstanceOf(NullPointerException.class)
        .hasMessageContaining("name");
    assertThatThrownBy(() -> pool.newSubpool("x", 0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("capacity").hasMessageContaining("0");
    assertThatThrownBy(() -> pool.newSubpool("x", 1, false, -1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxWaiting");
    WorkerPool db = pool.newSubpool("db", 1, true, 0);
    assertThat(db.isNonblocking()).isTrue();
    assertThat(db.name()).isEqualTo("db");
    assertThat(db.maxIdle()).isEqualTo(pool.maxIdle());
    assertThatThrownBy(() -> db.resize(0)).isInstanceOf(IllegalArgumentException.class);
    pool.shutdown();
    assertThatThrownBy(() -> pool.newSubpool("late", 1)).isInstanceOf(PoolClosedException.class);
    ShardedPool sharded = ShardedPool.of(2, ShardedPool.Placement.ROUND_ROBIN,
        WorkerPool.builder().capacity(1));
    fixture.track(sharded);
    assertThatThrownBy(() -> sharded.newSubpool("x", 1))
        .isInstanceOf(UnsupportedOperationException.class);
  }
}
