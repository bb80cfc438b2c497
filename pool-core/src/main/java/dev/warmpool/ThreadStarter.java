package dev.warmpool;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Starts worker threads and keeps track of them: the slot count (live workers, from reservation to
 * exit), the calls to the user's {@link ThreadFactory}, what a failed start undoes, and the set of
 * started threads that {@code shutdownNow} interrupts and {@code awaitTermination} joins.
 *
 * <h2>Hostile factories</h2>
 * A factory may throw, return null, return a thread that was already started, or block. Each of
 * the first three fails the start only if the worker has not begun to run: a factory may have
 * started the thread itself before it threw, returned null, or handed back the started thread, and
 * then the worker runs and the start counts as a success ({@link Worker#abandon} decides, once), so
 * a task is never both rejected and run and a slot is never given back twice. A blocking factory
 * blocks only the thread that called it; the {@link Engine} calls it holding no token.
 *
 * <h2>Never on the timer thread or a worker</h2>
 * The shared timer thread must run no user code, and a factory is user code; a worker must not wait
 * for one while it holds a task. A start needed there is handed to {@link #ASYNC}, a small cached
 * pool of our own daemon threads, so that one pool's slow factory delays neither other pools'
 * timers nor any cleaner.
 */
final class ThreadStarter {
  /**
   * Runs worker starts that were needed on the timer thread or a worker, and the callbacks that must
   * not run on the timer thread (an expiry's notice, a {@code whenTerminated()} completion); runs no
   * user task. Unbounded, so a callback that blocks delays no start and no other callback.
   */
  static final Executor ASYNC = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 10, TimeUnit.SECONDS,
      new SynchronousQueue<>(), r -> {
        Thread t = new Thread(r, "warmpool-starter");
        t.setDaemon(true);
        return t;
      });

  private final ThreadFactory factory;
  private final PoolCounters counters;
  private final AtomicInteger slots = new AtomicInteger();
  /** Set in {@link #slots} while the pool is terminated: no slot may be reserved. */
  private static final int CLOSED = 1 << 30;
  /** Workers whose thread may be alive; a worker leaves when its thread is known to have ended. */
  /**
   * In start order, not a hash set: its order (shutdownNow's interrupts, the hold watch's visits)
   * must not depend on identity hash codes, which differ from run to run (the model check replays a
   * run exactly, and found its replays differing).
   */
  private final ConcurrentLinkedQueue<Worker> started = new ConcurrentLinkedQueue<>();
  /** About the size of {@link #started} (a queue counts by walking), for {@link #prune}. */
  private final AtomicInteger startedSize = new AtomicInteger();

  ThreadStarter(ThreadFactory factory, PoolCounters counters) {
    this.factory = factory;
    this.counters = counters;
  }

  /** Live workers, counted from the reservation of their slot until they exit. */
  int workers() {
    return slots.get() & ~CLOSED;
  }

  /**
   * Closes the slots if none is taken, atomically: a terminating pool, after which no slot can be
   * reserved (a start signalled before the termination cannot reserve one afterwards and show a
   * worker on a terminated pool). A closed count reads above any capacity, so
   * {@link #tryReserve} fails.
   */
  boolean tryClose() {
    return slots.compareAndSet(0, CLOSED);
  }

  /** Reopens closed slots (a reboot, or a termination that did not happen after all). */
  void reopen() {
    slots.compareAndSet(CLOSED, 0);
  }

  /** Reserves a slot for a new worker if fewer than {@code capacity} are taken (and not closed). */
  boolean tryReserve(int capacity) {
    for (int n = slots.get(); n < capacity; n = slots.get()) {
      if (slots.compareAndSet(n, n + 1)) {
        return true;
      }
    }
    return false;
  }

  /** Gives a worker's slot back; returns the number of slots left. */
  int release() {
    return slots.decrementAndGet();
  }

  /** Takes the slot of a surplus worker if more than {@code capacity} are taken. */
  boolean tryReleaseSurplus(int capacity) {
    for (int n = slots.get(); n > capacity && (n & CLOSED) == 0; n = slots.get()) {
      if (slots.compareAndSet(n, n - 1)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Starts the worker's thread in a reserved slot. On failure gives the slot back and returns the
   * cause; the worker will never run.
   */
  Throwable start(Worker w) {
    // Known before the factory runs: a factory may start the thread and then block, and meanwhile
    // shutdownNow must interrupt it (and hand back its lane) and awaitTermination wait for it.
    started.add(w);
    startedSize.incrementAndGet();
    Thread t;
    try {
      t = factory.newThread(w);
      if (t == null) {
        throw new NullPointerException("thread factory returned null");
      }
    } catch (Throwable failure) {
      if (w.abandon()) {
        forget(w);
        release();
        return failure;
      }
      // The factory started the thread and then failed: the worker runs, so this is a success.
      // It records its own thread right after winning its life CAS; wait those few instructions.
      while (w.thread == null) {
        Thread.onSpinWait();
      }
      return launched(w);
    }
    w.offerThread(t);
    w.commitFirst(); // from here shutdownNow leaves the first task to the thread (and interrupts it)
    boolean counted = w.markCounted(); // before the start: the thread may run and stop at once
    if (counted) {
      counters.workersStarted.increment();
    }
    try {
      t.start();
    } catch (Throwable failure) {
      if (w.abandon()) {
        forget(w);
        if (counted) {
          counters.workersStarted.decrement(); // it never ran, so it never counts a stop
        }
        release();
        return failure;
      }
      // The factory started the thread itself and it is running our worker: a success.
    }
    return launched(w);
  }

  private Throwable launched(Worker w) {
    if (w.markCounted()) { // the worker counts itself when it runs, if it got there first
      counters.workersStarted.increment();
    }
    prune();
    return null;
  }

  /** Forgets workers whose thread has ended, once they clearly outnumber the live ones. */
  private void prune() {
    if (startedSize.get() > 2 * workers() + 16) {
      started.removeIf(ThreadStarter::ended); // one pass
      startedSize.set(started.size()); // a heuristic's count: a racing start may be counted twice
    }
  }

  private void forget(Worker w) {
    if (started.remove(w)) {
      startedSize.decrementAndGet();
    }
  }

  /** Only a thread that ran and ended; a thread not yet started is not ended. */
  private static boolean ended(Worker w) {
    Thread t = w.thread; // null while its factory runs: not ended
    return w.isAbandoned() || (t != null && t.getState() == Thread.State.TERMINATED);
  }

  /** Visits every worker whose thread may be alive. */
  void forEachWorker(java.util.function.Consumer<Worker> action) {
    started.forEach(action);
  }

  /** Interrupts every started worker thread, also one whose start is still in progress. */
  void interruptAll() {
    for (Worker w : started) {
      w.interruptToStop();
    }
  }

  /**
   * Waits until every started worker thread has ended, at most until {@code deadline}. Polls the
   * thread state with a growing pause (up to 1 ms) rather than {@code Thread.join}, which locks the
   * thread object: a thread of a hostile factory may hold that lock and overrun the deadline.
   */
  boolean joinAll(long deadline) throws InterruptedException {
    for (Worker w : started) {
      long pause = 10_000;
      while (!ended(w)) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        LockSupport.parkNanos(this, Math.min(left, pause));
        pause = Math.min(pause * 2, 1_000_000);
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
      }
      forget(w);
    }
    return true;
  }

  /**
   * Whether the calling thread may call the factory: not the timer thread (no user code runs there)
   * and not a worker (it holds a task, or a seat, that must not wait for a factory).
   */
  static boolean mayStartHere() {
    return !SharedTimer.isTimerThread() && !Worker.onWorker();
  }
}
