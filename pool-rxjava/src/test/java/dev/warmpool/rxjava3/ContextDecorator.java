package dev.warmpool.rxjava3;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * An MDC-like task decorator for guarantee 15: it captures {@link #CONTEXT} on the thread that calls
 * it and restores it around the run, and it records every call's thread. Its task bodies record the
 * context each run sees and then leave their own behind ({@code left-by-run-n}), as a careless task
 * leaves MDC entries: a re-arm that decorates again inside the run's scope captures that instead of
 * the user's context.
 */
final class ContextDecorator implements UnaryOperator<Runnable> {
  static final ThreadLocal<String> CONTEXT = new ThreadLocal<>();
  static final String USER = "request-42";

  /** The thread of each call of the decorator. */
  final List<Thread> calls = new CopyOnWriteArrayList<>();
  /** The context each run of a body saw, in run order. */
  final List<String> seen = new CopyOnWriteArrayList<>();

  @Override
  public Runnable apply(Runnable task) {
    calls.add(Thread.currentThread());
    String captured = CONTEXT.get();
    return () -> {
      String before = CONTEXT.get();
      CONTEXT.set(captured);
      try {
        task.run();
      } finally {
        CONTEXT.set(before);
      }
    };
  }

  /**
   * A task body: records the context it runs under, leaves {@code left-by-run-n} behind and counts
   * down {@code runs}; run {@code failing} (1-based; 0: none) throws after that.
   */
  Runnable body(CountDownLatch runs, int failing) {
    AtomicInteger n = new AtomicInteger();
    return () -> {
      int run = n.incrementAndGet();
      seen.add(String.valueOf(CONTEXT.get()));
      CONTEXT.set("left-by-run-" + run);
      runs.countDown();
      if (run == failing) {
        throw new IllegalStateException("run " + run + " fails on purpose");
      }
    };
  }
}
