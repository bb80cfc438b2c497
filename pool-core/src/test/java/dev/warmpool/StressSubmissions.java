package dev.warmpool;

import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * What the close-cycle stress tests ({@link ShutdownCycleStressTest}, {@link SubpoolStressTest})
 * share: the outcome a submitter records for each task, and the submissions both make.
 */
final class StressSubmissions {
  /** What the submitter saw: the task was refused. */
  static final int REJECTED = 0;
  /** The task was accepted (set before the call: the task may run before it returns). */
  static final int ACCEPTED = 1;
  /** The task was withdrawn by its handle. */
  static final int WITHDRAWN = 2;
  /** A future cancelled by the submitter: FutureTask reports success also while the body runs. */
  static final int AT_MOST_ONCE = 3;

  private StressSubmissions() {}

  /**
   * Submits {@code task} (number {@code id}) by kind: 0 {@code execute}, 1 {@code tryExecute},
   * 2 {@code enqueue} (its handle cancelled one time in {@code cancelOneIn}), 3 {@code submit} (its
   * future cancelled likewise, and recorded in {@code ids}, since shutdownNow may hand it back).
   * Records in {@code outcome} what the call said; a rejection throws. Returns false for any other
   * kind, which the caller submits itself.
   */
  static boolean submitByKind(WorkerPool pool, int kind, Runnable task, int id,
      ThreadLocalRandom r, int cancelOneIn, AtomicIntegerArray outcome, Map<Object, Integer> ids) {
    switch (kind) {
      case 0 -> pool.execute(task);
      case 1 -> {
        if (!pool.tryExecute(task)) {
          outcome.set(id, REJECTED);
        }
      }
      case 2 -> {
        TaskHandle h = pool.enqueue(task);
        if (r.nextInt(cancelOneIn) == 0 && h.cancel()) {
          outcome.set(id, WITHDRAWN);
        }
      }
      case 3 -> {
        Future<?> f = pool.submit(task);
        ids.put(f, id);
        if (r.nextInt(cancelOneIn) == 0 && f.cancel(false)) {
          outcome.set(id, AT_MOST_ONCE);
        }
      }
      default -> {
        return false;
      }
    }
    return true;
  }
}
