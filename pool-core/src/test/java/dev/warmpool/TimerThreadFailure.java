package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Lock;
import java.util.function.Function;

/**
 * Runs a test body while the shared timer's thread cannot be started: the timer lingered out
 * first, and its thread function throws {@code OutOfMemoryError: unable to create native thread}.
 * White-box: the function is swapped and restored.
 */
final class TimerThreadFailure {
  interface Body {
    void run() throws Exception;
  }

  private TimerThreadFailure() {}

  /**
   * Runs {@code body} with the timer's thread unstartable. The pool's own cleaner leaves the timer
   * for good (its flag still says scheduled, so nothing re-adds it; the pool's shutdown cancels
   * it again, a no-op). A pool another test class left running keeps its cleaner on the timer
   * too (CI's run of 398bac9 failed so: the class order differs between machines): such tasks
   * are set aside while the body runs and put back after, at their own deadlines, since the body
   * needs the timer's thread gone, not the other pools quiet.
   */
  static void whileUnstartable(WorkerPool pool, String tag, Body body) throws Exception {
    SharedTimer timer = SharedTimer.INSTANCE;
    if (pool instanceof BoundedPool b) {
      timer.cancel(b.engine.cleaner);
    }
    List<SharedTimer.Task> setAside = new ArrayList<>();
    List<Long> deadlines = new ArrayList<>();
    if (!PoolFixture.waitUntil(Duration.ofSeconds(2), () -> !timer.isRunning())) {
      List<SharedTimer.Task> others = pending();
      System.err.println(tag + ": setting aside the shared timer's pending " + describe(others));
      for (SharedTimer.Task t : others) {
        long deadline = t.deadline; // a cancelled task keeps its fields
        if (timer.cancel(t)) {
          setAside.add(t);
          deadlines.add(deadline);
        }
      }
    }
    Field threads = SharedTimer.class.getDeclaredField("threads");
    threads.setAccessible(true);
    Object original = threads.get(timer);
    try {
      assertThat(PoolFixture.waitUntil(Duration.ofSeconds(20), () -> !timer.isRunning()))
          .as("the shared timer lingered out; still pending: %s (set aside: %s)",
              describe(pending()), setAside).isTrue();
      threads.set(timer, (Function<Runnable, Thread>) loop -> {
        throw new OutOfMemoryError(tag + " injected: unable to create native thread");
      });
      body.run();
    } finally {
      threads.set(timer, original);
      for (int i = 0; i < setAside.size(); i++) {
        timer.schedule(setAside.get(i), deadlines.get(i));
      }
    }
  }

  /** The shared timer's pending tasks now, read under its lock. */
  static List<SharedTimer.Task> pending() throws ReflectiveOperationException {
    Field heap = SharedTimer.class.getDeclaredField("heap");
    heap.setAccessible(true);
    Field lock = SharedTimer.class.getDeclaredField("lock");
    lock.setAccessible(true);
    Lock l = (Lock) lock.get(SharedTimer.INSTANCE);
    List<SharedTimer.Task> tasks = new ArrayList<>();
    l.lock();
    try {
      for (Object t : (Object[]) heap.get(SharedTimer.INSTANCE)) {
        if (t != null) {
          tasks.add((SharedTimer.Task) t);
        }
      }
    } finally {
      l.unlock();
    }
    return tasks;
  }

  /** The tasks by class, with an expiry's entry (diagnostics). */
  static String describe(List<SharedTimer.Task> tasks) {
    StringBuilder sb = new StringBuilder();
    for (SharedTimer.Task t : tasks) {
      sb.append(t.getClass().getName()).append(' ');
      if (t instanceof Admission.Expiry x) {
        sb.append("(entry ").append(x.entry).append(", arg ").append(x.entry.arg).append(") ");
      }
    }
    return sb.toString();
  }
}
