package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Guarantee 8 against issue 33's intake ({@link WaitingLine}, "The intake"): plain tasks join the
 * line without the takers' lock, so a producer may be half-way through its join (pushed, not yet
 * counted) while the pool shuts down. Each task enqueued racing {@code shutdown} or
 * {@code shutdownNow} is refused at its call ({@link PoolClosedException}) or accepted, and an
 * accepted one runs or is handed back exactly once: none is lost in the intake, none is both run
 * and returned, and the counts add up. Two producers start together with the closer on a latch; each
 * round is a fresh pool whose one seat is held, so that every accepted task waits in line.
 */
@Timeout(120) // seconds per test: a hang fails the test instead of stalling the build
class IntakeShutdownRaceTest {
  @AutoClose final PoolFixture fixture = new PoolFixture();

  private static final int PRODUCERS = 2;
  /** Enough for a producer to be pushing when the closer comes (a late closer misses a race). */
  private static final int PER_PRODUCER = 50_000;

  /** One round's outcome: what each producer had accepted, what ran, what came back. */
  private record Round(WorkerPool pool, List<Runnable> accepted, Set<Runnable> ran,
      List<Runnable> returned) { }

  private Round race(boolean now) throws Exception {
    WorkerPool pool = fixture.pool("intake", b -> b.capacity(1).maxIdle(Duration.ofMinutes(1))
        .maxWaiting(Integer.MAX_VALUE));
    PoolFixture.Gate seat = fixture.occupy(pool);
    Set<Runnable> ran = ConcurrentHashMap.newKeySet();
    List<List<Runnable>> accepted = new ArrayList<>();
    CountDownLatch ready = new CountDownLatch(PRODUCERS + 1);
    CountDownLatch someJoined = new CountDownLatch(PRODUCERS);
    List<PoolFixture.Caller<Void>> producers = new ArrayList<>();
    for (int p = 0; p < PRODUCERS; p++) {
      List<Runnable> mine = Collections.synchronizedList(new ArrayList<>());
      accepted.add(mine);
      producers.add(fixture.call("producer-" + p, () -> {
        ready.countDown();
        PoolFixture.await(ready);
        for (int i = 0; i < PER_PRODUCER; i++) {
          Runnable task = new Runnable() {
            @Override
            public void run() {
              ran.add(this);
            }
          };
          try {
            pool.enqueue(task);
          } catch (PoolClosedException refused) {
            return; // refused at its call: never accepted
          }
          mine.add(task);
          if (i == 10) {
            someJoined.countDown();
          }
        }
        someJoined.countDown(); // the closer came late this round: the race was missed, not lost
      }));
    }
    ready.countDown();
    PoolFixture.await(ready);
    PoolFixture.await(someJoined); // the closer races producers that are pushing
    List<Runnable> returned;
    if (now) {
      returned = pool.shutdownNow();
    } else {
      pool.shutdown();
      returned = List.of();
      seat.open();
    }
    for (PoolFixture.Caller<Void> c : producers) {
      assertThat(c.outcome()).as("a producer ends by a refusal or its quota").isNull();
    }
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).as("terminated").isTrue();
    List<Runnable> all = new ArrayList<>();
    accepted.forEach(all::addAll);
    return new Round(pool, all, ran, returned);
  }

  private static void eachAcceptedTaskRanOrCameBackOnce(Round r) {
    Set<Runnable> returned = Collections.newSetFromMap(new IdentityHashMap<>());
    returned.addAll(r.returned());
    assertThat(returned).as("returned once each").hasSize(r.returned().size());
    for (Runnable t : r.accepted()) {
      boolean ran = r.ran().contains(t);
      boolean back = returned.contains(t);
      assertThat(ran ^ back).as("an accepted task ran or came back, exactly one of them").isTrue();
    }
    assertThat(r.ran().size() + r.returned().size()).as("nothing else ran or came back")
        .isEqualTo(r.accepted().size());
    PoolStats s = r.pool().stats();
    assertThat(s.waiting()).as("the line is empty at quiescence").isZero();
    // The held seat's task counts too: it ran (or was interrupted, still completed).
    assertThat(s.submitted()).as("submitted = completed + failed + handed back")
        .isEqualTo(s.completed() + s.failed() + r.returned().size());
    assertThat(s.completed()).isEqualTo(r.ran().size() + 1L);
  }

  @Test
  void guarantee8_aTaskEnqueuedRacingShutdownNowIsRefusedOrRunOrHandedBackExactlyOnce()
      throws Exception {
    for (int round = 0; round < PoolFixture.stress(40); round++) {
      eachAcceptedTaskRanOrCameBackOnce(race(true));
    }
  }

  @Test
  void guarantee8_aTaskEnqueuedRacingShutdownIsRefusedOrRunsExactlyOnce() throws Exception {
    for (int round = 0; round < PoolFixture.stress(40); round++) {
      Round r = race(false);
      assertThat(r.returned()).isEmpty();
      eachAcceptedTaskRanOrCameBackOnce(r);
    }
  }
}
