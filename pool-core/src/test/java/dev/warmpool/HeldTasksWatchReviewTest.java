package dev.warmpool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review 5: the hold watch when the shared timer cannot start its thread (no native thread: the
 * timer then refuses the schedule, see {@link SharedTimer#schedule}). A real {@link Engine} with real
 * worker threads over a stub host (a pool in nonblocking mode, as in {@code EngineLincheckTest}),
 * with a private timer that cannot start its thread while {@link #failTimerStart} is set.
 */
@Timeout(60)
class HeldTasksWatchReviewTest {
  static final int CAPACITY = 3;

  final RunState state = new RunState();
  final Accounting accounting = new Accounting((t, e) -> { });
  final AtomicBoolean failTimerStart = new AtomicBoolean(true);
  final SharedTimer timer = new SharedTimer(loop -> {
    if (failTimerStart.get()) { // no native thread for the timer while set
      throw new OutOfMemoryError("unable to create native thread (review test)");
    }
    return SharedTimer.newTimerThread(loop);
  });
  final Engine engine = new Engine(new StubHost(state, () -> CAPACITY), accounting, CAPACITY,
      Long.MAX_VALUE / 4, Ticker.system(), new ThreadStarter(r -> TestFactories.daemon(r, "held-watch"), accounting.counters), timer,
      ThreadStarter.ASYNC, Worker::awaitSignal, Engine.WORKER_SPINS);

  /** Takes a seat and hands the task to the engine, as a nonblocking pool's enqueue does. */
  void submit(Runnable task) {
    assertTrue(state.tryTakeSeat(CAPACITY, false), "a free seat");
    Throwable failure = engine.place(TaskKind.RUNNABLE, task, false, false);
    if (failure != null) {
      throw new AssertionError(failure);
    }
  }

  /**
   * A task queues a subtask and then waits for it outside the library, so only the hold watch can
   * publish it; returns whether the subtask ran while its holder waited (5 s safety bound; the
   * watch fires after 1 ms).
   */
  boolean holderWaitingForItsSubtaskIsFreed(AtomicReference<Throwable> submitFailure)
      throws InterruptedException {
    CountDownLatch subtaskRan = new CountDownLatch(1);
    AtomicBoolean freed = new AtomicBoolean();
    CountDownLatch holderDone = new CountDownLatch(1);
    submit(() -> {
      try {
        try {
          submit(subtaskRan::countDown);
        } catch (Throwable t) {
          submitFailure.set(t);
        }
        freed.set(subtaskRan.await(5, TimeUnit.SECONDS));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        holderDone.countDown();
      }
    });
    assertTrue(holderDone.await(20, TimeUnit.SECONDS));
    assertTrue(subtaskRan.await(20, TimeUnit.SECONDS), "the subtask ran at the latest after its holder");
    return freed.get();
  }

  @Test
  void aHoldWhoseWatchCannotBeArmedIsPublishedAndLaterHoldsAreStillWatched() throws Exception {
    AtomicReference<Throwable> failure = new AtomicReference<>();
    // The timer cannot start its thread on this first hold's watch: the subtask was accepted (its
    // seat taken, the engine took it), so it must still run while its holder waits, and the
    // submitting call must not throw for a task that runs anyway.
    boolean firstFreed = holderWaitingForItsSubtaskIsFreed(failure);
    failTimerStart.set(false);
    // The timer works again: a later hold must be watched as usual.
    AtomicReference<Throwable> laterFailure = new AtomicReference<>();
    boolean laterFreed = holderWaitingForItsSubtaskIsFreed(laterFailure);
    assertEquals(null, laterFailure.get());
    assertTrue(laterFreed, "a later hold whose holder blocks is never published: the watch stays"
        + " marked armed after the failed schedule");
    assertEquals(null, failure.get(), "the submit threw though its task was accepted and ran");
    assertTrue(firstFreed, "the first hold was left unwatched");
    // Quiescent: every seat given back.
    org.awaitility.Awaitility.await().atMost(10, TimeUnit.SECONDS)
        .until(() -> state.seats() == 0);
  }
}
