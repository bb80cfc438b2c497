package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitIdle;
import static dev.warmpool.PoolFixture.awaitWaiting;
import static dev.warmpool.PoolFixture.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Regression tests for the faults of issue 11 that sit where serial lanes, the shared timer, thread
 * factories and shutdown meet. Each test is named after the guarantee it protects (DESIGN.md
 * section 4) and the fault it reproduced; each forces its interleaving with latches and a hostile
 * {@link ThreadFactory} and checks exact outcomes: which tasks ran, how often, what each caller
 * got, and the counters at quiescence.
 *
 * <p>Only the public API is used, except {@link SharedTimer#size()} and
 * {@link SharedTimer#isRunning()}, which observe the timer thread itself.
 */
@Timeout(60) // seconds per test: a hang fails the test instead of stalling the build
class LaneAndTimerFaultsTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private static final String TIMER_THREAD = "warmpool-timer";
  /** How long an outcome that should follow at once may take before the test calls it lost. */
  private static final Duration SOON = Duration.ofSeconds(5);

  /**
   * Makes ordinary daemon worker threads named {@code <pool>-<n>}, records the thread each call
   * runs on, and misbehaves on the next call after it is armed (whichever call that is, so the
   * tests do not depend on how many threads the engine starts before it).
   */
  static final class HostileFactory implements ThreadFactory {
    private final String poolName;
    private final AtomicInteger threads = new AtomicInteger();
    private final AtomicReference<Function<Runnable, Thread>> once = new AtomicReference<>();
    /** Names of the threads the factory was called on. */
    final List<String> calledOn;

    HostileFactory(String poolName, List<String> calledOn) {
      this.poolName = poolName;
      this.calledOn = calledOn;
    }

    HostileFactory(String poolName) {
      this(poolName, new CopyOnWriteArrayList<>());
    }

    void misbehaveOnce(Function<Runnable, Thread> behaviour) {
      once.set(behaviour);
    }

    /** Whether the armed misbehaviour has happened (a test that arms one must see it happen). */
    boolean misbehaved() {
      return once.get() == null;
    }

    @Override
    public Thread newThread(Runnable r) {
      calledOn.add(Thread.currentThread().getName());
      Function<Runnable, Thread> behaviour = once.getAndSet(null);
      return behaviour != null ? behaviour.apply(r) : normal(r);
    }

    Thread normal(Runnable r) {
      Thread t = new Thread(r, poolName + "-" + threads.incrementAndGet());
      t.setDaemon(true);
      return t;
    }
  }

  private static Thread noThreadsToday() {
    throw new IllegalStateException("no threads today");
  }

  private WorkerPool poolWith(HostileFactory factory, String name, int capacity) {
    return fixture.track(WorkerPool.builder().name(name).capacity(capacity)
        .threadFactory(factory).build());
  }

  /**
   * Waits until the call has returned or its thread waits (parked or blocked on a monitor): the
   * call has reached the pool, and it may legitimately wait for the admission under way.
   */
  private static void awaitReturnedOrWaiting(PoolFixture.Caller<?> call) {
    eventually().atMost(SOON).until(() -> call.isDone()
        || switch (call.thread().getState()) {
          case BLOCKED, WAITING, TIMED_WAITING -> true;
          default -> false;
        });
  }

  /**
   * Returns once the shared timer has fired every task that was due when this was called: the
   * timer fires in deadline order, ties first-in first-out, so a marker due 1 ns from now on a
   * pool of its own runs only after them (not 0: a zero delay is handed on at the call, without
   * the timer).
   */
  private void awaitTimerPassedDueTasks() throws Exception {
    WorkerPool marker = fixture.pool("marker", b -> b.capacity(1));
    try {
      marker.schedule(() -> { }, 1, TimeUnit.NANOSECONDS).get(SOON.toSeconds(), TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException late) {
      throw new AssertionError("another pool's due task did not run within " + SOON
          + ": the shared timer is held up by this pool (guarantee 12)", late);
    }
  }

  private static void awaitQuiet(WorkerPool pool, long submitted, long completed, long rejected) {
    eventually().atMost(SOON).untilAsserted(() -> {
      PoolStats s = pool.stats();
      assertThat(s.submitted()).as("submitted (%s)", s).isEqualTo(submitted);
      assertThat(s.completed()).as("completed (%s)", s).isEqualTo(completed);
      assertThat(s.rejected()).as("rejected (%s)", s).isEqualTo(rejected);
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Guarantees 4 and 6: serial lanes

  /**
   * Fault 1. The lane's first execute is inside admission (its factory call blocks) when a delayed
   * task of the lane comes due and a second execute arrives; then the factory fails. The v1 lane
   * kept a pending count above zero with nobody to drain it, so both later tasks were lost.
   *
   * <p>Guarantee 11 lets the failure cost the first task only: its caller is either rejected with
   * the cause (and the task never runs) or told it was accepted (and the task runs once). The
   * delayed task (guarantee 7: accepted when scheduled) and the second execute, whose factory call
   * works, are accepted work and run exactly once (guarantee 4).
   */
  @Test
  void acceptedLaneTaskRunsWhenAdmissionRacesADelayedTask_fault1() throws Exception {
    String name = PoolFixture.uniqueName("race");
    HostileFactory factory = new HostileFactory(name);
    WorkerPool pool = poolWith(factory, name, 2);
    SerialExecutor lane = pool.newSerialExecutor();
    PoolFixture.Gate admission = fixture.gate();
    factory.misbehaveOnce(r -> {
      admission.pass();
      return noThreadsToday();
    });
    AtomicInteger firstRuns = new AtomicInteger();
    AtomicInteger delayedRuns = new AtomicInteger();
    AtomicInteger secondRuns = new AtomicInteger();

    PoolFixture.Caller<Void> first =
        fixture.call("first", () -> lane.execute(firstRuns::incrementAndGet));
    admission.awaitArrival(); // the lane's admission is inside the factory
    ScheduledFuture<?> delayed =
        lane.schedule(delayedRuns::incrementAndGet, 0, TimeUnit.MILLISECONDS);
    awaitTimerPassedDueTasks(); // the delayed task came due during the admission
    PoolFixture.Caller<Void> second =
        fixture.call("second", () -> lane.execute(secondRuns::incrementAndGet));
    awaitReturnedOrWaiting(second);

    admission.open(); // the factory call fails

    eventually().atMost(SOON).untilAsserted(() -> {
      assertThat(delayedRuns.get()).as("runs of the delayed lane task").isEqualTo(1);
      assertThat(secondRuns.get()).as("runs of the second execute's task").isEqualTo(1);
    });
    assertThat(second.outcome()).as("second execute (the factory fails only once)").isNull();
    assertThat((Future<?>) delayed).as("delayed lane task").succeedsWithin(SOON);
    Throwable firstOutcome = first.outcome();
    boolean firstAccepted = firstOutcome == null;
    if (!firstAccepted) {
      assertThat(firstOutcome).isInstanceOf(RejectedExecutionException.class)
          .hasMessageContaining(name).hasRootCauseMessage("no threads today");
    }
    // The lane still works, and nothing before this task in the lane is left to run.
    CountDownLatch after = new CountDownLatch(1);
    lane.execute(after::countDown);
    PoolFixture.await(after);
    assertThat(firstRuns.get()).as("runs of the first task (accepted: %s)", firstAccepted)
        .isEqualTo(firstAccepted ? 1 : 0);
    assertThat(delayedRuns.get()).isEqualTo(1);
    assertThat(secondRuns.get()).isEqualTo(1);
    long ran = 3 + (firstAccepted ? 1 : 0);
    awaitQuiet(pool, ran, ran, firstAccepted ? 0 : 1);
    assertThat(factory.misbehaved()).isTrue();
  }

  /**
   * Fault 2. An admitted lane's next burst needs a new thread and the factory fails (after
   * blocking, while a second caller adds a task). v1 discarded the lane's pending tasks: the second
   * caller's accepted task never ran and the first caller was rejected although its lane was
   * admitted.
   *
   * <p>Guarantee 6: an admitted lane is never rejected again, so guarantee 11 leaves one choice:
   * the lane keeps its place and the start is retried. Both callers return normally, both tasks run
   * once, in order, and nothing counts as rejected. The other worker stays busy throughout, so the
   * retry must come from the pool itself (a free seat and a working factory), not from a task
   * ending.
   */
  @Test
  void admittedLaneIsNeverRejectedAndKeepsItsTasksWhenAThreadFailsToStart_fault2() {
    String name = PoolFixture.uniqueName("admitted");
    HostileFactory factory = new HostileFactory(name);
    WorkerPool pool = poolWith(factory, name, 2);
    SerialExecutor lane = pool.newSerialExecutor();
    CountDownLatch admitted = new CountDownLatch(1);
    lane.execute(admitted::countDown);
    PoolFixture.await(admitted);
    awaitIdle(pool, 1);
    PoolFixture.Gate busy = fixture.occupy(pool);
    assertThat(pool.stats().workers()).as("the lane's next burst needs a new thread").isEqualTo(1);

    PoolFixture.Gate start = fixture.gate();
    factory.misbehaveOnce(r -> {
      start.pass();
      return noThreadsToday();
    });
    List<Integer> order = new CopyOnWriteArrayList<>();
    PoolFixture.Caller<Void> first = fixture.call("first", () -> lane.execute(() -> order.add(1)));
    start.awaitArrival(); // starting the lane's thread is under way
    PoolFixture.Caller<Void> second =
        fixture.call("second", () -> lane.execute(() -> order.add(2)));
    awaitReturnedOrWaiting(second);

    start.open(); // that start fails

    eventually().atMost(SOON).untilAsserted(() ->
        assertThat(order).as("lane tasks that ran, busy worker still busy").containsExactly(1, 2));
    assertThat(first.outcome()).as("first execute on an admitted lane").isNull();
    assertThat(second.outcome()).as("second execute").isNull();
    busy.open();
    awaitQuiet(pool, 4, 4, 0);
    assertThat(order).containsExactly(1, 2);
    assertThat(factory.misbehaved()).isTrue();
  }

  // ---------------------------------------------------------------------------------------------
  // Guarantee 7: timers

  /**
   * Fault 3. A due task whose thread fails to start once: v1 cancelled it on the timer thread, so a
   * fixed-rate task stopped for good and a one-shot future failed with CancellationException.
   *
   * <p>Guarantees 7 and 11: a due task is admitted work, refused only by a closed pool; a failed
   * start keeps it waiting and is retried. It is not counted as rejected (it runs, so it counts in
   * submitted, and a task never counts in both).
   */
  @Test
  void dueTaskIsRetriedNotCancelledWhenItsThreadFailsToStartOnce_fault3() throws Exception {
    String periodicName = PoolFixture.uniqueName("periodic");
    HostileFactory periodicFactory = new HostileFactory(periodicName);
    periodicFactory.misbehaveOnce(r -> noThreadsToday());
    WorkerPool periodicPool = poolWith(periodicFactory, periodicName, 1);
    AtomicInteger runs = new AtomicInteger();

    ScheduledFuture<?> periodic = periodicPool.scheduleAtFixedRate(runs::incrementAndGet, 5, 5,
        TimeUnit.MILLISECONDS);

    eventually().atMost(SOON).untilAsserted(() -> assertThat(runs.get())
        .as("runs of a fixed-rate task whose first thread failed to start (done %s, cancelled %s)",
            periodic.isDone(), periodic.isCancelled())
        .isGreaterThanOrEqualTo(3));
    assertThat(periodic.isDone()).as("fixed-rate future done").isFalse();
    assertThat(periodicFactory.misbehaved()).isTrue();
    periodic.cancel(false);

    String oneShotName = PoolFixture.uniqueName("oneshot");
    HostileFactory oneShotFactory = new HostileFactory(oneShotName);
    oneShotFactory.misbehaveOnce(r -> null);
    WorkerPool oneShotPool = poolWith(oneShotFactory, oneShotName, 1);

    ScheduledFuture<String> oneShot = oneShotPool.schedule(() -> "ran", 5, TimeUnit.MILLISECONDS);

    assertThat((Future<String>) oneShot).as("one-shot whose first thread failed to start")
        .succeedsWithin(SOON).isEqualTo("ran");
    awaitQuiet(oneShotPool, 1, 1, 0);
    assertThat(oneShotFactory.misbehaved()).isTrue();
  }

  /**
   * Fault 7. {@code lane.schedule(x, 1, DAYS).cancel()} marked the v1 lane admitted without taking
   * a thread, so on a full nonblocking pool that lane accepted every later task.
   *
   * <p>Guarantee 7: the schedule itself is accepted on the full pool (a timer takes no thread until
   * due). Guarantee 6: the lane is admitted the first time it needs a thread, which is the execute,
   * so that execute is rejected at once (guarantee 5) and its task never runs.
   */
  @Test
  void cancelledDelayedTaskDoesNotAdmitItsLane_fault7() {
    WorkerPool pool = fixture.pool("delayadmit", b -> b.capacity(1).nonblocking(true));
    PoolFixture.Gate busy = fixture.occupy(pool);
    SerialExecutor lane = pool.newSerialExecutor();
    AtomicInteger ran = new AtomicInteger();

    ScheduledFuture<?> far = lane.schedule(ran::incrementAndGet, 1, TimeUnit.DAYS);
    assertThat(far.cancel(false)).isTrue();

    assertThatThrownBy(() -> lane.execute(ran::incrementAndGet))
        .as("execute on a lane that never had a thread, pool full and nonblocking")
        .isInstanceOf(PoolOverloadedException.class).hasMessageContaining(pool.name());
    PoolStats s = pool.stats();
    assertThat(s.submitted()).as("submitted (%s)", s).isEqualTo(1);
    assertThat(s.rejected()).as("rejected (%s)", s).isEqualTo(1);
    assertThat(s.waiting()).as("waiting (%s)", s).isZero();

    busy.open();
    awaitIdle(pool, 1);
    CountDownLatch later = new CountDownLatch(1);
    lane.execute(later::countDown); // a free seat now: the lane is admitted
    PoolFixture.await(later);
    awaitQuiet(pool, 2, 2, 1);
    assertThat(ran.get()).as("runs of the cancelled and the rejected task").isZero();
  }

  // ---------------------------------------------------------------------------------------------
  // Guarantee 12: the shared timer thread

  /**
   * Fault 8. v1 started workers on the timer thread: a pool whose factory took 2 s made another
   * pool's 10 ms timer ~2 s late, and a start retried after a failure called the factory there too.
   *
   * <p>Guarantee 12: no user code (factories, tasks, failure handlers) runs on the timer thread, so
   * one pool's slow factory delays no other pool's timers. Three paths: a due task that needs a
   * thread, a start retried after a factory failure (guarantee 11's retry), and a due task that
   * throws.
   */
  @Test
  void noUserCodeRunsOnTheSharedTimerThread_fault8() throws Exception {
    List<String> userCodeThreads = new CopyOnWriteArrayList<>();

    // A due task needs a thread from a factory that blocks 2 s.
    String slowName = PoolFixture.uniqueName("slowfactory");
    HostileFactory slow = new HostileFactory(slowName, userCodeThreads);
    CountDownLatch slowEntered = new CountDownLatch(1);
    CountDownLatch slowRelease = new CountDownLatch(1);
    slow.misbehaveOnce(r -> {
      slowEntered.countDown();
      try {
        slowRelease.await(2, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return slow.normal(r);
    });
    WorkerPool slowPool = poolWith(slow, slowName, 1);
    AtomicInteger slowRuns = new AtomicInteger();
    ScheduledFuture<?> slowDue = slowPool.schedule(() -> {
      userCodeThreads.add(Thread.currentThread().getName());
      slowRuns.incrementAndGet();
    }, 1, TimeUnit.MILLISECONDS);
    PoolFixture.await(slowEntered);

    WorkerPool punctualPool = fixture.pool("punctual", b -> b.capacity(1));
    long scheduledAt = System.nanoTime();
    ScheduledFuture<Long> punctual =
        punctualPool.schedule(System::nanoTime, 10, TimeUnit.MILLISECONDS);
    long ranAt = punctual.get(10, TimeUnit.SECONDS);
    long lateMillis = TimeUnit.NANOSECONDS.toMillis(ranAt - scheduledAt) - 10;
    slowRelease.countDown();
    slowDue.get(10, TimeUnit.SECONDS);

    // A waiting task's thread fails to start once and the start is retried.
    String retryName = PoolFixture.uniqueName("retrystart");
    HostileFactory retry = new HostileFactory(retryName, userCodeThreads);
    WorkerPool retryPool = poolWith(retry, retryName, 1);
    PoolFixture.Gate busy = fixture.occupy(retryPool);
    AtomicInteger retriedRuns = new AtomicInteger();
    retryPool.enqueue(retriedRuns::incrementAndGet);
    awaitWaiting(retryPool, 1);
    retry.misbehaveOnce(r -> noThreadsToday());
    retryPool.resize(2); // a seat for the waiting task; its thread fails to start once
    eventually().atMost(SOON).untilAsserted(() ->
        assertThat(retriedRuns.get()).as("runs of the waiting task").isEqualTo(1));
    assertThat(retry.misbehaved()).isTrue();

    // A due task throws: the failure handler is user code too.
    CountDownLatch handled = new CountDownLatch(1);
    WorkerPool failing = fixture.pool("failing", b -> b.capacity(1).failureHandler((t, e) -> {
      userCodeThreads.add(Thread.currentThread().getName());
      handled.countDown();
    }));
    failing.schedule(() -> {
      throw new IllegalStateException("task fails");
    }, 1, TimeUnit.MILLISECONDS);
    PoolFixture.await(handled);

    SoftAssertions.assertSoftly(soft -> {
      soft.assertThat(lateMillis).as("ms another pool's 10 ms timer ran late").isLessThan(500);
      soft.assertThat(userCodeThreads).as("threads that ran factories, tasks and handlers")
          .isNotEmpty().doesNotContain(TIMER_THREAD);
      soft.assertThat(slowRuns.get()).as("runs of the slow pool's task").isEqualTo(1);
      soft.assertThat(retryPool.stats().rejected()).as("retry pool rejected").isZero();
    });
  }

  /**
   * Timer rule of issue 11: v1's timer thread slept until a cancelled task's deadline (one day)
   * instead of ending. Guarantee 12: the timer thread ends soon after its last task is cancelled.
   *
   * <p>The timer is shared by the JVM, so the test first waits until nothing else is scheduled on
   * it (every pool of this class is shut down after its test, which cancels its timers and
   * cleaners); if another test left a live pool behind, it cannot judge and is skipped.
   */
  @Test
  void timerThreadEndsSoonAfterItsLastTaskIsCancelled_timerRule() throws Exception {
    SharedTimer timer = SharedTimer.INSTANCE;
    boolean timerFree;
    try {
      eventually().atMost(Duration.ofSeconds(10)).until(() -> timer.size() == 0);
      timerFree = true;
    } catch (org.awaitility.core.ConditionTimeoutException busy) {
      timerFree = false;
    }
    assumeThat(timerFree).as("nothing else scheduled on the shared timer").isTrue();
    WorkerPool pool = fixture.pool("timerend", b -> b.capacity(1));
    ScheduledFuture<?> far = pool.schedule(() -> { }, 1, TimeUnit.DAYS);
    // Let the timer thread see the far task and go back to sleep: a task due 1 ns from now (not 0,
    // which skips the timer), fired after the far one was added, has run; its pool is then shut down, which cancels that pool's cleaner.
    WorkerPool marker = fixture.pool("marker", b -> b.capacity(1));
    marker.schedule(() -> { }, 1, TimeUnit.NANOSECONDS).get(SOON.toSeconds(), TimeUnit.SECONDS);
    marker.shutdownNow();
    assertThat(marker.awaitTermination(SOON.toSeconds(), TimeUnit.SECONDS)).isTrue();
    assertThat(timer.isRunning()).as("timer running with a task").isTrue();
    assertThat(timer.size()).as("tasks on the timer: the far one").isEqualTo(1);
    // This timer's own thread (a test's private timer may run one of the same name meanwhile)
    Thread thread = timer.thread();
    assertThat(thread).isNotNull();
    eventually().atMost(SOON).pollInterval(Duration.ofMillis(20)).until(() ->
        thread.getState() == Thread.State.TIMED_WAITING || thread.getState() == Thread.State.WAITING);

    assertThat(far.cancel(false)).isTrue();
    assertThat(timer.size()).as("tasks on the timer after the cancel").isZero();

    eventually().atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(20))
        .untilAsserted(() -> {
          assertThat(timer.isRunning()).as("timer running, nothing scheduled").isFalse();
          assertThat(thread.isAlive()).as("thread %s", thread).isFalse();
        });
  }

  // ---------------------------------------------------------------------------------------------
  // Guarantee 9: close

  /**
   * Fault 9. v1's shutdownNow returned only lanes waiting in line: a lane busy on a worker kept its
   * 1,000 queued tasks, returned none of them, and ran them all after shutdownNow returned.
   *
   * <p>Guarantees 4 and 9: shutdownNow returns the queued tasks of running lanes too; each of them
   * is returned exactly once and none runs in the pool afterwards. The running task finishes.
   */
  @Test
  void shutdownNowReturnsTheQueuedTasksOfARunningLane_fault9() throws Exception {
    WorkerPool pool = fixture.pool("lanenow", b -> b.capacity(2));
    SerialExecutor lane = pool.newSerialExecutor();
    PoolFixture.Gate running = fixture.occupy(lane);
    int queued = 1000;
    AtomicIntegerArray runs = new AtomicIntegerArray(queued);
    for (int i = 0; i < queued; i++) {
      int id = i;
      lane.execute(() -> runs.incrementAndGet(id));
    }

    List<Runnable> returned = pool.shutdownNow();
    running.open();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).as("terminated").isTrue();

    int ranInPool = 0;
    for (int i = 0; i < queued; i++) {
      ranInPool += runs.get(i);
    }
    int ranAfterShutdownNow = ranInPool;
    SoftAssertions.assertSoftly(soft -> {
      soft.assertThat(returned).as("tasks returned by shutdownNow").hasSize(queued);
      soft.assertThat(ranAfterShutdownNow).as("queued lane tasks that ran after shutdownNow")
          .isZero();
      soft.assertThat(pool.stats().completed()).as("completed: the running task only").isEqualTo(1);
    });
    returned.forEach(Runnable::run);
    for (int i = 0; i < queued; i++) {
      assertThat(runs.get(i)).as("runs of returned lane task %d", i).isEqualTo(1);
    }
  }
}
