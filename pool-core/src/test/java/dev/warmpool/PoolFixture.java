package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;
import org.awaitility.core.ConditionTimeoutException;

/**
 * What the pool tests share: pools with unique names that are torn down after each test, gates that
 * hold tasks busy, callers on their own threads, background threads whose failures are counted,
 * bounded waits, a manual ticker, and a census of a pool's threads. Thread factories for the tests
 * that attack the pool through its factory are in {@link TestFactories}.
 *
 * <p>Use it as {@code @AutoClose final PoolFixture fixture = new PoolFixture();}: closing opens every
 * gate and stops every pool, so a failed test does not leave busy workers behind for the next one.
 */
final class PoolFixture implements AutoCloseable {
  private static final AtomicInteger POOL_IDS = new AtomicInteger();

  private final List<WorkerPool> pools = new CopyOnWriteArrayList<>();
  private final List<Gate> gates = new CopyOnWriteArrayList<>();
  private final List<Thread> callers = new CopyOnWriteArrayList<>();

  /**
   * How long (or how many rounds) the time-boxed stress races run, times their default:
   * {@code -Dwarmpool.stress.scale=5} for a long hunt; the defaults keep the build's test run
   * under its budget.
   */
  static final double STRESS_SCALE = Double.parseDouble(
      System.getProperty("warmpool.stress.scale", "1"));

  /** A stress race's budget: {@code base} times {@link #STRESS_SCALE}. */
  static int stress(int base) {
    return (int) Math.max(1, Math.round(base * STRESS_SCALE));
  }

  /** A stress race's budget: {@code base} times {@link #STRESS_SCALE}. */
  static Duration stress(Duration base) {
    return Duration.ofNanos((long) (base.toNanos() * STRESS_SCALE));
  }

  /**
   * Holds the shared timer thread inside a task of its own until the returned latch is counted
   * down (at most 60 s): no timer of any pool fires meanwhile, so a test can see what a hand-off
   * decides without a timer deciding first.
   */
  static CountDownLatch holdSharedTimer() {
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    SharedTimer.INSTANCE.scheduleIn(new SharedTimer.Task() {
      @Override
      void fire() {
        held.countDown();
        awaitQuietly(release, Duration.ofSeconds(60));
      }
    }, 0L);
    await(held);
    return release;
  }

  /** A name no other pool in this JVM uses, so thread names identify this pool's workers. */
  static String uniqueName(String base) {
    return base + POOL_IDS.incrementAndGet();
  }

  /** Builds a pool with a unique name (unless the configuration sets one) and tracks it. */
  WorkerPool pool(String base, UnaryOperator<WorkerPool.Builder> config) {
    return track(config.apply(WorkerPool.builder().name(uniqueName(base))).build());
  }

  WorkerPool track(WorkerPool pool) {
    pools.add(pool);
    return pool;
  }

  Gate gate() {
    Gate g = new Gate();
    gates.add(g);
    return g;
  }

