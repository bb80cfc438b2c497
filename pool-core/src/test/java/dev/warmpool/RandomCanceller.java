package dev.warmpool;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A stress test's canceller: withdraws handles picked at random ({@code cancel(true)} or
 * {@code cancel(false)} at random) until told to stop, and counts each withdrawal that succeeded
 * on the counter registered with the handle, so that the test can check at quiescence that every
 * task ended exactly one way.
 */
final class RandomCanceller {
  private final List<TaskHandle> handles = new ArrayList<>();
  private final Map<TaskHandle, AtomicInteger> withdrawn = new IdentityHashMap<>();

  /** Makes {@code h} a target; a successful cancel of it increments {@code counter}. */
  synchronized void add(TaskHandle h, AtomicInteger counter) {
    withdrawn.put(h, counter);
    handles.add(h);
  }

  private synchronized TaskHandle pick(ThreadLocalRandom r) {
    return handles.isEmpty() ? null : handles.get(r.nextInt(handles.size()));
  }

  private synchronized AtomicInteger counterOf(TaskHandle h) {
    return withdrawn.get(h);
  }

  /** Starts cancelling on a thread of its own until {@code stop} is set. */
  PoolFixture.Background start(AtomicBoolean stop) {
    return PoolFixture.background("canceller", () -> {
      ThreadLocalRandom r = ThreadLocalRandom.current();
      while (!stop.get()) {
        TaskHandle h = pick(r);
        if (h != null && h.cancel(r.nextBoolean())) {
          counterOf(h).incrementAndGet();
        }
        Thread.onSpinWait();
      }
    });
  }
}
