package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Fifth review (r4), adversarial: a serial lane that expires while waiting for its first seat, and
 * a subpool task that expires in its full parent's line (DESIGN.md section 3 "Line deadlines",
 * guarantees 4, 6, 9, 13). Deterministic cases force one interleaving with latches; the stress
 * cases race expiry against hand-off, ride-along executes, close, cancel, shutdown(Now), resize
 * and due timers, and check at quiescence that each task ended exactly one way and the counters
 * are exact in the subpool and the parent.
 */
@Timeout(60)
class FifthReviewLaneExpiryTest {
  private static final Duration HOUR = Duration.ofHours(1);
  private static final Duration SHORT = Duration.ofMillis(30);
  /** Each stress race's time box (was 8 s each, 42 s for the class). */
  private static final Duration RACE = Duration.ofMillis(1500);
  @AutoClose final PoolFixture fixture = new PoolFixture();

  /** A task that records every way it ended; onExpired may be held on a latch. */
  static final class Probe extends CountingTask {
    final boolean admitted;
    final CountDownLatch heard = new CountDownLatch(1);
    volatile CountDownLatch hold;

    Probe() {
      this(false);
    }

    Probe(boolean admitted) {
      this.admitted = admitted;
    }

    @Override
    public void onExpired(PoolOverloadedException c) {
      super.onExpired(c);
      heard.countDown();
      CountDownLatch h = hold;
      if (h != null) {
        PoolFixture.await(h);
      }
    }
  }

  private WorkerPool pool(String base, int capacity, Duration maxWaitInLine) {
    return fixture.track(WorkerPool.builder().name(PoolFixture.uniqueName(base)).capacity(capacity)
        .maxIdle(HOUR).maxWaitInLine(maxWaitInLine).build());
  }

  private static boolean eventually(BooleanSupplier c) {
    return PoolFixture.waitUntil(Duration.ofSeconds(20), c);
  }

  private static void spin(long nanos) {
    PoolFixture.spinFor(nanos);
  }

  private static void assertExact(WorkerPool p, long handedBack) {
    PoolStats s = p.stats();
    assertThat(s.submitted()).as("%s: submitted == completed + failed + handedBack", s)
        .isEqualTo(s.completed() + s.failed() + handedBack);
    assertThat(s.waiting()).as("%s: waiting", s).isZero();
  }

  // ---------------------------------------------------------------------------------------------
  // Deterministic interleavings