  List<Gate> gates(int n) {
    List<Gate> list = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      list.add(gate());
    }
    return list;
  }

  /**
   * Runs a task that waits at a new gate on {@code target} (a pool, subpool or lane) and returns
   * the gate once the task has arrived there: the seat it holds stays taken until the gate opens.
   */
  Gate occupy(Executor target) {
    Gate g = gate();
    target.execute(g.task());
    g.awaitArrival();
    return g;
  }

  /** Runs the call on a new thread, as a caller of the pool that may block. */
  <T> Caller<T> call(String what, Callable<T> call) {
    FutureTask<T> future = new FutureTask<>(call);
    Thread t = new Thread(future, "caller-" + what);
    t.setDaemon(true);
    callers.add(t);
    t.start();
    return new Caller<>(t, future);
  }

  Caller<Void> call(String what, ThrowingRunnable run) {
    return call(what, () -> {
      run.run();
      return null;
    });
  }

  @Override
  public void close() throws InterruptedException {
    for (Gate g : gates) {
      g.open();
    }
    for (WorkerPool p : pools) {
      p.shutdownNow();
    }
    for (WorkerPool p : pools) {
      p.awaitTermination(5, TimeUnit.SECONDS);
    }
    for (Thread t : callers) {
      t.interrupt();
    }
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * Awaitility with a fine poll interval and a generous bound (conditions normally hold at once).
   * It leaves the JVM's default uncaught-exception handler alone: failing tasks are part of what
   * these tests exercise, and the pool's default failure handler ends there.
   */
  static ConditionFactory eventually() {
    return Awaitility.await().atMost(Duration.ofSeconds(30)).pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(2)).dontCatchUncaughtExceptions();
  }

  /** Live threads named {@code <poolName>-<n>}: the pool's workers under the default thread factory. */
  static List<Thread> liveThreadsOf(String poolName) {
    Pattern own = Pattern.compile(Pattern.quote(poolName) + "-\\d+");
    ThreadGroup root = Thread.currentThread().getThreadGroup();
    while (root.getParent() != null) {
      root = root.getParent();
    }
    Thread[] all;
    int n;
    do {
      all = new Thread[root.activeCount() * 2 + 16];
      n = root.enumerate(all, true);
    } while (n == all.length);
    return Arrays.stream(all, 0, n)
        .filter(t -> t.isAlive() && own.matcher(t.getName()).matches())
        .toList();
  }

  static void awaitNoThreadsOf(String poolName) {
    eventually().untilAsserted(() -> assertThat(liveThreadsOf(poolName)).isEmpty());
  }

  static void awaitDead(Thread t) {
    eventually().untilAsserted(() -> assertThat(t.isAlive()).as("%s alive", t.getName()).isFalse());
  }

  /** Waits until the pool has exactly this many idle workers. */
  static void awaitIdle(WorkerPool pool, int idle) {
    eventually().untilAsserted(() -> assertThat(pool.stats().idle()).isEqualTo(idle));
  }

  static void awaitWaiting(WorkerPool pool, int waiting) {
    eventually().untilAsserted(() -> assertThat(pool.stats().waiting()).isEqualTo(waiting));
  }

  static void await(CountDownLatch latch) {
    try {
      assertThat(latch.await(30, TimeUnit.SECONDS)).as("latch reached zero").isTrue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /**
   * Starts {@code body} on a (non-daemon) thread of its own. What it throws is printed and counted
   * rather than lost; a checked exception counts wrapped in an {@link AssertionError}. Join the
   * thread, then check that {@link Background#failures()} is zero.
   */
  static Background background(String name, ThrowingRunnable body) {
    Thread t = new Thread(() -> {
      try {
        body.run();
      } catch (RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new AssertionError(e);
      }
    }, name);
    AtomicInteger failures = new AtomicInteger();
    t.setUncaughtExceptionHandler((thread, e) -> {
      failures.incrementAndGet();
      e.printStackTrace();
    });
    t.start();
    return new Background(t, failures);
  }

  /** Spins (never sleeps) for {@code nanos}: a random moment in a race, or a task's busy work. */
  static void spinFor(long nanos) {
    long until = System.nanoTime() + nanos;
    while (System.nanoTime() < until) {
      Thread.onSpinWait();
    }
  }

  /**
   * The stacks of the live threads whose names {@code named} accepts, at most {@code frames}
   * frames each (diagnostics for a pool that does not terminate).
   */
  static String threadStacks(java.util.function.Predicate<String> named, int frames) {
    StringBuilder b = new StringBuilder();
    Thread.getAllStackTraces().forEach((t, stack) -> {
      if (named.test(t.getName())) {
        b.append("\n  ").append(t.getName()).append(' ').append(t.getState());
        for (int k = 0; k < Math.min(stack.length, frames); k++) {
          b.append("\n    at ").append(stack[k]);
        }
      }
    });
    return b.toString();
  }

  /**
   * Polls the condition until it holds or {@code atMost} is up, and returns whether it held: for a
   * bounded wait whose outcome the test reports rather than fails on at once.
   */
  static boolean waitUntil(Duration atMost, BooleanSupplier condition) {
    if (condition.getAsBoolean()) {
      return true; // the common case, without a poller
    }
    try {
      eventually().atMost(atMost).until(condition::getAsBoolean);
      return true;
    } catch (ConditionTimeoutException e) {
      return false;
    }
  }

  /**
   * Waits at most {@code atMost} for the latch, through interrupts (the flag is set again after),
   * and never fails: for code on the pool's threads (factories, hostile threads, tickers) that must
   * not throw where it waits for the test.
   */
  static void awaitQuietly(CountDownLatch latch, Duration atMost) {
    long deadline = System.nanoTime() + atMost.toNanos();
    boolean interrupted = false;
    try {
      while (latch.getCount() > 0 && System.nanoTime() < deadline) {
        try {
          latch.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  // ---------------------------------------------------------------------------------------------

  @FunctionalInterface
  interface ThrowingRunnable {
    void run() throws Exception;
  }

  /** Holds tasks until opened; a task that passes it records its worker thread. */
  static final class Gate {
    private final CountDownLatch open = new CountDownLatch(1);
    private final CountDownLatch arrived = new CountDownLatch(1);
    private volatile Thread thread;
    private volatile boolean interrupted;
    private volatile boolean passed;

    void open() {
      open.countDown();
    }

    /** A task that waits at this gate, then returns. */
    Runnable task() {
      return this::pass;
    }

    /** Waits here until opened (at most 30 s); records an interrupt instead of throwing it. */
    void pass() {
      thread = Thread.currentThread();
      arrived.countDown();
      try {
        if (!open.await(30, TimeUnit.SECONDS)) {
          throw new AssertionError("gate never opened");
        }
      } catch (InterruptedException e) {
        interrupted = true;
        Thread.currentThread().interrupt();
        return;
      }
      passed = true;
    }

    /** Waits until a task has arrived at the gate and returns its worker thread. */
    Thread awaitArrival() {
      PoolFixture.await(arrived);
      return thread;
    }

    boolean hasArrived() {
      return arrived.getCount() == 0;
    }

    Thread thread() {
      return thread;
    }

    boolean wasInterrupted() {
      return interrupted;
    }

    boolean passed() {
      return passed;
    }
  }

  /** A thread started by {@link #background}, and a count of what it threw. */
  record Background(Thread thread, AtomicInteger failed) {
    void join() throws InterruptedException {
      thread.join();
    }

    int failures() {
      return failed.get();
    }
  }

  /** A call running on its own thread. */
  record Caller<T>(Thread thread, FutureTask<T> future) {
    boolean isDone() {
      return future.isDone();
    }

    /** Waits for the call to return and gives its value (fails the test if it threw). */
    T result() {
      return result(Duration.ofSeconds(30));
    }

    /**
     * Waits at most {@code timeout} for the call to return and gives its value; fails the test if
     * it threw, or if it is still running (with the stack where it is stuck).
     */
    T result(Duration timeout) {
      try {
        return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        throw stuck(timeout);
      } catch (Exception e) {
        throw new AssertionError("call " + thread.getName() + " did not return normally", e);
      }
    }

    /**
     * Waits at most {@code timeout} for the call to end and gives what it threw, or null if it
     * returned normally; fails the test if it is still running (with the stack where it is stuck).
     */
    Throwable outcome(Duration timeout) {
      try {
        future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        return null;
      } catch (ExecutionException e) {
        return e.getCause();
      } catch (TimeoutException e) {
        throw stuck(timeout);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }

    private AssertionError stuck(Duration timeout) {
      AssertionError stuck = new AssertionError("call " + thread.getName() + " still running after "
          + timeout + ", " + thread.getState());
      stuck.setStackTrace(thread.getStackTrace());
      return stuck;
    }

    /** Waits for the call to end and gives what it threw, or null if it returned normally. */
    Throwable outcome() {
      try {
        future.get(30, TimeUnit.SECONDS);
        return null;
      } catch (ExecutionException e) {
        return e.getCause();
      } catch (Exception e) {
        throw new AssertionError("call " + thread.getName() + " did not end", e);
      }
    }
  }

  /**
   * Samples the pools' {@code stats()} on its own thread until {@link #close()}, and remembers the
   * first snapshot with a negative gauge or counter (guarantee 13: no counter is ever negative,
   * also during the run). Closing stops and joins the thread and returns the violations seen.
   */
  static final class StatsSampler implements AutoCloseable {
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final AtomicLong samples = new AtomicLong();
    private volatile boolean stop;
    private final Thread thread;

    StatsSampler(WorkerPool... pools) {
      thread = new Thread(() -> {
        while (!stop) {
          for (WorkerPool p : pools) {
            check(p.name(), p.stats());
          }
          samples.incrementAndGet();
          java.util.concurrent.locks.LockSupport.parkNanos(20_000); // pacing, not synchronisation
        }
      }, "stats-sampler");
      thread.setDaemon(true);
      thread.start();
    }

    /** Checks one snapshot now (also usable from the test thread). */
    void check(String pool, PoolStats st) {
      long[] values = {st.capacity(), st.workers(), st.busy(), st.idle(), st.waiting(),
          st.submitted(), st.completed(), st.failed(), st.rejected(), st.workersStarted(),
          st.workersExpired(), st.workersStopped()};
      for (long v : values) {
        if (v < 0) {
          if (violations.size() < 10) {
            violations.add(pool + ": " + st);
          }
          return;
        }
      }
    }

    long samples() {
      return samples.get();
    }

    /** Stops sampling and returns the negative snapshots seen (empty if none). */
    List<String> stop() throws InterruptedException {
      stop = true;
      thread.join(TimeUnit.SECONDS.toMillis(10));
      return violations;
    }

    @Override
    public void close() throws InterruptedException {
      stop();
    }
  }

  /** A ticker the test moves by hand. */
  static final class ManualTicker implements Ticker {
    private final AtomicLong nanos = new AtomicLong();

    @Override
    public long read() {
      return nanos.get();
    }

    void set(Duration t) {
      nanos.set(t.toNanos());
    }

    void setNanos(long t) {
      nanos.set(t);
    }

    void advance(Duration d) {
      nanos.addAndGet(d.toNanos());
    }
  }
}
