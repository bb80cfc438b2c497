package dev.warmpool;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The life of one pool or subpool: shutdown, termination, reboot, and its child pools (subpools),
 * over its {@link Admission} and its {@link Timers}. What only the pool knows (its workers) it asks
 * through {@link Host}.
 *
 * <p><b>Termination.</b> A pool terminates when it is shut down, holds no seat, its timers are quiet,
 * no child is open, its line is empty and the host is quiescent. The last checks, the state change
 * and the read of this generation's {@code termination} future are one step under the line's lock,
 * as is a reboot's reopening: so a reboot that races the end of termination either comes after it
 * (and installs a fresh generation that only its own termination completes) or finds the pool not
 * terminated, and a caller whose first checks saw an earlier generation cannot terminate a later one.
 *
 * <p><b>Where {@code whenTerminated()} completes</b> (DESIGN.md section 3). Its dependents are user
 * code, so the stage completes after the line's lock is released, on the thread that reached
 * termination: a worker (without the interrupt a {@code shutdownNow} gave its task), the caller of
 * {@code shutdown}/{@code close}. Only the shared timer thread may not run
 * them (a line deadline's expiry can give back a subpool's last seat there, and a dependent that
 * waited for any timer would stop every pool's timers): a
 * termination reached there completes on {@link ThreadStarter#ASYNC}, warmpool's cached daemon
 * threads, which the timer hands work to without waiting and where one blocking dependent delays no
 * other. So does one reached by a serial lane giving back its hold on the pool
 * ({@link Admission#release}) on the thread of a call into the lane: any caller's, which may hold
 * locks of its own (review r15, F1), and one reached by a task's canceller (review r16, F2). A
 * subpool tells its parent it terminated only after its own stage completed (its dependents ran),
 * and until then counts in the parent's {@link #childStagesPending}, so a parent's stage completes
 * after its subpools', deferred or not, rebooted since or not.
 *
 * <p><b>Children</b> (subpools) are held weakly: a view made and dropped unused costs nothing. A
 * child with work is reachable through that work (a task, a lane or a timer references it), so
 * the parent's shutdown reaches it. A child whose {@code whenTerminated()} was asked for is held
 * strongly until it terminates ({@link #keep}): its user may keep only the stage, or only a dependent
 * of it, and the stage must still complete when the parent shuts the child down.
 */
final class Lifecycle {

  /** What the lifecycle needs from the pool beyond admission and timers. */
  interface Host {
    /** Whether nothing but the seats and the line keeps the pool from terminating (no workers). */
    boolean quiescent();

    /**
     * Atomically: if quiescent, makes sure it stays so (no worker may start); under the line's
     * lock, as part of terminating. Undone by {@link #reopen}.
     */
    boolean closeIfQuiescent();

    /** The pool reopens (a reboot), or did not terminate after all: workers may start again. */
    void reopen();

    /** The line closed at shutdown: let idle workers go. */
    void shutDown();

    /** Called once when this generation of the pool has terminated. */
    void terminated();
  }

  private final Admission admission;
  /** The parent's lifecycle, for a subpool; else null. */
  private final Lifecycle parent;
  /**
   * Children that terminated but whose stage has not completed yet (it may complete on another
   * thread): this pool does not terminate before them, even if a reboot of such a child has since
   * terminated again and left {@link #children} (review r16, F1). Counted under the child's line
   * lock as it terminates, so before anyone can see it terminated and reboot it.
   */
  private final AtomicInteger childStagesPending = new AtomicInteger();
  private final RunState state;
  private final WaitingLine line;
  private final Timers timers;
  private final Host host;
  /** Guards capacity changes against each other, and reboot. */
  final Object resizeLock = new Object();
  /**
   * Completed when this generation terminates; a reboot installs a fresh one. Replaced and completed
   * only under the line's lock, together with the state change (see {@link #tryTerminate}).
   */
  private volatile CompletableFuture<Void> termination = new CompletableFuture<>();
  /**
   * Child pools not yet terminated; this pool terminates only after all of them. Held weakly: a
   * child nobody references has no work either (a task, lane or timer of a subpool references it),
   * so dropping it loses nothing, and a caller may make views freely. Guarded by itself.
   */
  private final Map<WorkerPool, Boolean> children = new WeakHashMap<>();
  /**
   * The children whose {@code whenTerminated()} was asked for, held strongly until they terminate:
   * nothing else may reference such a child, and its stage must still complete. Guarded by
   * {@link #children}.
   */
  private final Set<WorkerPool> kept = new HashSet<>();

  Lifecycle(Admission admission, Timers timers, Host host) {
    this(admission, timers, host, null);
  }

  /** The lifecycle of a subpool of {@code parent}'s pool. */
  Lifecycle(Admission admission, Timers timers, Host host, Lifecycle parent) {
    this.admission = admission;
    this.parent = parent;
    this.state = admission.state;
    this.line = admission.line;
    this.timers = timers;
    this.host = host;
  }

  boolean isShutdown() {
    return !state.isRunning();
  }

  boolean isTerminated() {
    return state.isTerminated();
  }

  // ---------------------------------------------------------------------------------------------
  // Children

  void addChild(WorkerPool child) {
    synchronized (children) {
      children.put(child, Boolean.TRUE);
    }
  }

  /**
   * Registers a new or rebooted child, then checks this pool's state (publish, then check, against
   * {@link #shutdown}, which closes the state and then sweeps the children): a child that a
   * shutdown's sweep missed is shut down here, and the call is refused.
   */
  void adopt(WorkerPool child) {
    addChild(child);
    if (isShutdown()) {
      child.shutdown();
      admission.checkOpen();
    }
  }

  /**
   * Holds a child strongly until it terminates: someone waits for its {@code whenTerminated()}. Not
   * a child that already terminated ({@link #childTerminated} released it or will not see it again).
   */
  void keep(WorkerPool child) {
    synchronized (children) {
      // Under the lock that childTerminated takes: either it runs after us and releases the child,
      // or it ran before and we see the child terminated (its state changes before it tells us).
      if (!child.isTerminated() && children.containsKey(child)) {
        kept.add(child);
      }
    }
  }

  /** A child terminated (after its stage completed): it no longer holds this pool open. */
  void childTerminated(WorkerPool child) {
    synchronized (children) {
      if (child.isTerminated()) { // not if a reboot reopened it since: it holds this pool open again
        children.remove(child);
        kept.remove(child);
      }
    }
    tryTerminate();
  }

  private boolean hasChildren() {
    synchronized (children) {
      return !children.isEmpty();
    }
  }

  private List<WorkerPool> children() {
    synchronized (children) {
      return new ArrayList<>(children.keySet());
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Shutdown and termination

  /**
   * Closes the line and the state: callers blocked in line wake with {@link PoolClosedException},
   * entries without a caller stay to run; timers not yet due are cancelled; children shut down
   * first, so their accepted work still reaches this pool.
   */
  void shutdown() {
    shutdownChildren();
    state.shutdown();
    // Publish, then check, against adopt: a child made or rebooted during the first sweep saw us
    // open and is not in it.
    shutdownChildren();
    for (TaskEnvelope e : line.close()) {
      Admission.disarm(e);
      LockSupport.unpark(e.caller());
    }
    timers.close();
    admission.drainLine();
    host.shutDown();
    tryTerminate();
  }

  private void shutdownChildren() {
    for (WorkerPool child : children()) {
      child.shutdown();
    }
  }

  /**
   * The first half of shutdownNow: hands back the children's work and the line's, marks the pool
   * stopping and shuts it down; interrupts nothing. The pool then hands back what it holds beyond
   * the line and interrupts every task running under it, its children's included.
   */
  List<Runnable> shutdownNowLine() {
    List<Runnable> tasks = new ArrayList<>();
    for (WorkerPool child : children()) {
      // Every child is a subpool: it hands back, and this pool interrupts (once its line is
      // handed back too, so that no freed seat serves this line's waiting tasks meanwhile).
      tasks.addAll(((Subpool) child).shutdownNowUnderAncestor());
    }
    admission.accounting.stopping = true;
    shutdown();
    // A lane's entry handed back here looks at its queue once more and dispatches what rode along
    // meanwhile: the pool must not terminate between the drain and that dispatch (review r14).
    boolean held = admission.hold();
    try {
      for (TaskEnvelope e : line.drain()) {
        Admission.disarm(e);
        if (e.caller() != null) {
          LockSupport.unpark(e.caller());
        } else {
          e.kind.handBack(e.arg, tasks);
        }
      }
    } finally {
      if (held) {
        admission.releaseHere();
      }
    }
    return tasks;
  }

  /** Terminates if nothing holds the pool open any more (see the class notes). */
  void tryTerminate() {
    // Not before shutdown has swept the timers and no fire is handing one on: a timer that could
    // still complete would be pending on a terminated pool.
    if (state.state() != RunState.SHUTDOWN || state.seats() != 0 || !timers.isQuiet()
        || hasChildren() || childStagesPending.get() != 0 || !host.quiescent()) {
      return;
    }
    CompletableFuture<Void> ended = line.terminateIfEmpty(() -> {
      if (hasChildren() || childStagesPending.get() != 0 || !admission.unheld()
          || !host.closeIfQuiescent()) {
        return null;
      }
      if (state.terminate()) {
        if (parent != null) {
          parent.childStagesPending.incrementAndGet(); // until our stage completed (ended)
        }
        return termination;
      }
      host.reopen(); // a seat was taken meanwhile: workers may be needed after all
      return null;
    });
    if (ended != null) {
      ended(ended);
    }
  }

  /**
   * Completes this generation's stage, then tells the host (a subpool tells its parent, which may
   * terminate in turn): the stage first, so that a parent completes after its children. Off the
   * timer thread (see the class notes).
   */
  private void ended(CompletableFuture<Void> ended) {
    Runnable end = () -> {
      try {
        ended.complete(null); // a dependent that throws fails only its own stage
      } finally {
        if (parent != null) {
          parent.childStagesPending.decrementAndGet(); // then host.terminated() looks again
        }
        host.terminated();
      }
    };
    if (SharedTimer.isTimerThread() || ENDING_OFF_THREAD.get() != null) {
      endAsync(end);
      return;
    }
    // A worker that ends the last task after shutdownNow still carries that call's interrupt,
    // which was for its task, and a parent's shutdownNow may still be interrupting every worker:
    // dependents run without either (a blocking call there would throw at once), and both are
    // set again for the worker's exit.
    Worker w = Worker.current();
    int raised = w != null ? w.shield() : Worker.NESTED;
    try {
      end.run();
    } finally {
      if (w != null) {
        w.unshield(raised);
      }
    }
  }

  /** Runs {@code end} on {@link ThreadStarter#ASYNC}, warmpool's cached daemon threads. */
  private static void endAsync(Runnable end) {
    try {
      ThreadStarter.ASYNC.execute(end);
    } catch (RuntimeException | Error noThread) {
      // No thread can be made at all: completing here breaks the rule for once, where leaving
      // the stage pending on a terminated pool would hang its waiters for good.
      end.run();
    }
  }

  /**
   * Set while a lane's hold on the pool is given back ({@link Admission#release}), or a task's
   * handle withdraws it, on whatever thread made the call: a termination reached there completes
   * off that thread.
   */
  private static final ThreadLocal<Boolean> ENDING_OFF_THREAD = new ThreadLocal<>();

  /** Runs {@code action} so that a termination it reaches completes off this thread. */
  static void endingOffThisThread(Runnable action) {
    if (ENDING_OFF_THREAD.get() != null) {
      action.run();
      return;
    }
    ENDING_OFF_THREAD.set(Boolean.TRUE);
    try {
      action.run();
    } finally {
      ENDING_OFF_THREAD.remove();
    }
  }

  /** This generation's termination, read-only. */
  CompletionStage<Void> whenTerminated() {
    return termination.minimalCompletionStage();
  }

  /** Waits for the terminated state (not for the threads: the pool waits for those itself). */
  boolean awaitTerminated(long timeout, TimeUnit unit) throws InterruptedException {
    CompletableFuture<Void> t = termination;
    if (!t.isDone()) {
      // A task closing a subpool it fanned out on waits for tasks its own worker may hold.
      Engine.beforeBlocking();
    }
    try {
      t.get(timeout, unit);
      return true;
    } catch (TimeoutException notYet) {
      return false;
    } catch (ExecutionException never) {
      throw new AssertionError(never); // completed only normally
    }
  }

  /** Reopens a terminated pool: a fresh generation, an open line, open timers. */
  void reboot() {
    synchronized (resizeLock) {
      if (!state.isTerminated()) {
        throw new IllegalStateException(admission.description + " is not terminated");
      }
      admission.accounting.stopping = false;
      timers.reopen();
      line.reopen(() -> {
        termination = new CompletableFuture<>();
        host.reopen();
        state.reopen();
      });
    }
  }
}
