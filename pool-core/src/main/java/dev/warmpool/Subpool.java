package dev.warmpool;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A subpool (see {@link WorkerPool#newSubpool(String, int, boolean, int)}): its own seats, line,
 * mode and counters, running its tasks on its parent's workers.
 *
 * <h2>Implementation notes</h2>
 * Admission is its own {@link Admission}: a task takes a seat of the subpool or waits in the subpool's
 * line.
 * A task holding a seat is a {@link Seat} and is <em>forwarded</em> to the parent as one task of
 * {@link #KIND}: a nonblocking subpool (or a {@code tryExecute}) offers it to the parent in
 * {@link Mode#TRY}, so a full parent refuses it at the submitting call; otherwise it is enqueued in
 * the parent as admitted work and waits in the parent's line if the parent is full. So a subpool
 * holds at most {@code capacity} places in its parent's line, which is what bounds how long another
 * subpool's seated task waits (the fairness policy). When the task finishes, on the parent's worker,
 * its subpool seat goes to the head of the subpool's line, which is forwarded in turn.
 *
 * <p><b>Counting.</b> The parent does not count a forwarded task itself ({@link #KIND} counts as no
 * task); the subpool counts each of its tasks in its own counters and in its parent's.
 *
 * <p><b>Seats.</b> {@link #seated} holds every seat of the subpool that a task holds: whoever
 * removes the seat from it gives the seat back, so of the paths that end a seated task (it ran, it
 * was withdrawn before running, a shutdownNow handed it back, the parent refused it) exactly one
 * gives its seat back. shutdownNow finds the subpool's tasks there.
 *
 * <p><b>Termination.</b> The parent terminates only after its subpools (its
 * {@link Lifecycle}'s children); so while a subpool has a seated task or an entry in line, its
 * parent has not terminated and still takes the subpool's admitted work. A subpool tells its parent
 * it terminated only after its own {@code whenTerminated()} stage completed, and asking for that
 * stage makes the parent hold the subpool strongly until then ({@link #whenTerminated}).
 */
final class Subpool extends AbstractWorkerPool {

  /** A forwarded task of a subpool, as the parent queues and runs it. */
  static final TaskKind KIND = new TaskKind() {
    @Override
    void run(Object arg, Accounting accounting, Worker worker) {
      Seat s = (Seat) arg;
      s.subpool.run(s, worker);
    }

    @Override
    void handBack(Object arg, List<Runnable> out) {
      Seat s = (Seat) arg;
      if (s.transition(TaskEnvelope.QUEUED, TaskEnvelope.HANDED_BACK)) {
        s.kind.handBack(s.arg, out);
      }
      s.subpool.release(s);
    }

    @Override
    boolean countsAsTask() {
      return false; // the subpool counts it, in its parent too
    }

    @Override
    boolean expiredAtOnce(Object arg, PoolOverloadedException cause) {
      Seat s = (Seat) arg;
      return s.subpool.expiredInParent(s, cause);
    }

    @Override
    void expired(Object arg, PoolOverloadedException cause) {
      Seat s = (Seat) arg;
      try {
        s.kind.expired(s.arg, cause);
      } finally {
        s.subpool.release(s); // after it heard: the subpool does not terminate before that
      }
    }
  };

  /**
   * A task of the subpool: its envelope (in the subpool's line, or holding one of its seats), plus
   * its place in the parent's line, which is known only after the hand-off ({@link LateHandle}).
   */
  static final class Seat extends TaskEnvelope.Full {
    final Subpool subpool;
    final LateHandle outer = new LateHandle();
    /**
     * When its line deadline passes ({@link System#nanoTime()}), or 0 for none: written before the
     * seat is placed or linked, and carried on into the parent's line ({@link #leftToWait}).
     */
    long deadline;

    Seat(Subpool subpool, TaskKind kind, Object arg, Thread caller, int state) {
      super(subpool.admission, kind, arg, caller, state);
      this.subpool = subpool;
    }

    @Override
    boolean reset() {
      return false; // its place in the parent is bound once
    }
  }

  /** The parent's door: where seated tasks are forwarded. */
  private final AbstractWorkerPool parent;
  private final Admission parentAdmission;
  private final Lifecycle parentLifecycle;
  final Accounting accounting;
  final Admission admission;
  final Lifecycle lifecycle;
  private final Set<Seat> seated = ConcurrentHashMap.newKeySet();
  private final AtomicInteger running = new AtomicInteger();

  private Subpool(AbstractWorkerPool parent, Admission parentAdmission, Lifecycle parentLifecycle,
      String name, int capacity, boolean nonblocking, int maxWaiting) {
    super(parent.decorator); // a task is decorated once, at the subpool's door, as its parent would
    this.parent = parent;
    this.parentAdmission = parentAdmission;
    this.parentLifecycle = parentLifecycle;
    this.accounting = new Accounting(parentAdmission.accounting);
    Wiring wiring = new Wiring();
    this.admission = new Admission(name, "subpool \"" + name + "\" of " + parentAdmission.description,
        capacity, nonblocking, maxWaiting, parentAdmission.maxWaitInLineNanos,
        parentAdmission.policy, accounting,
        parentAdmission, false, wiring,
        this::tryTerminate);
    this.lifecycle = new Lifecycle(admission, timers, wiring, parentLifecycle);
    timers.onQuiet(this::tryTerminate);
  }

  /** Makes a subpool of the pool whose door, admission and lifecycle are given. */
  static Subpool of(AbstractWorkerPool parent, Admission parentAdmission, Lifecycle parentLifecycle,
      String name, int capacity, boolean nonblocking, int maxWaiting) {
    Objects.requireNonNull(name, "name must not be null");
    WorkerPool.Builder.checkCapacity(capacity);
    if (maxWaiting < 0) {
      throw new IllegalArgumentException("maxWaiting must be >= 0, was " + maxWaiting);
    }
    parentAdmission.checkOpen();
    Subpool sub = new Subpool(parent, parentAdmission, parentLifecycle, name, capacity, nonblocking,
        maxWaiting);
    parentLifecycle.adopt(sub);
    return sub;
  }

  private void tryTerminate() {
    lifecycle.tryTerminate();
  }

  /** The roles the subpool's parts see of each other. */
  private final class Wiring implements Admission.Placement, Lifecycle.Host {
    @Override
    public boolean place(TaskKind kind, Object arg, Mode mode) {
      Seat s = new Seat(Subpool.this, kind, arg, null, TaskEnvelope.QUEUED);
      s.deadline = admission.deadlineFor(kind, mode, 0L);
      return placeEntry(s, mode);
    }

    @Override
    public boolean placeEntry(TaskEnvelope e, Mode mode) {
      return Subpool.this.placeEntry((Seat) e, mode);
    }

    @Override
    public TaskEnvelope newEntry(TaskKind kind, Object arg, Thread caller, int state,
        boolean full) {
      return new Seat(Subpool.this, kind, arg, caller, state); // carries its deadline on
    }

    @Override
    public void handOff(TaskEnvelope e) {
      // Admitted work: never refused for load, and the parent cannot have terminated (see notes).
      forward((Seat) e, Mode.ADMITTED);
    }

    @Override
    public void withdrawnQueued(TaskEnvelope e) {
      Seat s = (Seat) e;
      if (s.outer.cancel()) {
        release(s); // it left the parent's line; else the worker that reaches it gives the seat back
      }
    }

    @Override
    public int busy() {
      return running.get();
    }

    @Override
    public boolean quiescent() {
      return true; // no workers of its own
    }

    @Override
    public boolean closeIfQuiescent() {
      return true;
    }

    @Override
    public void reopen() {
      // no workers of its own
    }

    @Override
    public void shutDown() {
      // no workers of its own to let go
    }

    @Override
    public void terminated() {
      parentLifecycle.childTerminated(Subpool.this);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Forwarding to the parent

  @Override
  boolean dispatch(TaskKind kind, Object arg, Mode mode) {
    return admission.dispatch(kind, arg, mode);
  }

  @Override
  TaskHandle enqueue(TaskKind kind, Object arg, Mode mode, long maxWaitNanos) {
    return admission.enqueue(kind, arg, mode, maxWaitNanos);
  }

  @Override
  boolean dispatchTimed(TaskKind kind, Object arg, long nanos) throws InterruptedException {
    return admission.dispatchTimed(kind, arg, nanos);
  }

  @Override
  void checkOpen() {
    admission.checkOpen();
  }

  @Override
  PoolClosedException closed() {
    return admission.closed();
  }

  private boolean placeEntry(Seat s, Mode mode) {
    boolean counted = s.kind.countsAsTask();
    if (counted) {
      accounting.accepted(); // before the hand-off: no snapshot shows it completed first
    }
    boolean placed;
    try {
      placed = forward(s, mode);
    } catch (RuntimeException | Error refused) {
      if (counted) {
        accounting.withdrawn();
      }
      accounting.rejected();
      throw refused;
    }
    if (placed) {
      return true;
    }
    if (counted) {
      accounting.withdrawn();
    }
    if (mode == Mode.PROBE) {
      return false;
    }
    if (mode == Mode.TRY) {
      accounting.rejected();
      return false;
    }
    throw admission.parentFull(parentAdmission);
  }

  /**
   * Sends a seated task to the parent. Returns false, with the seat given back, if the parent
   * refused it; throws, with the seat given back, if the parent rejected it with an exception. If a
   * shutdownNow handed the task back meanwhile, the task counts as accepted: returns true.
   */
  private boolean forward(Seat s, Mode mode) {
    seated.add(s);
    boolean onlyNow = mode == Mode.TRY || mode == Mode.PROBE
        || (admission.nonblocking && mode != Mode.ADMITTED);
    boolean taken;
    try {
      if (!onlyNow) {
        // A free parent seat takes a new task at once, with no handle to allocate: a task queued
        // for a worker is withdrawn by its own state; only a full parent needs a withdrawable
        // place. (Admitted work skips the probe: a failed thread start must not reject it.)
        if (mode != Mode.ADMITTED && parent.dispatch(KIND, s, Mode.PROBE)) {
          return true;
        }
        if (s.outer.bind(parent.enqueue(KIND, s, Mode.ADMITTED, leftToWait(s)))) {
          release(s); // withdrawn or handed back before its place in the parent was known
        }
        return true;
      }
      taken = parent.dispatch(KIND, s, mode == Mode.PROBE ? Mode.PROBE : Mode.TRY);
    } catch (RuntimeException | Error refused) {
      if (unplace(s)) {
        throw refused;
      }
      return true;
    }
    return taken || !unplace(s);
  }

  /**
   * What is left of the task's line deadline as it joins the parent's line (at least 1 ns, so a
   * deadline already past expires there at once); 0 for none. Only a task with a handle, a future or
   * a forwarded task of a nested subpool carries one: not a lane (admitted once seated here), nor
   * an {@code execute} (it returned when seated here, and could hear of no later expiry).
   */
  private static long leftToWait(Seat s) {
    long at = s.deadline;
    if (at == 0L || s.caller() != null || s.kind == SerialLane.KIND) {
      return 0L; // a blocked execute returned once seated here; a lane is admitted once seated
    }
    return Math.max(1L, at - System.nanoTime());
  }

  /**
   * On the parent's timer thread: the task's place in the parent's line expired. The task expires
   * (leaves {@code submitted}, counts in {@code expired}, its handle reads expired) unless its
   * handle or a shutdownNow took it first; either way its seat comes back here, since no worker
   * will reach it. Returns true if user code must still hear of it ({@link TaskKind#expired},
   * which gives the seat back after).
   */
  private boolean expiredInParent(Seat s, PoolOverloadedException cause) {
    boolean counts = s.kind.countsAsTask();
    if (counts) {
      accounting.expired(); // before the handle can read EXPIRED (see Accounting.notExpired)
    }
    if (!s.transition(TaskEnvelope.QUEUED, TaskEnvelope.EXPIRED)) {
      if (counts) {
        accounting.notExpired(); // its handle or a shutdownNow took it first, and counted it
      }
      release(s);
      return false;
    }
    if (counts) {
      accounting.withdrawn();
    }
    if (s.kind.expiredAtOnce(s.arg, cause)) {
      return true;
    }
    release(s);
    return false;
  }

  /** The parent refused the task: takes it back, unless a shutdownNow handed it back first. */
  private boolean unplace(Seat s) {
    boolean mine = s.transition(TaskEnvelope.QUEUED, TaskEnvelope.CLOSED);
    release(s);
    return mine;
  }

  /** Runs a forwarded task on a parent's worker. */
  private void run(Seat s, Worker worker) {
    if (!s.start(worker)) {
      release(s);
      return;
    }
    running.incrementAndGet();
    try {
      s.kind.run(s.arg, accounting, worker);
    } finally {
      running.decrementAndGet();
      s.finish();
      if (accounting.stopping && !parentAdmission.accounting.stopping()) {
        Thread.interrupted(); // our shutdownNow's interrupt was for this task, not the next
      }
      release(s);
    }
  }

  /** Gives the task's seat back, once: it finished, or will never run. */
  private void release(Seat s) {
    if (seated.remove(s)) {
      admission.giveBackSeat();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Configuration and stats

  @Override
  public Duration maxIdle() {
    return parent.maxIdle();
  }

  @Override
  AbstractWorkerPool timingParent() {
    return parent;
  }

  @Override
  public String name() {
    return admission.name;
  }

  @Override
  public int capacity() {
    return admission.capacity;
  }

  @Override
  public boolean isNonblocking() {
    return admission.nonblocking;
  }

  @Override
  public void resize(int newCapacity) {
    WorkerPool.Builder.checkCapacity(newCapacity);
    int old;
    synchronized (lifecycle.resizeLock) {
      old = admission.capacity;
      admission.capacity = newCapacity;
    }
    if (newCapacity > old) {
      admission.seatsGrew(); // new seats serve the line first (a subpool has no siblings)
    } else {
      admission.drainLine(); // a shrink takes effect as tasks finish
    }
  }

  @Override
  public WorkerPool newSubpool(String name, int capacity) {
    return newSubpool(name, capacity, admission.nonblocking, admission.maxWaiting);
  }

  @Override
  public WorkerPool newSubpool(String name, int capacity, boolean nonblocking, int maxWaiting) {
    return Subpool.of(this, admission, lifecycle, name, capacity, nonblocking, maxWaiting);
  }

  @Override
  public SerialExecutor newSerialExecutor() {
    return new SerialLane(this, admission);
  }

  /**
   * Its own counters; {@code workers} and {@code busy} are its tasks running now, {@code waiting}
   * its line plus its seated tasks not yet started; {@code idle} and the worker counters are 0.
   */
  @Override
  public PoolStats stats() {
    int run = running.get();
    int queued = Math.max(0, admission.state.seats() - run);
    return accounting.counters.snapshot(admission.capacity, run, run, 0,
        admission.line.size() + queued);
  }

  @Override
  public String toString() {
    return "subpool(\"" + admission.name + "\",capacity=" + admission.capacity + ",nonblocking="
        + admission.nonblocking + ") of " + parent;
  }

  // ---------------------------------------------------------------------------------------------
  // Lifecycle

  /**
   * Hands back its line and its seated tasks, then interrupts its running ones (in that order: a
   * task that ends at the interrupt would hand its seat to a task not yet handed back); the parent
   * runs on.
   */
  @Override
  public List<Runnable> shutdownNow() {
    return shutdownNow(true);
  }

  /**
   * An ancestor's shutdownNow: hands back as {@link #shutdownNow()} does, and interrupts nothing.
   * The ancestor interrupts every task running under it once its own line is handed back too: a
   * task interrupted here would give its seat to an ancestor's waiting task that the ancestor's
   * shutdownNow was about to hand back (review r13, F2).
   */
  List<Runnable> shutdownNowUnderAncestor() {
    return shutdownNow(false);
  }

  private List<Runnable> shutdownNow(boolean interrupt) {
    List<Runnable> tasks = lifecycle.shutdownNowLine();
    for (Seat s : seated) {
      if (s.transition(TaskEnvelope.QUEUED, TaskEnvelope.HANDED_BACK)) {
        s.kind.handBack(s.arg, tasks);
        if (s.outer.cancel()) {
          release(s); // else the parent's worker that reaches it, or forward, gives the seat back
        }
      }
    }
    for (Seat s : seated) {
      if (s.isRunning()) { // also while a cancel(true)'s interrupt is on its way
        s.kind.handBackRunning(s.arg, tasks);
        if (interrupt) {
          s.interrupt();
        }
      }
    }
    DelayedTask.handedBack(tasks);
    tryTerminate();
    return tasks;
  }

  @Override
  public void shutdown() {
    lifecycle.shutdown();
  }

  @Override
  public boolean isShutdown() {
    return lifecycle.isShutdown();
  }

  @Override
  public boolean isTerminated() {
    return lifecycle.isTerminated();
  }

  /**
   * Also holds this subpool, and each subpool above it, from its parent until it terminates: its
   * user may keep nothing but the stage (or a dependent of it), and the parent's shutdown must still
   * reach it. A subpool nobody asked this of stays weakly held (see {@link Lifecycle}).
   */
  @Override
  public CompletionStage<Void> whenTerminated() {
    keepUntilTerminated();
    return lifecycle.whenTerminated();
  }

  /** Its parent holds it strongly until it terminates, and so on up to the root pool. */
  private void keepUntilTerminated() {
    parentLifecycle.keep(this);
    if (parent instanceof Subpool p) {
      p.keepUntilTerminated(); // else the two would be garbage together, held only by each other
    }
  }

  /** Waits until every task of this subpool has finished or been handed back. */
  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return lifecycle.awaitTerminated(timeout, unit);
  }

  /**
   * Reopens a terminated subpool on its parent.
   *
   * @throws PoolClosedException if the parent is shut down
   */
  @Override
  public void reboot() {
    parentAdmission.checkOpen();
    lifecycle.reboot();
    // After reopening, so that a late removal for our previous termination cannot undo it (the
    // parent removes only a subpool that is still terminated); if the parent's shutdown missed
    // us, we close again and the call is refused.
    parentLifecycle.adopt(this);
  }
}
