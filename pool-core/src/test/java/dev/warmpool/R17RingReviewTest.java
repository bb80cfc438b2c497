package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.ref.WeakReference;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Review r17 of the waiting line as an array ring (issue 33): what the ring keeps that the linked
 * line it replaced let go (F1, F2: failed 3/3 each before the fixes, and again with either fix
 * taken out), and every door under every line policy. Public API, with one white-box read of the
 * ring's length (the only window on it).
 */
class R17RingReviewTest {
  private static final Duration HOUR = Duration.ofHours(1);

  @AutoClose
  final PoolFixture fixture = new PoolFixture();

  /** A task that holds 64 KB, as a request's captured state would. */
  private static final class Heavy implements Runnable {
    final byte[] ballast = new byte[1 << 16];

    @Override
    public void run() {
      ballast[0]++;
    }
  }

  private static int ringSlots(WorkerPool pool) throws ReflectiveOperationException {
    WaitingLine line = ((BoundedPool) pool).admission.line;
    Field ring = WaitingLine.class.getDeclaredField("ring");
    ring.setAccessible(true);
    return ((Object[]) ring.get(line)).length;
  }

  /** Collects garbage until every reference is cleared or 5 s pass; returns how many are left. */
  private static int stillReachable(List<WeakReference<Object>> refs) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    int left;
    do {
      System.gc();
      Thread.sleep(10); // lets reference processing run; not a synchronisation
      left = 0;
      for (WeakReference<Object> r : refs) {
        if (r.get() != null) {
          left++;
        }
      }
    } while (left > 0 && System.nanoTime() - end < 0);
    return left;
  }

  /**
   * Enqueues 100 heavy tasks, each between two light ones, then cancels the heavy ones (each waits
   * between live entries by then); only weak references to them survive this call.
   */
  private static List<WeakReference<Object>> heavyBetweenLight(WorkerPool pool, Runnable light,
      Duration maxWait, boolean cancel) {
    List<TaskHandle> handles = new ArrayList<>();
    List<WeakReference<Object>> refs = new ArrayList<>();
    pool.enqueue(light);
    for (int i = 0; i < 100; i++) {
      Heavy task = new Heavy();
      handles.add(maxWait == null ? pool.enqueue(task) : pool.enqueue(task, maxWait));
      refs.add(new WeakReference<>(task));
      pool.enqueue(light);
    }
    if (cancel) {
      for (TaskHandle h : handles) {
        assertThat(h.cancel(false)).isTrue();
      }
    }
    return refs;
  }

  /**
   * F1 (fixed): a burst's ring was given back only when the line emptied. A line that stays short
   * but never empty after a burst (a standing line: the overload adaptive LIFO and controlled delay
   * are for) kept the burst's whole ring, and each rebuild of it allocated the burst's length
   * again. It now shrinks once fewer than one slot in 8 holds an entry.
   */
  @Test
  void memory_aBurstsRingIsGivenBackOnceTheLineIsShortAgain() throws Exception {
    WorkerPool pool = fixture.pool("r17burst", b -> b.capacity(1).maxIdle(HOUR));
    PoolFixture.Gate gate = fixture.occupy(pool);
    AtomicInteger ran = new AtomicInteger();
    List<TaskHandle> burst = new ArrayList<>();
    for (int i = 0; i < 50_000; i++) {
      burst.add(pool.enqueue(ran::incrementAndGet));
    }
    for (int i = 0; i < burst.size() - 10; i++) { // withdrawn oldest first: ten stay in line
      assertThat(burst.get(i).cancel(false)).isTrue();
    }
    burst.clear();
    assertThat(pool.stats().waiting()).isEqualTo(10);

    int slots = ringSlots(pool);

    finishAndCount(pool, gate, ran, 10);
    assertThat(slots).as("ring slots kept for a line of 10 after a burst of 50,000")
        .isLessThanOrEqualTo(1024);
  }

  /**
   * F2 (fixed): a cancelled task stayed reachable from its stale slot until an end of the line or
   * a rebuild swept it; with the head stuck, up to (live entries + 16) withdrawn tasks, with all
   * they captured, were kept for as long as the line did not move. A withdrawn entry now gives up
   * its task; the stale slot keeps only the 32-byte envelope.
   */
  @Test
  void memory_aCancelledTaskIsNotKeptReachableByTheWaitingLine() throws Exception {
    WorkerPool pool = fixture.pool("r17stale", b -> b.capacity(1).maxIdle(HOUR));
    PoolFixture.Gate gate = fixture.occupy(pool);
    AtomicInteger ran = new AtomicInteger();
    List<WeakReference<Object>> cancelled =
        heavyBetweenLight(pool, ran::incrementAndGet, null, true);
    assertThat(pool.stats().waiting()).isEqualTo(101);

    int kept = stillReachable(cancelled);

    finishAndCount(pool, gate, ran, 101);
    assertThat(kept).as("cancelled tasks still reachable while the line waits").isZero();
  }

  /** F2, by expiry: tasks shed by their line deadline are kept by their stale slots the same way. */
  @Test
  void memory_anExpiredTaskIsNotKeptReachableByTheWaitingLine() throws Exception {
    WorkerPool pool = fixture.pool("r17expired", b -> b.capacity(1).maxIdle(HOUR));
    PoolFixture.Gate gate = fixture.occupy(pool);
    AtomicInteger ran = new AtomicInteger();
    // the timer held while the line forms: each heavy task expires between two light ones
    java.util.concurrent.CountDownLatch timer = PoolFixture.holdSharedTimer();
    List<WeakReference<Object>> shed;
    try {
      shed = heavyBetweenLight(pool, ran::incrementAndGet, Duration.ofMillis(1), false);
    } finally {
      timer.countDown();
    }
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10), () -> pool.stats().expired() == 100))
        .isTrue();
    assertThat(pool.stats().waiting()).isEqualTo(101);

    int kept = stillReachable(shed);

    gate.open();
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ran.get()).isEqualTo(101);
    PoolStats s = pool.stats();
    assertThat(s.submitted()).isEqualTo(102).isEqualTo(s.completed());
    assertThat(s.expired()).isEqualTo(100);
    assertThat(s.failed() + s.rejected()).isZero();
    assertThat(kept).as("expired tasks still reachable while the line waits").isZero();
  }

  // ---------------------------------------------------------------------------------------------
  // Every door x every line policy x every shape: no plain envelope meets a deadline or a line
  // that keeps time (an IllegalStateException, a lost task), and the counts close at quiescence.

  private static final List<String> POLICIES =
      List.of("none", "maxWaitInLine", "controlledDelay", "adaptiveLifo", "lifo+deadline");

  private static WorkerPool.Builder policy(WorkerPool.Builder b, String policy) {
    return switch (policy) {
      case "none" -> b;
      case "maxWaitInLine" -> b.maxWaitInLine(Duration.ofMillis(3));
      case "controlledDelay" -> b.controlledDelay(Duration.ofMillis(1), Duration.ofMillis(5));
      case "adaptiveLifo" -> b.adaptiveLifo(true);
      default -> b.adaptiveLifo(true).maxWaitInLine(Duration.ofMillis(4));
    };
  }

  @Test
  void everyDoorUnderEveryLinePolicyLosesNoTaskAndThrowsNoStateError() throws Exception {
    List<String> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
    for (String policy : POLICIES) {
      for (String shape : List.of("pool", "subpool", "nested", "sharded")) {
        race(policy, shape, failures);
      }
    }
    assertThat(failures).isEmpty();
  }

  private void race(String policy, String shape, List<String> failures) throws Exception {
    WorkerPool root;
    WorkerPool target;
    switch (shape) {
      case "sharded" -> {
        root = fixture.track(ShardedPool.of(2, ShardedPool.Placement.ROUND_ROBIN,
            policy(WorkerPool.builder().name(PoolFixture.uniqueName("r17door")).capacity(1)
                .maxWaiting(40).maxIdle(HOUR), policy)));
        target = root;
      }
      case "subpool" -> {
        root = fixture.pool("r17door", b -> policy(b.capacity(2).maxWaiting(40).maxIdle(HOUR),
            policy));
        target = root.newSubpool("sub", 3, false, 30);
      }
      case "nested" -> {
        root = fixture.pool("r17door", b -> policy(b.capacity(2).maxWaiting(40).maxIdle(HOUR),
            policy));
        target = root.newSubpool("mid", 3, false, 30).newSubpool("leaf", 3, false, 30);
      }
      default -> {
        root = fixture.pool("r17door", b -> policy(b.capacity(2).maxWaiting(40).maxIdle(HOUR),
            policy));
        target = root;
      }
    }
    String at = policy + "/" + shape;
    AtomicInteger ran = new AtomicInteger();
    Runnable task = () -> {
      ran.incrementAndGet();
      PoolFixture.spinFor(java.util.concurrent.ThreadLocalRandom.current().nextInt(200_000));
    };
    SerialExecutor lane = target.newSerialExecutor();
    int threads = 4;
    int rounds = PoolFixture.stress(300);
    List<PoolFixture.Background> bg = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      bg.add(PoolFixture.background("r17door-" + t, () -> {
        java.util.concurrent.ThreadLocalRandom rnd = java.util.concurrent.ThreadLocalRandom.current();
        List<Object> handles = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
          try {
            switch (rnd.nextInt(11)) {
              case 0 -> target.execute(task);
              case 1 -> target.tryExecute(task);
              case 2 -> target.tryExecute(task, Duration.ofMillis(rnd.nextInt(3)));
              case 3 -> handles.add(target.enqueue(task));
              case 4 -> handles.add(target.enqueue(task, Duration.ofMillis(1 + rnd.nextInt(4))));
              case 5 -> handles.add(target.submit(() -> {
                task.run();
                return 1;
              }));
              case 6 -> lane.execute(task);
              case 7 -> handles.add(lane.enqueue(task));
              case 8 -> target.invokeAll(List.of(java.util.concurrent.Executors.callable(task),
                  java.util.concurrent.Executors.callable(task)));
              case 9 -> target.schedule(task, rnd.nextInt(2), TimeUnit.MILLISECONDS);
              default -> {
                if (!handles.isEmpty()) {
                  Object h = handles.remove(rnd.nextInt(handles.size()));
                  if (h instanceof TaskHandle th) {
                    th.cancel(rnd.nextBoolean());
                  } else {
                    ((java.util.concurrent.Future<?>) h).cancel(rnd.nextBoolean());
                  }
                }
              }
            }
          } catch (java.util.concurrent.RejectedExecutionException expected) {
            // overloaded, expired in line, or closed: counted as a rejection or an expiry
          } catch (IllegalStateException | NullPointerException | ClassCastException bad) {
            failures.add(at + ": " + bad);
            bad.printStackTrace();
          }
        }
      }));
    }
    for (PoolFixture.Background b : bg) {
      b.join();
      if (b.failures() != 0) {
        failures.add(at + ": a caller thread failed");
      }
    }
    lane.close();
    target.shutdown();
    root.shutdown();
    if (!target.awaitTermination(20, TimeUnit.SECONDS)) {
      failures.add(at + ": target never terminated, " + target.stats());
    }
    if (!root.awaitTermination(20, TimeUnit.SECONDS)) {
      failures.add(at + ": root never terminated, " + root.stats());
    }
    PoolStats s = target.stats();
    if (s.submitted() != s.completed() || s.failed() != 0 || s.waiting() != 0
        || ran.get() != s.completed()) {
      failures.add(at + ": counts do not close: ran " + ran.get() + ", " + s);
    }
  }

  /**
   * shutdownNow and reboot while every door is in use, under every line policy: drained entries
   * (the ring given back), reused lane entries and stale slots meet the next generation. The
   * counts close over all generations: submitted = completed + handed back.
   */
  @Test
  void shutdownNowAndRebootUnderEveryLinePolicyKeepTheCountsExact() throws Exception {
    List<String> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
    for (String policy : POLICIES) {
      for (boolean sharded : new boolean[] {false, true}) {
        cycles(policy, sharded, failures);
      }
    }
    assertThat(failures).isEmpty();
  }

  private void cycles(String policy, boolean sharded, List<String> failures) throws Exception {
    WorkerPool pool = sharded
        ? fixture.track(ShardedPool.of(2, ShardedPool.Placement.ROUND_ROBIN,
            policy(WorkerPool.builder().name(PoolFixture.uniqueName("r17now")).capacity(1)
                .maxWaiting(40).maxIdle(HOUR), policy)))
        : fixture.pool("r17now", b -> policy(b.capacity(2).maxWaiting(40).maxIdle(HOUR), policy));
    String at = policy + (sharded ? "/sharded" : "/pool");
    AtomicInteger ran = new AtomicInteger();
    Runnable task = () -> {
      ran.incrementAndGet();
      PoolFixture.spinFor(java.util.concurrent.ThreadLocalRandom.current().nextInt(100_000));
    };
    long handedBack = 0;
    List<SerialExecutor> lanes = List.of(pool.newSerialExecutor(), pool.newSerialExecutor());
    for (int cycle = 0; cycle < PoolFixture.stress(15); cycle++) {
      java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
      List<PoolFixture.Background> bg = new ArrayList<>();
      for (int t = 0; t < 3; t++) {
        bg.add(PoolFixture.background("r17now-" + t, () -> {
          java.util.concurrent.ThreadLocalRandom rnd =
              java.util.concurrent.ThreadLocalRandom.current();
          List<TaskHandle> handles = new ArrayList<>();
          while (!stop.get()) {
            try {
              switch (rnd.nextInt(7)) {
                case 0 -> pool.execute(task);
                case 1 -> handles.add(pool.enqueue(task));
                case 2 -> handles.add(pool.enqueue(task, Duration.ofMillis(1 + rnd.nextInt(3))));
                case 3 -> lanes.get(rnd.nextInt(2)).execute(task);
                case 4 -> handles.add(lanes.get(rnd.nextInt(2)).enqueue(task));
                case 5 -> pool.tryExecute(task, Duration.ofMillis(rnd.nextInt(2)));
                default -> {
                  if (!handles.isEmpty()) {
                    handles.remove(rnd.nextInt(handles.size())).cancel(rnd.nextBoolean());
                  }
                }
              }
            } catch (java.util.concurrent.RejectedExecutionException expected) {
              // overloaded, expired, closed: counted as such
            } catch (IllegalStateException | NullPointerException | ClassCastException bad) {
              failures.add(at + ": " + bad);
              bad.printStackTrace();
            }
          }
        }));
      }
      PoolFixture.spinFor(java.util.concurrent.ThreadLocalRandom.current().nextInt(3_000_000));
      handedBack += pool.shutdownNow().size();
      stop.set(true);
      for (PoolFixture.Background b : bg) {
        b.join();
        if (b.failures() != 0) {
          failures.add(at + ": a caller thread failed");
        }
      }
      if (!pool.awaitTermination(20, TimeUnit.SECONDS)) {
        failures.add(at + ": cycle " + cycle + " never terminated, " + pool.stats());
        return;
      }
      pool.reboot();
    }
    pool.shutdown();
    if (!pool.awaitTermination(20, TimeUnit.SECONDS)) {
      failures.add(at + ": never terminated, " + pool.stats());
      return;
    }
    PoolStats s = pool.stats();
    if (s.submitted() != s.completed() + handedBack || s.failed() != 0 || s.waiting() != 0
        || ran.get() != s.completed()) {
      failures.add(at + ": counts do not close: ran " + ran.get() + ", handed back " + handedBack
          + ", " + s);
    }
  }

  /**
   * Lets the occupying task go, shuts the pool down and checks the count: {@code ran} tasks ran
   * besides the occupier, each submitted once and completed, none failed, rejected or expired.
   */
  private static void finishAndCount(WorkerPool pool, PoolFixture.Gate gate, AtomicInteger ran,
      int n) throws InterruptedException {
    gate.open();
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ran.get()).isEqualTo(n);
    PoolStats s = pool.stats();
    assertThat(s.submitted()).isEqualTo(n + 1).isEqualTo(s.completed());
    assertThat(s.failed() + s.rejected() + s.expired()).isZero();
  }
}
