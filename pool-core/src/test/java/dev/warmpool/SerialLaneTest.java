package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SerialLaneTest {
  private final List<WorkerPool> pools = new ArrayList<>();

  private WorkerPool pool(WorkerPool.Builder b) {
    WorkerPool p = b.build();
    pools.add(p);
    return p;
  }

  @AfterEach
  void closePools() {
    pools.forEach(WorkerPool::close);
  }

  @Test
  void tasksFromEightThreadsNeverOverlapAndKeepPerThreadOrder() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("lane").capacity(8));
    SerialExecutor lane = p.newSerialExecutor();
    AtomicInteger running = new AtomicInteger();
    AtomicBoolean overlapped = new AtomicBoolean();
    ConcurrentLinkedQueue<int[]> order = new ConcurrentLinkedQueue<>();
    int threads = 8;
    int perThread = 1000;
    CountDownLatch done = new CountDownLatch(threads * perThread);
    List<Thread> submitters = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int id = t;
      submitters.add(new Thread(() -> {
        for (int i = 0; i < perThread; i++) {
          int seq = i;
          lane.execute(() -> {
            if (running.incrementAndGet() != 1) {
              overlapped.set(true);
            }
            order.add(new int[] {id, seq});
            running.decrementAndGet();
            done.countDown();
          });
        }
      }));
    }
    submitters.forEach(Thread::start);
    assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(overlapped).isFalse();
    int[] last = new int[threads];
    java.util.Arrays.fill(last, -1);
    for (int[] e : order) {
      assertThat(e[1]).as("thread %d order", e[0]).isEqualTo(last[e[0]] + 1);
      last[e[0]] = e[1];
    }
    assertThat(order).hasSize(threads * perThread);
  }

  @Test
  void idleLanesHoldNoThreads() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("idle-lanes").capacity(4)
        .maxIdle(Duration.ofMillis(100)));
    List<SerialExecutor> lanes = new ArrayList<>();
    CountDownLatch ran = new CountDownLatch(10_000);
    for (int i = 0; i < 10_000; i++) {
      SerialExecutor lane = p.newSerialExecutor();
      lanes.add(lane);
      lane.execute(ran::countDown);
    }
    assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> p.stats().workers() == 0);
    assertThat(lanes).hasSize(10_000); // all still reachable, none holds a worker
    assertThat(p.stats().workersStarted()).isLessThanOrEqualTo(4);
  }

  @Test
  void closingALaneCancelsItsPendingTasksAndNothingElse() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("dispose").capacity(2));
    SerialExecutor a = p.newSerialExecutor();
    SerialExecutor b = p.newSerialExecutor();
    CountDownLatch blockA = new CountDownLatch(1);
    CountDownLatch aStarted = new CountDownLatch(1);
    AtomicInteger aRan = new AtomicInteger();
    AtomicInteger bRan = new AtomicInteger();
    a.execute(() -> {
      aStarted.countDown();
      block(blockA);
    });
    assertThat(aStarted.await(5, TimeUnit.SECONDS)).isTrue();
    for (int i = 0; i < 100; i++) {
      a.execute(aRan::incrementAndGet);
      b.execute(bRan::incrementAndGet);
    }
    ScheduledFuture<?> delayed = a.schedule(aRan::incrementAndGet, 1, TimeUnit.DAYS);
    a.close();
    blockA.countDown();
    await().atMost(Duration.ofSeconds(5)).until(() -> bRan.get() == 100);
    await().atMost(Duration.ofSeconds(5)).until(() -> p.stats().busy() == 0);
    assertThat(aRan).hasValue(0);
    assertThat(delayed.isCancelled()).isTrue();
    assertThatThrownBy(() -> a.execute(() -> {})).isInstanceOf(RejectedExecutionException.class)
        .hasMessageContaining("closed");
    assertThat(a.isClosed()).isTrue();
    PoolStats s = p.stats();
    assertThat(s.submitted()).isEqualTo(s.completed() + s.failed());
  }

  @Test
  void laneAdmittedBeforeThePoolFilledKeepsRunningWhileNewLanesAreRejected() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("admit").capacity(2).nonblocking(true));
    SerialExecutor admitted = p.newSerialExecutor();
    CountDownLatch first = new CountDownLatch(1);
    admitted.execute(first::countDown);
    assertThat(first.await(5, TimeUnit.SECONDS)).isTrue();
    await().until(() -> p.stats().busy() == 0);

    CountDownLatch release = new CountDownLatch(1);
    p.execute(() -> block(release));
    p.execute(() -> block(release));
    assertThatThrownBy(() -> p.newSerialExecutor().execute(() -> {}))
        .isInstanceOf(PoolOverloadedException.class);

    CountDownLatch later = new CountDownLatch(3);
    for (int i = 0; i < 3; i++) {
      admitted.execute(later::countDown); // waits its turn, never rejected
    }
    assertThat(p.stats().waiting()).isEqualTo(1); // the lane holds one place in line
    release.countDown();
    assertThat(later.await(5, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void blockingModeLaneWaitsInLineWithoutBlockingTheCaller() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("blocking-lane").capacity(1));
    CountDownLatch release = new CountDownLatch(1);
    p.execute(() -> block(release));
    SerialExecutor lane = p.newSerialExecutor();
    CountDownLatch ran = new CountDownLatch(2);
    lane.execute(ran::countDown); // returns at once although the pool is full
    lane.execute(ran::countDown);
    assertThat(p.stats().waiting()).isEqualTo(1);
    assertThat(ran.getCount()).isEqualTo(2);
    release.countDown();
    assertThat(ran.await(5, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aLaneYieldsItsWorkerAfterItsBudgetWhenOthersWait() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("fair").capacity(1));
    SerialExecutor lane = p.newSerialExecutor();
    CountDownLatch gate = new CountDownLatch(1);
    AtomicInteger laneRan = new AtomicInteger();
    lane.execute(() -> block(gate));
    int total = 10 * SerialLane.BUDGET;
    for (int i = 0; i < total; i++) {
      lane.execute(laneRan::incrementAndGet);
    }
    int[] seenWhenOtherRan = new int[1];
    CountDownLatch otherRan = new CountDownLatch(1);
    p.enqueue(() -> {
      seenWhenOtherRan[0] = laneRan.get();
      otherRan.countDown();
    });
    gate.countDown();
    assertThat(otherRan.await(5, TimeUnit.SECONDS)).isTrue();
    assertThat(seenWhenOtherRan[0]).isLessThanOrEqualTo(SerialLane.BUDGET);
    await().until(() -> laneRan.get() == total);
  }

  @Test
  void aMillionRecursiveExecutesNeitherOverflowNorGrow() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("recursive").capacity(2));
    SerialExecutor lane = p.newSerialExecutor();
    int n = 1_000_000;
    AtomicInteger count = new AtomicInteger();
    CountDownLatch done = new CountDownLatch(1);
    Runnable[] step = new Runnable[1];
    step[0] = () -> {
      if (count.incrementAndGet() == n) {
        done.countDown();
      } else {
        lane.execute(step[0]);
      }
    };
    long before = usedHeapAfterGc();
    lane.execute(step[0]);
    assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
    long after = usedHeapAfterGc();
    assertThat(after - before).isLessThan(32L << 20);
    await().until(() -> p.stats().completed() == n);
  }

  @Test
  void delayedLaneTasksWithEqualDelaysRunInSubmissionOrderOnPoolWorkers() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("lane-delay").capacity(4));
    SerialExecutor lane = p.newSerialExecutor();
    List<Integer> order = new CopyOnWriteArrayList<>();
    List<String> threads = new CopyOnWriteArrayList<>();
    CountDownLatch done = new CountDownLatch(200);
    for (int i = 0; i < 200; i++) {
      int k = i;
      lane.schedule(() -> {
        order.add(k);
        threads.add(Thread.currentThread().getName());
        done.countDown();
      }, 20, TimeUnit.MILLISECONDS);
    }
    assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
    for (int i = 0; i < 200; i++) {
      assertThat(order.get(i)).isEqualTo(i);
    }
    assertThat(threads).allMatch(n -> n.startsWith("lane-delay-"));
  }

  @Test
  void laneTasksCountLikeAnyTaskAndAFailureDoesNotStopTheLane() throws Exception {
    List<Throwable> failures = new CopyOnWriteArrayList<>();
    WorkerPool p = pool(WorkerPool.builder().name("lane-stats").capacity(2)
        .failureHandler((t, e) -> failures.add(e)));
    SerialExecutor lane = p.newSerialExecutor();
    CountDownLatch done = new CountDownLatch(1);
    lane.execute(() -> {});
    lane.execute(() -> {
      throw new IllegalStateException("boom");
    });
    lane.execute(done::countDown);
    assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
    await().until(() -> p.stats().completed() == 2);
    PoolStats s = p.stats();
    assertThat(s.submitted()).isEqualTo(3);
    assertThat(s.failed()).isEqualTo(1);
    assertThat(failures).singleElement().extracting(Throwable::getMessage).isEqualTo("boom");
  }

  @Test
  void aLaneOfAShutDownPoolRejectsNewTasksButFinishesAdmittedOnes() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("lane-close").capacity(1));
    SerialExecutor lane = p.newSerialExecutor();
    CountDownLatch gate = new CountDownLatch(1);
    AtomicInteger ran = new AtomicInteger();
    lane.execute(() -> block(gate));
    lane.execute(ran::incrementAndGet);
    p.shutdown();
    assertThatThrownBy(() -> lane.execute(() -> {})).isInstanceOf(PoolClosedException.class);
    gate.countDown();
    assertThat(p.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    assertThat(ran).hasValue(1);
  }

  @Test
  void shutdownNowHandsBackTheTasksOfALaneWaitingInLine() throws Exception {
    WorkerPool p = pool(WorkerPool.builder().name("lane-now").capacity(1));
    CountDownLatch gate = new CountDownLatch(1);
    p.execute(() -> block(gate));
    SerialExecutor lane = p.newSerialExecutor();
    Runnable t1 = () -> {};
    Runnable t2 = () -> {};
    lane.execute(t1);
    lane.execute(t2);
    List<Runnable> back = p.shutdownNow();
    gate.countDown();
    assertThat(back).containsExactly(t1, t2);
    assertThat(p.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    PoolStats s = p.stats();
    assertThat(s.submitted()).isEqualTo(s.completed() + s.failed() + back.size());
  }

  static void block(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static long usedHeapAfterGc() {
    Runtime rt = Runtime.getRuntime();
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return rt.totalMemory() - rt.freeMemory();
  }
}
