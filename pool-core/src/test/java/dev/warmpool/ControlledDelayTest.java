package dev.warmpool;

import static dev.warmpool.PoolFixture.awaitWaiting;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Controlled delay and adaptive LIFO (DESIGN.md section 3, version 4; guarantees 4, 5 and 13): a
 * line that has not once been empty for the interval stands, and then an entry that waited longer
 * than the target expires with every signal of a line deadline; a line that has not stood lets its
 * entries wait up to the interval; a standing LIFO line serves its newest entry, FIFO otherwise.
 *
 * <p>Time is real (the line and its timer use {@link System#nanoTime()}, as line deadlines do), so
 * no test judges by how long something took: "later than" is read from the shared timer, which
 * fires in deadline order, by a clock entry whose own deadline is known (a per-task
 * {@code maxWait}); an entry whose bound is earlier has certainly expired when the clock entry has.
 */
@Timeout(120)
class ControlledDelayTest {
  private static final Duration HOUR = Duration.ofHours(1);
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private WorkerPool pool(int capacity, UnaryOperator<WorkerPool.Builder> config) {
    return fixture.pool("codel", b -> config.apply(b.capacity(capacity).maxIdle(HOUR)));
  }

  private static Duration ms(long millis) {
    return Duration.ofMillis(millis);
  }

  private static boolean eventually(BooleanSupplier c) {
    return PoolFixture.waitUntil(Duration.ofSeconds(20), c);
  }

  /** Waits until a clock entry (a task with its own deadline) expired: that much time has passed. */
  private static void passes(WorkerPool pool, Duration atLeast) {
    TaskHandle clock = pool.enqueue(() -> { }, atLeast);
    assertThat(eventually(clock::isExpired)).as("clock entry expired").isTrue();
  }

  @Test
  void aLineThatHasNotStoodLetsEntriesWaitPastTheTarget() {
    WorkerPool pool = pool(1, b -> b.controlledDelay(ms(1), HOUR)); // the line never stands here
    PoolFixture.Gate gate = fixture.occupy(pool);
    AtomicInteger ran = new AtomicInteger();
    TaskHandle a = pool.enqueue(ran::incrementAndGet);
    passes(pool, ms(50)); // 50 times the target
    assertThat(a.isExpired()).as("waited past the target, but the line has not stood").isFalse();
    gate.open();
    assertThat(eventually(() -> ran.get() == 1)).isTrue();
    PoolStats s = pool.stats();
    assertThat(s.expired()).as("the clock entry only").isEqualTo(1);
    assertThat(eventually(() -> pool.stats().completed() == 2)).isTrue();
    assertThat(pool.stats().submitted()).isEqualTo(2);
  }

  @Test
  void onceTheLineStandsAnEntryThatWaitedPastTheTargetExpires() throws Exception {
    WorkerPool pool = pool(1, b -> b.controlledDelay(ms(20), ms(200)));
    PoolFixture.Gate gate = fixture.occupy(pool);
    CountDownLatch timerRan = new CountDownLatch(1);
    // A due timer is admitted work: it waits in line, never expires, and keeps the line standing.
    pool.schedule(timerRan::countDown, 0, TimeUnit.MILLISECONDS);
    awaitWaiting(pool, 1);
    // Joins a line that has not stood: may wait until the line has stood for the interval.
    Future<?> first = pool.submit(() -> { });
    ExecutionException firstFailure = null;
    try {
      first.get(20, TimeUnit.SECONDS);
    } catch (ExecutionException expected) {
      firstFailure = expected;
    }
    assertThat(firstFailure).as("expired once the line stood").isNotNull();
    assertThat(firstFailure.getCause()).isInstanceOf(PoolOverloadedException.class)
        .hasMessageContaining("controlled-delay target of 20ms")
        .hasMessageContaining("not once empty for 200ms");
    // The line now stands: a new entry may wait about the target (20 ms), far less than a clock
    // entry of 150 ms that joins after it; the timer fires in deadline order.
    TaskHandle late = pool.enqueue(() -> { });
    passes(pool, ms(150));
    assertThat(late.isExpired()).as("expired at the target, before the clock entry").isTrue();
    gate.open();
    PoolFixture.await(timerRan);
    assertThat(eventually(() -> pool.stats().waiting() == 0)).isTrue();
    assertThat(pool.stats().expired()).isEqualTo(3);
  }

  /**
   * "Empty" means the pool caught up, a seat came free and found no entry: a line that a
   * finishing worker drains by taking its last entry goes on standing, and the entry that joins
   * next may wait only about the target; once a seat has gone idle, a new line does not stand.
   */
  @Test
  void aLineDrainedWithoutASeatGoingIdleStillStandsAndOneFormedAfterCatchingUpDoesNot()
      throws Exception {
    WorkerPool pool = pool(1, b -> b.controlledDelay(ms(20), ms(200)));
    PoolFixture.Gate first = fixture.occupy(pool);
    CountDownLatch timerStarted = new CountDownLatch(1);
    CountDownLatch releaseTimer = new CountDownLatch(1);
    // A due timer is admitted work: it waits in line for the whole interval and never expires.
    pool.schedule(() -> {
      timerStarted.countDown();
      PoolFixture.await(releaseTimer);
    }, 0, TimeUnit.MILLISECONDS);
    awaitWaiting(pool, 1);
    passes(pool, ms(250)); // the line has stood
    first.open(); // the seat passes straight to the timer: the line is empty, no seat went idle
    PoolFixture.await(timerStarted);
    TaskHandle joinsAStandingLine = pool.enqueue(() -> { });
    passes(pool, ms(150)); // far past the target (20 ms), short of the interval (200 ms)
    assertThat(joinsAStandingLine.isExpired()).as("the line still stood: the target bounds it")
        .isTrue();

    releaseTimer.countDown();
    PoolFixture.awaitIdle(pool, 1); // the pool caught up
    // ... and has shed nothing for longer than the target (the clock entry above was the last):
    // not a synchronisation, a lower bound on elapsed time, which sleep guarantees.
    Thread.sleep(3 * 20);
    PoolFixture.Gate second = fixture.occupy(pool);
    AtomicInteger ran = new AtomicInteger();
    TaskHandle joinsANewLine = pool.enqueue(ran::incrementAndGet);
    passes(pool, ms(150));
    assertThat(joinsANewLine.isExpired()).as("a line formed after catching up has not stood")
        .isFalse();
    second.open();
    assertThat(eventually(() -> ran.get() == 1)).isTrue();
    assertThat(eventually(() -> pool.stats().waiting() == 0 && pool.stats().completed() == 4))
        .as(pool.stats().toString()).isTrue();
    assertThat(pool.stats().expired()).as("the entry and three clock entries").isEqualTo(4);
  }

  /**
   * A line that emptied because it shed its entries (as after a pause of every thread, when the
   * whole line is overdue at once) has not caught up: a seat that comes free and finds it empty
   * within the target of the last shed does not restart the interval, and the next entry may wait
   * only about the target.
   */
  @Test
  void aLineThatShedItselfEmptyGoesOnStanding() throws Exception {
    // A long target, so that "within the target of the shed" holds on a loaded machine too.
    WorkerPool pool = pool(1, b -> b.controlledDelay(Duration.ofSeconds(1), ms(1250)));
    PoolFixture.Gate first = fixture.occupy(pool);
    TaskHandle shed = pool.enqueue(() -> { });
    assertThat(eventually(shed::isExpired)).as("shed once the line stood").isTrue();
    first.open(); // the seat comes free and finds the line empty, just after the shed
    PoolFixture.awaitIdle(pool, 1);
    fixture.occupy(pool);
    TaskHandle next = pool.enqueue(() -> { });
    // A clock entry with a bound of its own between the target (1 s) and the interval (1.25 s): a
    // standing line's entry expires first; one of a line whose interval restarted would not.
    passes(pool, ms(1100));
    assertThat(next.isExpired()).as("the line still stood: the target bounds it").isTrue();
    assertThat(pool.stats().expired()).isEqualTo(3);
  }

  @Test
  void whileNotStandingAnEntryWaitsUpToTheIntervalOrMaxWaitInLineIfShorter() throws Exception {
    WorkerPool pool = pool(1, b -> b.controlledDelay(ms(10), ms(100)));
    fixture.occupy(pool);
    long t0 = System.nanoTime();
    Future<?> f = pool.submit(() -> { });
    Throwable cause = failureOf(f);
    long waited = System.nanoTime() - t0;
    assertThat(waited).as("not before the interval").isGreaterThanOrEqualTo(ms(100).toNanos());
    assertThat(cause).isInstanceOf(PoolOverloadedException.class)
        .hasMessageContaining("controlled-delay target of 10ms");

    WorkerPool shorter = pool(1, b -> b.controlledDelay(ms(1), HOUR).maxWaitInLine(ms(30)));
    fixture.occupy(shorter);
    assertThat(failureOf(shorter.submit(() -> { }))).isInstanceOf(PoolOverloadedException.class)
        .hasMessageContaining("past its deadline of 30ms");
    TaskHandle own = shorter.enqueue(() -> { }, ms(40)); // the per-task form bounds it too
    assertThat(eventually(own::isExpired)).isTrue();
    assertThat(shorter.stats().expired()).isEqualTo(2);
  }

  private static Throwable failureOf(Future<?> f) throws Exception {
    try {
      f.get(20, TimeUnit.SECONDS);
      throw new AssertionError("ran");
    } catch (ExecutionException e) {
      return e.getCause();
    }
  }

  @Test
  void anExpiredEntryGivesEverySignalOfALineDeadline() throws Exception {
    WorkerPool pool = pool(1, b -> b.controlledDelay(ms(1), ms(40)));
    fixture.occupy(pool);
    AtomicInteger ran = new AtomicInteger();
    PoolFixture.Caller<Void> caller = fixture.call("execute", () -> pool.execute(ran::incrementAndGet));
    // In line, or out of it already: it stands there about 41 ms, which a poll of a loaded machine
    // can miss (awaiting waiting == 1 alone once timed out so).
    assertThat(eventually(() -> pool.stats().waiting() == 1 || pool.stats().expired() == 1))
        .isTrue();
    Future<?> f = pool.submit(ran::incrementAndGet);
    CompletableFuture<Thread> heard = new CompletableFuture<>();
    pool.enqueue(new CancellationAware() {
      @Override
      public void run() {
        ran.incrementAndGet();
      }

      @Override
      public void onCancel() {
        heard.complete(Thread.currentThread());
      }
    });
    TaskHandle h = pool.enqueue(ran::incrementAndGet);
    assertThat(caller.outcome(Duration.ofSeconds(20))).isInstanceOf(PoolOverloadedException.class)
        .hasMessageContaining("waited").hasMessageContaining("ms in line")
        .hasMessageContaining("controlled-delay target of 1ms while the line stood");
    assertThat(failureOf(f)).isInstanceOf(PoolOverloadedException.class);
    assertThat(heard.get(20, TimeUnit.SECONDS).getName()).isNotEqualTo("warmpool-timer");
    assertThat(eventually(h::isExpired)).isTrue();
    assertThat(h.isDone()).isTrue();
    assertThat(h.isCancelled()).isFalse();
    assertThat(h.cancel()).as("an expired task cannot be withdrawn").isFalse();
    assertThat(eventually(() -> pool.stats().expired() == 4)).isTrue();
    PoolStats s = pool.stats();
    assertThat(s.waiting()).isZero();
    assertThat(s.submitted()).as("only the occupying task").isEqualTo(1);
    assertThat(ran).hasValue(0);
  }

  @Test
  void aTimedTryExecuteAnswersFalseAtTheBound() {
    WorkerPool pool = pool(1, b -> b.controlledDelay(ms(1), ms(30)));
    fixture.occupy(pool);
    PoolFixture.Caller<Boolean> caller = fixture.call("tryExecute",
        () -> pool.tryExecute(() -> { }, HOUR));
    assertThat(caller.result(Duration.ofSeconds(20))).isFalse();
    assertThat(pool.stats().waiting()).isZero();
  }

  /**
   * The hand-off checks the bound too: with the shared timer thread held, an entry whose bound
   * passed is expired by the seat that would have served it, and the seat goes on to the next.
   * (Admitted lanes around it have no bound, so they are served.)
   */
  @Test
  void aFreedSeatGoesPastAnEntryWhoseBoundPassedBeforeItsTimerFires() {
    WorkerPool pool = pool(1, b -> b.controlledDelay(ms(1), ms(20)));
    SerialExecutor lane1 = pool.newSerialExecutor();
    SerialExecutor lane2 = pool.newSerialExecutor();
    CountDownLatch admitted = new CountDownLatch(2);
    lane1.execute(admitted::countDown); // each lane gets a seat once: it is admitted
    lane2.execute(admitted::countDown);
    PoolFixture.await(admitted);
    PoolFixture.Gate gate = fixture.occupy(pool);
    List<String> order = new CopyOnWriteArrayList<>();
    CountDownLatch done = new CountDownLatch(2);
    CountDownLatch releaseTimer = PoolFixture.holdSharedTimer();
    try {
      lane1.execute(() -> {
        order.add("lane1");
        done.countDown();
      });
      TaskHandle a = pool.enqueue(() -> order.add("a"));
      lane2.execute(() -> {
        order.add("lane2");
        done.countDown();
      });
      awaitWaiting(pool, 3);
      long since = System.nanoTime();
      // a's bound (the line has stood 20 ms) passes; its timer cannot fire: the timer is held.
      assertThat(eventually(() -> System.nanoTime() - since > ms(25).toNanos())).isTrue();
      gate.open();
      PoolFixture.await(done);
      assertThat(order).containsExactly("lane1", "lane2");
      assertThat(a.isExpired()).isTrue();
      assertThat(releaseTimer.getCount()).as("the timer was held all along").isEqualTo(1);
      assertThat(pool.stats().expired()).isEqualTo(1);
    } finally {
      releaseTimer.countDown();
    }
  }

  @Test
  void whileTheLineStandsAFreedSeatGoesToTheNewestEntry() {
    // No controlled delay: the line stands after 100 ms; the deadline makes every entry sheddable.
    WorkerPool pool = pool(1, b -> b.adaptiveLifo(true).maxWaitInLine(HOUR));
    PoolFixture.Gate gate = fixture.occupy(pool);
    List<Integer> order = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 5; i++) {
      int n = i;
      pool.enqueue(() -> order.add(n));
    }
    passes(pool, ms(150)); // the line has stood longer than 100 ms
    gate.open();
    assertThat(eventually(() -> order.size() == 5)).isTrue();
    assertThat(order).containsExactly(4, 3, 2, 1, 0);
  }

  @Test
  void aLineThatDoesNotStandStaysFifoUnderAdaptiveLifo() {
    WorkerPool pool = pool(1, b -> b.adaptiveLifo(true).controlledDelay(Duration.ofMinutes(30),
        HOUR));
    PoolFixture.Gate gate = fixture.occupy(pool);
    List<Integer> order = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 5; i++) {
      int n = i;
      pool.enqueue(() -> order.add(n));
    }
    gate.open();
    assertThat(eventually(() -> order.size() == 5)).isTrue();
    assertThat(order).containsExactly(0, 1, 2, 3, 4);

    // Without any deadline nothing can be shed, and LIFO must not starve it: FIFO while standing.
    WorkerPool plain = pool(1, b -> b.adaptiveLifo(true));
    PoolFixture.Gate plainGate = fixture.occupy(plain);
    List<Integer> plainOrder = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 5; i++) {
      int n = i;
      plain.enqueue(() -> plainOrder.add(n));
    }
    passes(plain, ms(150));
    plainGate.open();
    assertThat(eventually(() -> plainOrder.size() == 5)).isTrue();
    assertThat(plainOrder).containsExactly(0, 1, 2, 3, 4);
  }

  /**
   * Tasks, a blocked caller and a lane waiting for its first seat share the one LIFO line; an
   * admitted lane's place (which no deadline can shed) is not starved: having waited a whole
   * standing interval at the head, it goes first.
   */
  @Test
  void lanesAndBlockedCallersShareTheLifoLineAndAdmittedWorkIsNotStarved() {
    WorkerPool pool = pool(1, b -> b.adaptiveLifo(true).maxWaitInLine(HOUR));
    SerialExecutor admittedLane = pool.newSerialExecutor();
    CountDownLatch seated = new CountDownLatch(1);
    admittedLane.execute(seated::countDown);
    PoolFixture.await(seated);
    PoolFixture.Gate gate = fixture.occupy(pool);
    List<String> order = new CopyOnWriteArrayList<>();
    admittedLane.execute(() -> order.add("admittedLane"));
    awaitWaiting(pool, 1);
    pool.enqueue(() -> order.add("t0"));
    PoolFixture.Caller<Void> caller = fixture.call("execute",
        () -> pool.execute(() -> order.add("caller")));
    awaitWaiting(pool, 3);
    SerialExecutor newLane = pool.newSerialExecutor();
    newLane.execute(() -> order.add("newLane"));
    awaitWaiting(pool, 4);
    pool.enqueue(() -> order.add("t3"));
    passes(pool, ms(150));
    gate.open();
    assertThat(caller.outcome(Duration.ofSeconds(20))).isNull();
    assertThat(eventually(() -> order.size() == 5)).isTrue();
    assertThat(order).containsExactly("admittedLane", "t3", "newLane", "caller", "t0");
  }

  /**
   * A newest entry that no deadline can shed (an admitted lane's place, as when a lane yields its
   * seat and rejoins) does not barge in under LIFO: while it is the newest, the line is FIFO. Unless
   * it has waited a whole standing interval (100 ms) by the time a seat is handed on: then the rule
   * that no pinned work starves sends it first, and LIFO serves the rest (a loaded machine once
   * took that long between the lane's join and the gate's seat; the test knows which applies from
   * the clock, and accepts either only when its readings straddle the interval).
   */
  @Test
  void aNewestEntryThatCannotBeShedDoesNotBargeIn() {
    WorkerPool pool = pool(1, b -> b.adaptiveLifo(true).maxWaitInLine(HOUR));
    SerialExecutor lane = pool.newSerialExecutor();
    CountDownLatch seated = new CountDownLatch(1);
    lane.execute(seated::countDown);
    PoolFixture.await(seated);
    // the lane's task counted down inside its run: its seat is free only once the lane ends
    // (CI found a nonblocking occupy refused in that window; a blocking one would wait in line)
    PoolFixture.awaitIdle(pool, 1);
    PoolFixture.Gate gate = fixture.occupy(pool);
    List<String> order = new CopyOnWriteArrayList<>();
    AtomicLong firstRan = new AtomicLong();
    Function<String, Runnable> task = name -> () -> {
      firstRan.compareAndSet(0L, System.nanoTime());
      order.add(name);
    };
    pool.enqueue(task.apply("t0"));
    pool.enqueue(task.apply("t1"));
    passes(pool, ms(150)); // the line stands
    long beforeJoin = System.nanoTime();
    lane.execute(task.apply("lane")); // admitted: joins last, without a deadline
    long joined = System.nanoTime();
    awaitWaiting(pool, 3);
    long opened = System.nanoTime();
    gate.open();
    assertThat(eventually(() -> order.size() == 3)).isTrue();
    long standing = LinePolicy.LIFO_STANDING_NANOS;
    List<String> fifo = List.of("t0", "t1", "lane");
    List<String> unstarved = List.of("lane", "t1", "t0");
    if (firstRan.get() - beforeJoin < standing) {
      assertThat(order).containsExactlyElementsOf(fifo);
    } else if (opened - joined >= standing) {
      assertThat(order).as("the lane waited a standing interval: it goes first")
          .containsExactlyElementsOf(unstarved);
    } else {
      assertThat(order).isIn(fifo, unstarved);
    }
  }

  /**
   * No admitted work starves (section 3, adaptive LIFO; WaitingLine's notes: "once the oldest such
   * entry has waited a whole standing interval, it goes first"). An admitted lane's place waits
   * behind one task with an hour's deadline; while tasks keep arriving, every freed seat goes to
   * the newest task, and the lane is served only after all of them (and would wait the hour under
   * a steady stream). Found by review r5 (failed 4/4).
   */
  @Test
  void guarantee6_anAdmittedLaneBehindASheddableHeadIsNotStarvedByNewerTasks() {
    WorkerPool pool = fixture.pool("r5lifo", b -> b.capacity(1).maxIdle(HOUR)
        .adaptiveLifo(true).maxWaitInLine(HOUR));
    SerialExecutor lane = pool.newSerialExecutor();
    CountDownLatch seated = new CountDownLatch(1);
    lane.execute(seated::countDown);
    PoolFixture.await(seated);
    // the lane's task counted down inside its run: its seat is free only once the lane ends
    // (CI found a nonblocking occupy refused in that window; a blocking one would wait in line)
    PoolFixture.awaitIdle(pool, 1);
    PoolFixture.Gate gate = fixture.occupy(pool);
    List<String> order = new CopyOnWriteArrayList<>();
    pool.enqueue(() -> order.add("head")); // sheddable, but only after an hour
    awaitWaiting(pool, 1);
    lane.execute(() -> order.add("lane")); // admitted: joins behind it, without a deadline
    awaitWaiting(pool, 2);
    AtomicInteger stream = new AtomicInteger();
    Runnable[] next = new Runnable[1];
    next[0] = () -> {
      int n = stream.incrementAndGet();
      order.add("t" + n);
      if (n < 20) {
        pool.enqueue(next[0]); // a steady stream of newer tasks
      }
    };
    pool.enqueue(next[0]);
    passes(pool, Duration.ofMillis(150)); // the line has stood longer than its 100 ms
    gate.open();
    assertThat(eventually(() -> order.size() == 22)).isTrue();
    assertThat(order.indexOf("lane"))
        .as("the lane waited a whole standing interval; order %s", order).isLessThanOrEqualTo(1);
  }

  @Test
  void controlledDelayRefusesArgumentsNamingThem() {
    WorkerPool.Builder b = WorkerPool.builder();
    assertThatThrownBy(() -> b.controlledDelay(Duration.ZERO, ms(100)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("target=PT0S").hasMessageContaining("interval=PT0.1S");
    assertThatThrownBy(() -> b.controlledDelay(ms(-5), ms(100)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("target=PT-0.005S");
    assertThatThrownBy(() -> b.controlledDelay(ms(100), ms(100)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("0 < target < interval").hasMessageContaining("interval=PT0.1S");
    assertThatThrownBy(() -> b.controlledDelay(ms(200), ms(100)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("target=PT0.2S");
    assertThatThrownBy(() -> b.controlledDelay(null, ms(100)))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("target");
    assertThatThrownBy(() -> b.controlledDelay(ms(1), null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("interval");
    WorkerPool built = fixture.track(b.controlledDelay(ms(5), ms(100)).adaptiveLifo(true).build());
    assertThat(built.stats().capacity()).isPositive();
  }

  @Test
  void subpoolsTakeBothSettingsFromTheirParent() throws Exception {
    WorkerPool parent = pool(2, b -> b.controlledDelay(ms(1), ms(30)));
    WorkerPool sub = parent.newSubpool("sub", 1);
    fixture.occupy(sub);
    assertThat(failureOf(sub.submit(() -> { }))).isInstanceOf(PoolOverloadedException.class)
        .hasMessageContaining("subpool \"sub\"").hasMessageContaining("controlled-delay target");
    assertThat(sub.stats().expired()).isEqualTo(1);
    assertThat(parent.stats().expired()).as("counted in the parent too").isEqualTo(1);
    assertThat(sub.stats().submitted()).isEqualTo(1);

    WorkerPool lifoParent = pool(2, b -> b.adaptiveLifo(true).maxWaitInLine(HOUR));
    WorkerPool lifoSub = lifoParent.newSubpool("lifo-sub", 1);
    PoolFixture.Gate gate = fixture.occupy(lifoSub);
    List<Integer> order = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 4; i++) {
      int n = i;
      lifoSub.enqueue(() -> order.add(n));
    }
    passes(lifoSub, ms(150));
    gate.open();
    assertThat(eventually(() -> order.size() == 4)).isTrue();
    assertThat(order).containsExactly(3, 2, 1, 0);
  }

  @Test
  void nonblockingModeIgnoresBothAsItIgnoresLineDeadlines() {
    WorkerPool pool = pool(1, b -> b.nonblocking(true).controlledDelay(ms(1), ms(2))
        .adaptiveLifo(true));
    SerialExecutor lane = pool.newSerialExecutor();
    CountDownLatch seated = new CountDownLatch(1);
    lane.execute(seated::countDown);
    PoolFixture.await(seated);
    // the lane's task counted down inside its run: its seat is free only once the lane ends
    // (CI found a nonblocking occupy refused in that window; a blocking one would wait in line)
    PoolFixture.awaitIdle(pool, 1);
    PoolFixture.Gate gate = fixture.occupy(pool);
    assertThatThrownBy(() -> pool.execute(() -> { })).isInstanceOf(PoolOverloadedException.class);
    CountDownLatch laneRan = new CountDownLatch(1);
    lane.execute(laneRan::countDown); // admitted: waits in line
    WorkerPool clockPool = fixture.pool("clock", b -> b.capacity(1).maxIdle(HOUR));
    fixture.occupy(clockPool);
    passes(clockPool, ms(30)); // 15 intervals: a blocking line would stand and shed by now
    gate.open();
    PoolFixture.await(laneRan);
    assertThat(pool.stats().expired()).isZero();
  }
}
