package dev.warmpool;

import java.util.function.Consumer;

/**
 * Counts the tasks of one pool and routes their failures: what {@link PoolStats#submitted()},
 * {@code completed} and {@code failed} say, and who hears of a task that threw. A subpool's accounting
 * chains to its parent's, so its tasks count in both and fail to the parent's handler.
 *
 * <p>It also runs a task ({@link #run(Runnable)}), since running and counting the outcome are one
 * step; lanes, subpools and the engine all run tasks through it. The worker counters of
 * {@link PoolCounters} are the engine's to move.
 */
final class Accounting {
  final PoolCounters counters = new PoolCounters();
  /** The parent pool's accounting, for a subpool; else null. */
  private final Accounting parent;
  /** The failure handler set on the builder, or null for the thread's uncaught-exception handler. */
  private final Thread.UncaughtExceptionHandler failureHandler;
  /** Set by shutdownNow: running tasks were interrupted on purpose, so the interrupt is kept. */
  volatile boolean stopping;

  Accounting(Thread.UncaughtExceptionHandler failureHandler) {
    this.parent = null;
    this.failureHandler = failureHandler;
  }

  /** A subpool's accounting: counts in {@code parent} too and fails to its handler. */
  Accounting(Accounting parent) {
    this.parent = parent;
    this.failureHandler = null;
  }

  /** One more task accepted; before its hand-off, so no snapshot shows it completed first. */
  void accepted() {
    for (Accounting a = this; a != null; a = a.parent) {
      a.counters.submitted.increment();
    }
  }

  /** A task withdrawn (by its handle, a closing lane, a refusal after acceptance) leaves submitted. */
  void withdrawn() {
    for (Accounting a = this; a != null; a = a.parent) {
      a.counters.submitted.decrement();
    }
  }

  /** An entry left the line unrun, past its deadline: counted here and in the parents. */
  void expired() {
    for (Accounting a = this; a != null; a = a.parent) {
      a.counters.expired.increment();
    }
  }

  /**
   * Takes back an {@link #expired()} counted before a CAS to EXPIRED that then lost to a cancel or a
   * hand-back. Expiries are counted before the state that announces them, so that whoever reads an
   * expired handle finds it counted; the price is this brief over-count when they race.
   */
  void notExpired() {
    for (Accounting a = this; a != null; a = a.parent) {
      a.counters.expired.decrement();
    }
  }

  /** One rejection, counted where it happened only. */
  void rejected() {
    counters.rejected.increment();
  }

  /** Takes back a {@link #rejected()} that no call threw after all (a lane's task taken meanwhile). */
  void notRejected() {
    counters.rejected.decrement();
  }

  /** Whether a shutdownNow of this pool or an ancestor interrupted running tasks on purpose. */
  boolean stopping() {
    for (Accounting a = this; a != null; a = a.parent) {
      if (a.stopping) {
        return true;
      }
    }
    return false;
  }

  /**
   * Runs the task on {@code worker} (the calling thread's) and counts the outcome. A task that
   * threw counts as failed and is reported (see {@link #failed}). A future of ours that caught the
   * task's exception ({@code submit}, {@code invokeAll}, {@code invokeAny}) counted it as failed
   * already, through {@link #futureFailed}, before its caller could see it; its caller hears of it
   * through the future, as {@code ThreadPoolExecutor}'s futures do, so only a failure handler set
   * on the builder is called here (guarantee 8: it sees every failure).
   */
  void run(Runnable task, Worker worker) {
    clearStaleInterrupt();
    worker.runningUnder = this;
    try {
      task.run();
    } catch (Throwable t) {
      // What a future of ours told about this run is spent here too (a wrapper, a decorator,
      // threw after it): left set, it would count the worker's next task. The run counts once:
      // failed, unless its future counted that already (a cancelled future's wrapper that threw
      // counts as failed: something ran, and failed).
      worker.unrun = false;
      boolean counted = worker.capturedFailure != null;
      worker.capturedFailure = null;
      failed(t, task instanceof FailureAware f ? f : null, !counted);
      return;
    }
    if (worker.unrun) {
      worker.unrun = false;
      withdrawn();
      return;
    }
    Throwable captured = worker.capturedFailure;
    if (captured != null) {
      worker.capturedFailure = null;
      Accounting root = root();
      if (root.failureHandler != null) {
        root.failureHandler.uncaughtException(Thread.currentThread(), captured);
      }
      return;
    }
    completed();
  }

  /**
   * A future of ours, run by a worker of a pool, is about to fail with its task's exception: counts
   * it as failed under the accounting of the run, before the future publishes it, so a caller whose
   * {@code get()} threw sees it counted. Does nothing off a worker (the future was not run by a pool).
   */
  static void futureFailed(Throwable t) {
    Worker w = Worker.current();
    if (w != null && w.runningUnder != null && w.capturedFailure == null) {
      w.runningUnder.countFailed();
      w.capturedFailure = t;
    }
  }

  /**
   * A future of ours, run by a worker of a pool, found itself cancelled before its task started:
   * the run counts as withdrawn (leaves submitted) instead of completed. Does nothing off a worker.
   * (A task that runs inline a future of ours whose task is never invoked, of this pool or another:
   * cancelled, expired in line, or handed back and then cancelled, is then counted withdrawn
   * itself: the one case where this reads the wrong run.)
   */
  static void futureNotRun() {
    Worker w = Worker.current();
    if (w != null && w.runningUnder != null) {
      w.unrun = true;
    }
  }

  private Accounting root() {
    Accounting a = this;
    while (a.parent != null) {
      a = a.parent;
    }
    return a;
  }

  private void countFailed() {
    for (Accounting a = this; a != null; a = a.parent) {
      a.counters.failed.increment();
    }
  }

  /** Runs a {@link FuncPool}'s function on the current worker and counts the outcome. */
  void run(Consumer<Object> function, Object arg) {
    clearStaleInterrupt();
    try {
      function.accept(arg);
    } catch (Throwable t) {
      failed(t, null);
      return;
    }
    completed();
  }

  private void clearStaleInterrupt() {
    if (!stopping()) {
      Thread.interrupted(); // a stale interrupt must not leak into the next task
    }
  }

  private void completed() {
    for (Accounting a = this; a != null; a = a.parent) {
      a.counters.completed.increment();
    }
  }

  /**
   * Counts the failure up the chain and reports it once (guarantee 8): to the root pool's failure
   * handler if one was set on the builder; else to the task's own reporter if it has one (an
   * adapter's task); else to the thread's uncaught-exception handler. If that throws, so does this:
   * the worker exits.
   */
  private void failed(Throwable t, FailureAware reporter) {
    failed(t, reporter, true);
  }

  private void failed(Throwable t, FailureAware reporter, boolean count) {
    if (count) {
      countFailed();
    }
    Accounting a = root();
    Thread self = Thread.currentThread();
    if (a.failureHandler != null) {
      a.failureHandler.uncaughtException(self, t);
    } else if (reporter != null) {
      reporter.onFailure(t);
    } else {
      self.getUncaughtExceptionHandler().uncaughtException(self, t);
    }
  }
}
