package dev.warmpool;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * Thread factories and worker threads for the tests that attack the pool through its
 * {@link ThreadFactory}: plain and quiet daemon threads, and a factory scripted to misbehave on
 * chosen calls.
 */
final class TestFactories {
  /** Drops what it is given: workers killed on purpose die quietly. */
  static final Thread.UncaughtExceptionHandler QUIET = (t, e) -> { };

  private TestFactories() {}

  /** A new (not started) daemon thread that runs {@code r}. */
  static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /** A new (not started) daemon thread that runs {@code r} and dies quietly ({@link #QUIET}). */
  static Thread quietDaemon(Runnable r, String name) {
    Thread t = daemon(r, name);
    t.setUncaughtExceptionHandler(QUIET);
    return t;
  }

  /**
   * Makes quiet daemon worker threads named {@code <poolName>-<n>}, except on the calls it is
   * scripted to misbehave: by call number ({@link #onCall}, counting from 1), or on the next call
   * after it is armed, whichever thread makes it ({@link #onNextCall}). Keeps every thread it made
   * or handed out, so that a test can find the one a misbehaving call started, or wait until all of
   * them have ended.
   */
  static final class ScriptedFactory implements ThreadFactory {
    private final String poolName;
    private final AtomicInteger calls = new AtomicInteger();
    private final AtomicInteger threads = new AtomicInteger();
    private final Map<Integer, Function<Runnable, Thread>> script = new ConcurrentHashMap<>();
    private final AtomicReference<Function<Runnable, Thread>> next = new AtomicReference<>();
    /**
     * Every thread {@link #normal} made (whether or not the factory then returned it) and every
     * thread a misbehaving call returned, in that order.
     */
    final List<Thread> made = new CopyOnWriteArrayList<>();

    ScriptedFactory(String poolName) {
      this.poolName = poolName;
    }

    /** Scripts the misbehaviour of call number {@code call} (the first call is 1). */
    ScriptedFactory onCall(int call, Function<Runnable, Thread> behaviour) {
      script.put(call, behaviour);
      return this;
    }

    /** Arms a misbehaviour for the next call only (whichever thread makes it). */
    void onNextCall(Function<Runnable, Thread> behaviour) {
      next.set(behaviour);
    }

    /** A misbehaviour: the factory throws. */
    static Thread fails(Runnable r) {
      throw new IllegalStateException("no threads today");
    }

    @Override
    public Thread newThread(Runnable r) {
      Function<Runnable, Thread> special = script.remove(calls.incrementAndGet());
      if (special == null) {
        special = next.getAndSet(null);
      }
      Thread t = special != null ? special.apply(r) : normal(r);
      if (t != null && !made.contains(t)) {
        made.add(t);
      }
      return t;
    }

    /** The thread the factory makes when it behaves: a quiet daemon {@code <poolName>-<n>}. */
    Thread normal(Runnable r) {
      Thread t = quietDaemon(r, poolName + "-" + threads.incrementAndGet());
      made.add(t);
      return t;
    }

    /** Waits (at most 10 s) until every thread made so far, and any made meanwhile, has ended. */
    void awaitAllDead() {
      long deadline = System.nanoTime() + SECONDS.toNanos(10);
      for (int checked = 0; checked < made.size(); ) {
        Thread t = made.get(checked);
        try {
          MILLISECONDS.timedJoin(t, Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new AssertionError(e);
        }
        if (t.isAlive()) {
          throw new AssertionError("thread " + t.getName() + " still alive after 10 s, "
              + t.getState());
        }
        checked++;
      }
    }
  }
}