  /**
   * A plain {@code execute} on a subpool with a free subpool seat returns at once (accepted: it
   * does not block, so it cannot throw later); if its task then waits in the full parent's line
   * past the inherited maxWaitInLine it is dropped, and a plain Runnable has no handle, future or
   * callback through which its caller could hear of it (guarantees 4 and 5). On a pool the same
   * execute blocks and throws PoolOverloadedException at the deadline.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"execute", "tryExecute(timeout)"})
  void aSubpoolExecuteThatReturnedIsNeverDroppedSilently(String door) throws Exception {
    WorkerPool parent = pool("r4-sub-exec", 1, SHORT);
    WorkerPool sub = parent.newSubpool("sub", 2);
    PoolFixture.Gate gate = fixture.occupy(parent);
    AtomicInteger ran = new AtomicInteger();
    if (door.equals("execute")) {
      sub.execute(ran::incrementAndGet); // a subpool seat is free: returns at once
    } else {
      assertThat(sub.tryExecute(ran::incrementAndGet, Duration.ofSeconds(5))).isTrue();
    }
    TaskHandle canary = parent.enqueue(() -> { });
    assertThat(eventually(canary::isExpired)).isTrue(); // every earlier deadline passed
    gate.open();
    sub.shutdown();
    parent.shutdown();
    assertThat(parent.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    assertThat(ran.get()).as("an execute that returned normally: its task ran (or the call threw);"
        + " sub stats %s", sub.stats()).isEqualTo(1);
  }

  /**
   * A lane that expired in a pool that is then shut down now: the pool does not terminate (and
   * awaitTermination says false) while a task of the lane is still hearing onExpired; after, it
   * terminates, the counters are exact and nothing was handed back.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"pool", "subpool"})
  void anExpiredLaneHoldsTerminationUntilEveryOnExpiredRan(String where) throws Exception {
    WorkerPool parent = pool("r4-lane-hold", 1, SHORT);
    WorkerPool pool = where.equals("pool") ? parent : parent.newSubpool("sub", 1);
    PoolFixture.Gate gate = fixture.occupy(pool);
    SerialExecutor lane = pool.newSerialExecutor();
    Probe a = new Probe();
    Probe b = new Probe();
    CountDownLatch hold = new CountDownLatch(1);
    b.hold = hold;
    lane.execute(a);
    lane.execute(b);
    PoolFixture.await(b.heard); // b is inside onExpired, held
    PoolFixture.await(a.heard);
    assertThat(b.heardOn.getName()).doesNotContain("timer");
    List<Runnable> back = new ArrayList<>(parent.shutdownNow());
    gate.open();
    assertThat(pool.awaitTermination(300, TimeUnit.MILLISECONDS))
        .as("terminated while onExpired still runs").isFalse();
    assertThat(parent.awaitTermination(50, TimeUnit.MILLISECONDS)).isFalse();
    hold.countDown();
    assertThat(parent.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    assertThat(pool.isTerminated()).isTrue();
    assertThat(back).as("expired tasks are not handed back").doesNotContain(a, b);
    assertThat(a.ran.get() + b.ran.get()).isZero();
    assertThat(a.expired.get() + b.expired.get()).isEqualTo(2);
    assertThat(pool.stats().expired()).isEqualTo(2);
    assertThat(parent.stats().expired()).isEqualTo(2);
    assertExact(pool, back.size());
    assertExact(parent, back.size());
  }

  /**
   * A subpool task that expires in the full parent's line keeps its subpool seat until its
   * onExpired returned: the next task in the subpool's line is forwarded only then, and neither
   * the subpool nor the parent terminates while the callback runs.
   */
  @Test
  void aSubpoolTaskExpiringInTheParentKeepsItsSeatUntilItHeard() throws Exception {
    WorkerPool parent = pool("r4-sub-hold", 1, HOUR);
    WorkerPool sub = parent.newSubpool("sub", 1);
    PoolFixture.Gate gate = fixture.occupy(parent);
    Probe first = new Probe();
    CountDownLatch hold = new CountDownLatch(1);
    first.hold = hold;
    TaskHandle h1 = sub.enqueue(first, SHORT); // a subpool seat, then the parent's line
    Probe second = new Probe();
    TaskHandle h2 = sub.enqueue(second, HOUR); // the subpool's line
    PoolFixture.await(first.heard);
    assertThat(h1.isExpired()).isTrue();
    assertThat(h1.isDone()).isTrue();
    assertThat(first.heardOn.getName()).doesNotContain("timer");
    assertThat(sub.stats().expired()).isEqualTo(1);
    assertThat(parent.stats().expired()).isEqualTo(1);
    assertThat(h2.isDone()).isFalse();
    sub.shutdown();
    parent.shutdown();
    gate.open();
    assertThat(sub.awaitTermination(300, TimeUnit.MILLISECONDS))
        .as("subpool terminated while onExpired still runs").isFalse();
    assertThat(parent.isTerminated()).isFalse();
    hold.countDown();
    assertThat(parent.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    assertThat(second.ran).as("the seat came back and served the subpool's line").hasValue(1);
    assertThat(first.ran).hasValue(0);
    assertThat(first.expired).hasValue(1);
    assertThat(first.cancels).hasValue(0);
    assertExact(sub, 0);
    assertExact(parent, 0);
  }

  /** A subpool lane that got a subpool seat waits in the full parent's line past any deadline. */
  @Test
  void aSeatedSubpoolLaneNeverExpiresInTheParentsLine() throws Exception {
    WorkerPool parent = pool("r4-sub-lane", 1, SHORT);
    WorkerPool sub = parent.newSubpool("sub", 2);
    PoolFixture.Gate gate = fixture.occupy(parent);
    SerialExecutor lane = sub.newSerialExecutor();
    Probe a = new Probe();
    Probe b = new Probe();
    lane.execute(a);
    TaskHandle canary = parent.enqueue(() -> { });
    assertThat(eventually(canary::isExpired)).isTrue(); // a's lane deadline, if any, passed too
    lane.execute(b);
    TaskHandle canary2 = parent.enqueue(() -> { });
    assertThat(eventually(canary2::isExpired)).isTrue();
    gate.open();
    assertThat(eventually(() -> a.ran.get() == 1 && b.ran.get() == 1)).isTrue();
    assertThat(a.expired.get() + b.expired.get()).isZero();
    assertThat(sub.stats().expired()).isZero();
    assertThat(parent.stats().expired()).as("the two canaries only").isEqualTo(2);
  }

  /**
   * A subpool of a subpool: the leaf's task gets a free seat in the leaf and in the middle
   * subpool, and waits in the full root's line. Its own deadline (enqueue(task, Duration)) must
   * still hold there, as it does for a one-level subpool ("the per-task form works on them").
   */
  @Test
  void aNestedSubpoolsTaskExpiresInTheRootsLine() throws Exception {
    WorkerPool root = pool("r4-nested", 1, HOUR);
    WorkerPool mid = root.newSubpool("mid", 2);
    WorkerPool leaf = mid.newSubpool("leaf", 2);
    PoolFixture.Gate gate = fixture.occupy(root);
    Probe p = new Probe();
    TaskHandle h = leaf.enqueue(p, SHORT);
    TaskHandle canary = root.enqueue(() -> { }, SHORT); // joins later, same deadline
    assertThat(eventually(canary::isExpired)).isTrue();
    boolean expiredInTime = PoolFixture.waitUntil(Duration.ofSeconds(2), h::isExpired);
    gate.open();
    root.shutdown();
    assertThat(root.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    assertThat(expiredInTime).as("the leaf task expired in the root's line (ran %s)", p.ran)
        .isTrue();
    assertThat(p.ran).hasValue(0);
    assertThat(p.expired).hasValue(1);
    assertThat(leaf.stats().expired()).isEqualTo(1);
    assertThat(root.stats().expired()).isEqualTo(2);
  }

  /**
   * A nested subpool's task that waits in the FULL middle subpool's line (as forwarded admitted
   * work with what is left of its deadline) expires there: handle, callback and counters agree,
   * and the leaf's seat comes back.
   */
  @Test
  void aNestedSubpoolsTaskExpiresInTheMiddlesLine() throws Exception {
    WorkerPool root = pool("r4-nested-mid", 2, HOUR);
    WorkerPool mid = root.newSubpool("mid", 1);
    WorkerPool leaf = mid.newSubpool("leaf", 1);
    PoolFixture.Gate gate = fixture.occupy(mid); // mid's only seat
    Probe p = new Probe();
    TaskHandle h = leaf.enqueue(p, SHORT);
    PoolFixture.await(p.heard);
    assertThat(h.isExpired()).isTrue();
    assertThat(p.heardOn.getName()).doesNotContain("timer");
    assertThat(leaf.stats().expired()).isEqualTo(1);
    assertThat(mid.stats().expired()).isEqualTo(1);
    assertThat(root.stats().expired()).isEqualTo(1);
    Probe q = new Probe();
    TaskHandle hq = leaf.enqueue(q, HOUR); // the leaf's seat came back
    gate.open();
    assertThat(eventually(() -> q.ran.get() == 1)).isTrue();
    assertThat(hq.isExpired()).isFalse();
    root.shutdown();
    assertThat(root.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    assertThat(p.ran).hasValue(0);
    assertExact(leaf, 0);
    assertExact(mid, 0);
    assertExact(root, 0);
  }

  /**
   * A subpool task that waited in the subpool's line first carries what is LEFT of its deadline
   * into the parent's line, not a fresh one: the deadline its expiry names is at most what was left
   * when it was forwarded (under 200 ms of 600), whenever its notice arrives. (The test timed the
   * notice against 600 ms from the forwarding, which a loaded machine's helper thread missed once
   * at 1.25 s.)
   */
  @Test
  void aSubpoolTaskCarriesTheRestOfItsDeadlineNotAFreshOne() throws Exception {
    WorkerPool parent = pool("r4-sub-rest", 1, HOUR);
    WorkerPool sub = parent.newSubpool("sub", 1);
    PoolFixture.Gate gate = fixture.occupy(parent);
    TaskHandle first = sub.enqueue(() -> { }); // the subpool's seat, waiting in the parent's line
    Duration maxWait = Duration.ofMillis(600);
    Probe p = new Probe();
    long submitted = System.nanoTime();
    TaskHandle h = sub.enqueue(p, maxWait); // the subpool's line
    Thread.sleep(400); // not synchronization: the task uses up part of its deadline here
    long forwarded = System.nanoTime();
    long leftAtMost = maxWait.toNanos() - (forwarded - submitted);
    assertThat(first.cancel()).isTrue(); // its subpool seat goes to p, which joins the parent line
    PoolFixture.await(p.heard);
    assertThat(h.isExpired()).isTrue();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("past its deadline of (\\d+)(ns|ms)")
        .matcher(p.cause.getMessage());
    assertThat(m.find()).as("a line deadline's expiry: %s", p.cause.getMessage()).isTrue();
    long deadline = Long.parseLong(m.group(1)) * (m.group(2).equals("ms") ? 1_000_000L : 1L);
    assertThat(deadline).as("expired on what was left, not a fresh %s: %s", maxWait,
        p.cause.getMessage()).isLessThanOrEqualTo(leftAtMost);
    gate.open();
    assertThat(sub.stats().expired()).isEqualTo(1);
  }

  /**
   * Reboot after a lane expired and the pool terminated: the lane (not admitted) is admitted
   * afresh; waiting for its first seat again it expires again; once it gets a seat it never does.
   */
  @Test
  void anExpiredLaneAcrossShutdownAndRebootIsAdmittedAfresh() throws Exception {
    WorkerPool pool = pool("r4-lane-reboot", 1, SHORT);
    PoolFixture.Gate gate = fixture.occupy(pool);
    SerialExecutor lane = pool.newSerialExecutor();
    Probe a = new Probe();
    lane.execute(a);
    PoolFixture.await(a.heard);
    gate.open();
    pool.shutdown();
    assertThat(pool.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    pool.reboot();
    PoolFixture.Gate gate2 = fixture.occupy(pool);
    Probe b = new Probe();
    lane.execute(b);
    PoolFixture.await(b.heard);
    assertThat(pool.stats().expired()).isEqualTo(2);
    gate2.open();
    Probe c = new Probe();
    lane.execute(c);
    assertThat(eventually(() -> c.ran.get() == 1)).isTrue();
    PoolFixture.Gate gate3 = fixture.occupy(pool);
    Probe d = new Probe();
    lane.execute(d); // admitted lane: waits past the deadline
    TaskHandle canary = pool.enqueue(() -> { });
    assertThat(eventually(canary::isExpired)).isTrue();
    gate3.open();
    assertThat(eventually(() -> d.ran.get() == 1)).isTrue();
    assertThat(a.ran.get() + b.ran.get() + d.expired.get() + c.expired.get()).isZero();
    assertThat(pool.stats().expired()).isEqualTo(3);
    assertThat(eventually(() -> pool.stats().busy() == 0)).isTrue();
    assertExact(pool, 0);
  }

  // ---------------------------------------------------------------------------------------------
  // Stress: lane expiry racing everything

  /**
   * A lane waits for its first seat under a deadline of 50 us to 1 ms; at about that moment one
   * racer acts (ride-along execute, executeAdmitted, a due lane timer, close, hand-off, resize,
   * shutdown, shutdownNow; parent or subpool). Each task ends exactly one way, admitted work never
   * expires, counters are exact, the pool terminates.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"pool", "subpool"})
  @Tag("stress")
  @Timeout(60)
  void laneExpiryRacingEveryOtherMove(String where) throws Exception {
    long end = System.nanoTime() + PoolFixture.stress(RACE).toNanos();
    int rounds = 0;
    int expired = 0;
    while (System.nanoTime() < end) {
      expired += laneRound(where.equals("subpool"), rounds++);
    }
    System.out.printf("FifthReviewLaneExpiryTest lanes %s: %d rounds, %d tasks expired%n", where,
        rounds, expired);
    assertThat(expired).as("expiry was exercised").isPositive();
  }

  private int laneRound(boolean onSub, int round) throws Exception {
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    long deadline = 50_000 + rnd.nextInt(950_000);
    WorkerPool parent = WorkerPool.builder().name(PoolFixture.uniqueName("r4-lane-race"))
        .capacity(1).maxIdle(HOUR).maxWaitInLine(Duration.ofNanos(deadline)).build();
    WorkerPool pool = onSub ? parent.newSubpool("sub", 1) : parent;
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch arrived = new CountDownLatch(1);
    pool.execute(() -> {
      arrived.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    PoolFixture.await(arrived);
    SerialExecutor lane = pool.newSerialExecutor();
    Map<Object, Probe> all = Collections.synchronizedMap(new IdentityHashMap<>());
    List<Probe> accepted = Collections.synchronizedList(new ArrayList<>());
    List<ScheduledFuture<?>> timers = Collections.synchronizedList(new ArrayList<>());
    List<Runnable> handedBack = Collections.synchronizedList(new ArrayList<>());
    Probe first = new Probe();
    all.put(first, first);
    lane.execute(first);
    accepted.add(first);
    int move = round % 10;
    boolean closed = move == 3;
    long t0 = System.nanoTime();
    CountDownLatch go = new CountDownLatch(1);
    PoolFixture.Background racer = PoolFixture.background("racer", () -> {
      PoolFixture.await(go);
      spin(Math.max(0, deadline - 30_000 + rnd.nextInt(60_000) - (System.nanoTime() - t0)));
      try {
        switch (move) {
          case 0 -> {
            for (int i = 0; i < 3; i++) {
              Probe p = new Probe();
              all.put(p, p);
              lane.execute(p);
              accepted.add(p);
            }
          }
          case 1 -> {
            Probe p = new Probe(true);
            all.put(p, p);
            lane.executeAdmitted(p);
            accepted.add(p);
          }
          case 2 -> {
            Probe p = new Probe(true);
            all.put(p, p);
            ScheduledFuture<?> f = lane.schedule(p, 0, TimeUnit.NANOSECONDS);
            all.put(f, p);
            timers.add(f);
          }
          case 3 -> lane.close();
          case 4 -> release.countDown();
          case 5 -> pool.resize(2);
          case 6 -> parent.shutdown();
          case 7 -> handedBack.addAll(parent.shutdownNow());
          case 8 -> handedBack.addAll(pool.shutdownNow());
          default -> {
            Probe p = new Probe();
            all.put(p, p);
            lane.execute(p);
            accepted.add(p);
            release.countDown();
          }
        }
      } catch (RejectedExecutionException refused) {
        // refused at the call: not accepted (the probe stays out of `accepted`)
      }
    });
    go.countDown();
    racer.join();
    assertThat(racer.failures()).isZero();
    release.countDown();
    if (!parent.isShutdown()) {
      parent.shutdown();
    }
    assertThat(parent.awaitTermination(20, TimeUnit.SECONDS)).as("terminates").isTrue();
    assertThat(pool.isTerminated()).isTrue();
    Map<Probe, Integer> back = new IdentityHashMap<>();
    for (Runnable r : handedBack) {
      Probe p = all.get(r);
      if (p != null) {
        back.merge(p, 1, Integer::sum);
      }
    }
    int expired = 0;
    for (Probe p : accepted) {
      int ways = p.ran.get() + p.expired.get() + back.getOrDefault(p, 0);
      if (closed) {
        assertThat(ways).as("round %d move %d: at most one way", round, move).isLessThanOrEqualTo(1);
      } else {
        assertThat(ways).as("round %d move %d: exactly one way", round, move).isEqualTo(1);
      }
      if (p.admitted) {
        assertThat(p.expired).as("admitted work never expires").hasValue(0);
      }
      expired += p.expired.get();
    }
    for (ScheduledFuture<?> f : timers) {
      Probe p = all.get(f);
      int ways = p.ran.get() + p.expired.get() + back.getOrDefault(p, 0)
          + (f.isCancelled() && p.ran.get() == 0 && back.getOrDefault(p, 0) == 0 ? 1 : 0);
      assertThat(ways).as("round %d: timer ended one way", round).isEqualTo(1);
      assertThat(p.expired).hasValue(0);
      assertThat(f.isDone()).as("no pending future on a terminated pool").isTrue();
      expired += 0;
    }
    assertThat(pool.stats().expired()).as("round %d move %d", round, move).isEqualTo(expired);
    assertThat(parent.stats().expired()).isEqualTo(expired);
    assertExact(pool, handedBack.size());
    if (pool != parent) {
      assertExact(parent, handedBack.size());
    }
    return expired;
  }

  /**
   * A ride-along execute and the seat's release both land at the lane's deadline. If every task
   * of the lane expired (none ran), the lane must be left not admitted: with the pool full again,
   * its next execute waits under the deadline and expires. (A ride-along that finds the flag
   * cleared by the expiry re-dispatches the now empty lane; with the freed seat, its empty carrier
   * would admit the lane though no task of it ever got a seat.)
   */
  @Test
  @Tag("stress")
  @Timeout(60)
  void aLaneWhoseTasksAllExpiredIsNotAdmittedByARideAlongsEmptyCarrier() throws Exception {
    long end = System.nanoTime() + PoolFixture.stress(RACE).toNanos();
    int rounds = 0;
    int allExpired = 0;
    while (System.nanoTime() < end) {
      rounds++;
      ThreadLocalRandom rnd = ThreadLocalRandom.current();
      long deadline = 100_000 + rnd.nextInt(400_000);
      WorkerPool pool = WorkerPool.builder().name(PoolFixture.uniqueName("r4-ride"))
          .capacity(1).maxIdle(HOUR).maxWaitInLine(Duration.ofNanos(deadline)).build();
      CountDownLatch release = new CountDownLatch(1);
      CountDownLatch arrived = new CountDownLatch(1);
      pool.execute(() -> {
        arrived.countDown();
        PoolFixture.awaitQuietly(release, Duration.ofSeconds(20));
      });
      PoolFixture.await(arrived);
      SerialExecutor lane = pool.newSerialExecutor();
      Probe p1 = new Probe();
      Probe p2 = new Probe();
      long t0 = System.nanoTime();
      lane.execute(p1);
      CountDownLatch go = new CountDownLatch(2);
      long aim = deadline - 20_000 + rnd.nextInt(40_000);
      PoolFixture.Background rider = PoolFixture.background("rider", () -> {
        go.countDown();
        PoolFixture.await(go);
        spin(Math.max(0, aim - (System.nanoTime() - t0)));
        lane.execute(p2);
      });
      go.countDown();
      PoolFixture.await(go);
      spin(Math.max(0, aim + rnd.nextInt(20_000) - (System.nanoTime() - t0)));
      release.countDown();
      rider.join();
      assertThat(rider.failures()).isZero();
      assertThat(eventually(() -> p1.ran.get() + p1.expired.get() == 1
          && p2.ran.get() + p2.expired.get() == 1)).isTrue();
      if (p1.expired.get() == 1 && p2.expired.get() == 1) {
        allExpired++;
        assertThat(eventually(() -> pool.stats().busy() == 0)).isTrue();
        CountDownLatch release2 = new CountDownLatch(1);
        CountDownLatch arrived2 = new CountDownLatch(1);
        pool.execute(() -> {
          arrived2.countDown();
          PoolFixture.awaitQuietly(release2, Duration.ofSeconds(20));
        });
        PoolFixture.await(arrived2);
        Probe p3 = new Probe();
        lane.execute(p3);
        TaskHandle canary = pool.enqueue(() -> { });
        assertThat(eventually(canary::isExpired)).isTrue();
        boolean expired = PoolFixture.waitUntil(Duration.ofSeconds(2), () -> p3.expired.get() == 1);
        release2.countDown();
        assertThat(expired).as("round %d: the lane was left admitted though no task of it ran"
            + " (p3 ran %s)", rounds, p3.ran).isTrue();
      }
      pool.shutdown();
      assertThat(pool.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
      assertExact(pool, 0);
    }
    System.out.printf("FifthReviewLaneExpiryTest ride-along: %d rounds, %d all expired%n", rounds,
        allExpired);
    assertThat(allExpired).as("the race was exercised").isPositive();
  }

  /**
   * The same ride-along re-dispatch, with the line's one place (maxWaiting 1) taken by a plain
   * enqueue at the moment of expiry: a rejection is counted in {@code rejected} only if a call
   * threw it (guarantees 5 and 13).
   */
  @Test
  @Tag("stress")
  @Timeout(60)
  void rejectedCountsOnlyRejectionsACallThrew() throws Exception {
    long end = System.nanoTime() + PoolFixture.stress(RACE).toNanos();
    int rounds = 0;
    int threw = 0;
    while (System.nanoTime() < end) {
      rounds++;
      ThreadLocalRandom rnd = ThreadLocalRandom.current();
      long deadline = 100_000 + rnd.nextInt(400_000);
      WorkerPool pool = WorkerPool.builder().name(PoolFixture.uniqueName("r4-rejected"))
          .capacity(1).maxIdle(HOUR).maxWaiting(1).maxWaitInLine(Duration.ofNanos(deadline))
          .build();
      CountDownLatch release = new CountDownLatch(1);
      CountDownLatch arrived = new CountDownLatch(1);
      pool.execute(() -> {
        arrived.countDown();
        PoolFixture.awaitQuietly(release, Duration.ofSeconds(20));
      });
      PoolFixture.await(arrived);
      SerialExecutor lane = pool.newSerialExecutor();
      AtomicInteger refusals = new AtomicInteger();
      long t0 = System.nanoTime();
      lane.execute(new Probe());
      CountDownLatch go = new CountDownLatch(2);
      long aim = deadline - 20_000 + rnd.nextInt(40_000);
      PoolFixture.Background rider = PoolFixture.background("rider", () -> {
        go.countDown();
        PoolFixture.await(go);
        spin(Math.max(0, aim - (System.nanoTime() - t0)));
        try {
          lane.execute(new Probe());
        } catch (RejectedExecutionException refused) {
          refusals.incrementAndGet();
        }
      });
      go.countDown();
      PoolFixture.await(go);
      spin(Math.max(0, aim + rnd.nextInt(20_000) - (System.nanoTime() - t0)));
      try {
        pool.enqueue(new Probe(), HOUR);
      } catch (RejectedExecutionException refused) {
        refusals.incrementAndGet();
      }
      rider.join();
      assertThat(rider.failures()).isZero();
      threw += refusals.get();
      assertThat(pool.stats().rejected()).as("round %d: rejected == refusals thrown", rounds)
          .isEqualTo(refusals.get());
      release.countDown();
      pool.shutdown();
      assertThat(pool.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
      assertExact(pool, 0);
    }
    System.out.printf("FifthReviewLaneExpiryTest rejected: %d rounds, %d refusals%n", rounds, threw);
    assertThat(threw).as("the line was full at times").isPositive();
  }

  // ---------------------------------------------------------------------------------------------
  // Stress: a subpool task's expiry in the parent's line racing everything

  /**
   * Subpool tasks each hold a subpool seat and wait in the full parent's line under their own
   * deadline (enqueue(task, Duration), 50 us to 1 ms); at about that moment a racer cancels their
   * handles, hands the parent's seat off, or shuts down (subpool or parent, now or gracefully).
   * Each task ends exactly one way, its handle agrees, expired is exact in both, both terminate.
   */
  @Test
  @Tag("stress")
  @Timeout(60)
  void subpoolExpiryInTheParentRacingCancelShutdownAndHandOff() throws Exception {
    long end = System.nanoTime() + PoolFixture.stress(RACE).toNanos();
    int rounds = 0;
    int expired = 0;
    while (System.nanoTime() < end) {
      expired += subRound(rounds++);
    }
    System.out.printf("FifthReviewLaneExpiryTest subpool: %d rounds, %d tasks expired%n", rounds,
        expired);
    assertThat(expired).as("expiry was exercised").isPositive();
  }

  private int subRound(int round) throws Exception {
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    long deadline = 50_000 + rnd.nextInt(950_000);
    WorkerPool parent = WorkerPool.builder().name(PoolFixture.uniqueName("r4-sub-race"))
        .capacity(1).maxIdle(HOUR).maxWaitInLine(Duration.ofNanos(1 + rnd.nextInt(2_000_000)))
        .build();
    WorkerPool sub = parent.newSubpool("sub", 3);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch arrived = new CountDownLatch(1);
    parent.execute(() -> {
      arrived.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    PoolFixture.await(arrived);
    List<Probe> probes = new ArrayList<>();
    List<TaskHandle> handles = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Probe p = new Probe();
      probes.add(p);
      // one waits on the pool's (inherited) deadline, the others on their own
      handles.add(i == 0 ? sub.enqueue(p) : sub.enqueue(p, Duration.ofNanos(deadline)));
    }
    Probe queued = new Probe(); // in the subpool's line: forwarded when a subpool seat comes back
    probes.add(queued);
    handles.add(sub.enqueue(queued, Duration.ofNanos(deadline * 2)));
    int move = round % 6;
    boolean[] cancelled = new boolean[probes.size()];
    List<Runnable> handedBack = Collections.synchronizedList(new ArrayList<>());
    long t0 = System.nanoTime();
    CountDownLatch go = new CountDownLatch(1);
    PoolFixture.Background racer = PoolFixture.background("racer", () -> {
      PoolFixture.await(go);
      spin(Math.max(0, deadline - 30_000 + rnd.nextInt(60_000) - (System.nanoTime() - t0)));
      switch (move) {
        case 0 -> {
          for (int i = 0; i < handles.size(); i++) {
            cancelled[i] = handles.get(i).cancel();
          }
        }
        case 1 -> release.countDown();
        case 2 -> handedBack.addAll(sub.shutdownNow());
        case 3 -> handedBack.addAll(parent.shutdownNow());
        case 4 -> sub.shutdown();
        default -> {
          cancelled[1] = handles.get(1).cancel();
          release.countDown();
        }
      }
    });
    go.countDown();
    racer.join();
    assertThat(racer.failures()).isZero();
    release.countDown();
    if (!parent.isShutdown()) {
      parent.shutdown();
    }
    assertThat(parent.awaitTermination(20, TimeUnit.SECONDS)).as("round %d terminates", round)
        .isTrue();
    assertThat(sub.isTerminated()).isTrue();
    int expired = 0;
    for (int i = 0; i < probes.size(); i++) {
      Probe p = probes.get(i);
      TaskHandle h = handles.get(i);
      int back = Collections.frequency(handedBack, p);
      int ways = p.ran.get() + p.expired.get() + back + (cancelled[i] ? 1 : 0);
      assertThat(ways).as("round %d move %d task %d: exactly one way (ran %s expired %s back %s"
          + " cancelled %s)", round, move, i, p.ran, p.expired, back, cancelled[i]).isEqualTo(1);
      assertThat(h.isDone()).isTrue();
      assertThat(h.isExpired()).as("round %d task %d handle agrees", round, i)
          .isEqualTo(p.expired.get() == 1);
      assertThat(h.isCancelled()).isEqualTo(cancelled[i]);
      expired += p.expired.get();
    }
    assertThat(sub.stats().expired()).as("round %d move %d", round, move).isEqualTo(expired);
    assertThat(parent.stats().expired()).isEqualTo(expired);
    assertExact(sub, handedBack.size());
    assertExact(parent, handedBack.size());
    return expired;
  }
}
