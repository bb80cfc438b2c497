package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The compact set a serial lane keeps its pending timers in ({@link MemberSet}), and the lane
 * protocol that uses it: closing the lane cancels every timer registered before the close, and a
 * timer registered after it cancels itself or is refused (publish, then check).
 */
class MemberSetTest {
  static final class Set0 extends MemberSet { }

  @Test
  void behavesAsAnIdentitySetThroughGrowthCollisionsAndShrinkToNothing() {
    Random random = new Random(42);
    Set0 set = new Set0();
    Set<Object> model = Collections.newSetFromMap(new IdentityHashMap<>());
    List<Object> universe = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      universe.add(new Object());
    }
    for (int step = 0; step < 200_000; step++) {
      Object o = universe.get(random.nextInt(step % 1000 < 500 ? 3 : universe.size()));
      if (random.nextBoolean()) {
        assertThat(set.addMember(o)).isEqualTo(model.add(o));
      } else {
        assertThat(set.removeMember(o)).isEqualTo(model.remove(o));
      }
      assertThat(set.memberCount()).isEqualTo(model.size());
      if (step % 997 == 0) {
        Set<Object> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        Collections.addAll(seen, set.snapshot());
        assertThat(seen).isEqualTo(model);
        assertThat(set.snapshot()).hasSize(model.size());
      }
    }
    for (Object o : universe) {
      set.removeMember(o);
    }
    assertThat(set.memberCount()).isZero();
    assertThat(set.snapshot()).isEmpty();
  }

  /**
   * Guarantee 7 and DESIGN section 5 (closing a lane cancels its pending tasks): a close racing
   * schedules from other threads leaves no timer pending. Each schedule either was refused or
   * returned a future that is cancelled by the time the close has returned and the schedulers
   * stopped.
   */
  @Test
  void guarantee7_laneCloseRacingSchedulesLeavesNoTimerPending() throws Exception {
    try (WorkerPool pool = WorkerPool.builder().name("members").capacity(2).build()) {
      for (int round = 0; round < 200; round++) {
        SerialExecutor lane = pool.newSerialExecutor();
        List<ScheduledFuture<?>> futures = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
          Thread th = new Thread(() -> {
            try {
              go.await();
              for (int i = 0; i < 50; i++) {
                futures.add(lane.schedule(() -> { }, 1, TimeUnit.HOURS));
              }
            } catch (java.util.concurrent.RejectedExecutionException refused) {
              // the lane closed: every later schedule is refused too
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          });
          th.start();
          threads.add(th);
        }
        go.countDown();
        lane.close();
        for (Thread th : threads) {
          th.join();
        }
        synchronized (futures) {
          for (ScheduledFuture<?> f : futures) {
            assertThat(f.isCancelled()).as("round %d", round).isTrue();
          }
        }
        assertThat(((SerialLane) lane).pendingTimers()).as("round %d", round).isZero();
      }
      assertThat(pool.stats().waiting()).isZero();
    }
  }
}
