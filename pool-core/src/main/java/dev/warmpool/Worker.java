package dev.warmpool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * A worker thread: its life CAS, its wake signal, and the fields its {@link Engine} keeps on it. The
 * loop itself is {@link Engine#runWorker}.
 *
 * <h2>Life</h2>
 * <pre>
 *   NEW -> RUNNING     the thread entered run() (CAS)
 *   NEW -> ABANDONED   starting the thread failed (CAS by the starter): run() does nothing
 * </pre>
 * A factory may start the thread itself and then throw, return null, or return the started thread
 * (whose {@code start()} then throws). The CAS decides once whether this worker lives: if the thread
 * won, the start is a success whatever the factory said, so a task is never both rejected and run.
 *
 * <h2>Wake-ups</h2>
 * Whoever pops this worker from the idle stack owns it and writes {@link #signal}, then unparks it.
 * The worker parks until the signal is set, so a stray unpark or interrupt only makes it look again.
 */
final class Worker extends TaskSlot implements Runnable {
  /** Why an idle worker was woken. */
  enum Wake {
    /** To spin and look for work: the waker took the spinner count for it. */
    WAKE,
    /** To exit: the retirer gave its slot back already. */
    RETIRE
  }

  private static final int NEW = 0;
  private static final int RUNNING = 1;
  private static final int ABANDONED = 2;

  /**
   * The worker whose loop runs on a thread; read when a thread start is needed, and when a task
   * queues work on the pool that runs it ({@link Engine}, "Held tasks").
   */
  private static final ThreadLocal<Worker> ON_WORKER = new ThreadLocal<>();
  private static final VarHandle LIFE;
  private static final VarHandle THREAD;
  private static final VarHandle COUNTED;
  private static final VarHandle FIRST;
  private static final VarHandle SHIELD;
  /** {@link #shield}: a stop interrupt lands at once. */
  private static final int OPEN = 0;
  /** {@link #shield}: a stop interrupt is being delivered; shielding waits for it to land. */
  private static final int INTERRUPTING = 1;
  /** {@link #shield}: termination dependents run; a stop interrupt waits for the shield to lift. */
  private static final int SHIELDED = 2;
  /** {@link #shield}: shielded, and a stop interrupt is owed when the shield lifts. */
  private static final int OWED = 3;
  /**
   * INTERRUPTING, and another interrupter asked meanwhile: the interrupt on its way may already
   * have landed and been handled, so the delivering interrupter delivers one more (review r7, F1).
   */
  private static final int AGAIN = 4;
  /** {@link #first}: no first task, or it was claimed (by the worker, its failed start, shutdownNow). */
  private static final int NO_FIRST = 0;
  /** The factory is running: shutdownNow may still take the first task back. */
  private static final int FIRST_PENDING = 1;
  /** The factory returned and the thread is being started: the worker will run it. */
  private static final int FIRST_COMMITTED = 2;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      LIFE = l.findVarHandle(Worker.class, "life", int.class);
      THREAD = l.findVarHandle(Worker.class, "thread", Thread.class);
      COUNTED = l.findVarHandle(Worker.class, "counted", boolean.class);
      FIRST = l.findVarHandle(Worker.class, "first", int.class);
      SHIELD = l.findVarHandle(Worker.class, "shield", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  final Engine engine;
  /** The thread that runs this worker; set by the starter, or by the worker itself if it won. */
  volatile Thread thread;
  private volatile int life;
  /**
   * The task it was started with, until one side claims it (CAS):
   * <pre>
   *   PENDING   -> COMMITTED  the factory returned; the starter starts the thread
   *   PENDING   -> NONE       shutdownNow hands it back while the factory runs, or the worker
   *                           runs it (a factory that started the thread itself), or the start failed
   *   COMMITTED -> NONE       the worker runs it, or Thread.start failed
   * </pre>
   * So a task whose thread is being started is run (and interrupted by shutdownNow), as in
   * {@code ThreadPoolExecutor}, and one whose factory still runs is handed back.
   */
  @SuppressWarnings("unused") // accessed through FIRST
  private volatile int first;
  /** Whether this worker counts in workersStarted: set once, by the starter or by the worker. */
  @SuppressWarnings("unused") // accessed through COUNTED
  private volatile boolean counted;
  private volatile Wake signal;
  /**
   * Keeps interrupts meant for this worker's task or for its exit (a shutdownNow of any pool
   * whose work it runs, a {@code cancel(true)}) off a pool's termination dependents that this
   * thread runs (a blocking call there would throw at once); the interrupt is owed, not lost:
   * <pre>
   *   OPEN -> INTERRUPTING -> OPEN   an interrupter delivers it ({@link #interruptToStop})
   *   INTERRUPTING -> AGAIN -> INTERRUPTING   another asks meanwhile: the first delivers again
   *   OPEN -> SHIELDED               the worker shields (waits out INTERRUPTING first)
   *   SHIELDED -> OWED               an interrupter leaves it to the worker
   *   SHIELDED|OWED -> OPEN          the worker lifts the shield, interrupting itself if OWED
   * </pre>
   */
  @SuppressWarnings("unused") // accessed through SHIELD
  private volatile int shield;
  /** Thread-confined: this worker counts in the engine's spinner count. */
  boolean spinner;
  /** Thread-confined: this worker holds the seat of the task in its slot or just run. */
  boolean holdsSeat;
  /** Set before the start: the first look of this worker opens the engine's `starting`. */
  boolean opensStarting;
  /** Thread-confined: a task is running, so what it queues on this pool is held ({@link #held}). */
  boolean inTask;
  /**
   * Thread-confined: the accounting the running task counts under, set by {@link Accounting#run}
   * so that a future of ours that captures the task's exception can count it before it is published.
   */
  Accounting runningUnder;
  /** Thread-confined: the running task's exception, captured and already counted by its future. */
  Throwable capturedFailure;
  /** The running task was a future of ours cancelled before its task started (withdrawn). */
  boolean unrun;
  /** What the running task queued on this pool; run or published when it ends. */
  final HeldTasks held = new HeldTasks();
  /** Thread-confined: held tasks it ran next in a row, without a look at the run queue. */
  int heldRunsInARow;
  /** Set by whoever retired this worker and gave its slot back, before the worker exits. */
  volatile boolean slotReleased;
  /** Written only under the idle stack's lock, when the worker is pushed. */
  long lastUsed;
  /** The lane this worker is draining, or null; read by shutdownNow to hand back its queue. */
  volatile Draining lane;

  /** What a worker drains (a serial lane): shutdownNow hands back what it still holds. */
  interface Draining {
    void handBackQueued(List<Runnable> out);
  }

  /** A worker that starts with {@code kind}/{@code arg} (holding its seat), or with nothing. */
  Worker(Engine engine, TaskKind kind, Object arg) {
    this.engine = engine;
    this.kind = kind;
    this.arg = arg;
    this.holdsSeat = kind != null;
    this.first = kind != null ? FIRST_PENDING : NO_FIRST;
  }

  /** The worker or a failed start claims the first task: false if shutdownNow took it back. */
  boolean claimFirst() {
    return FIRST.compareAndSet(this, FIRST_COMMITTED, NO_FIRST)
        || FIRST.compareAndSet(this, FIRST_PENDING, NO_FIRST);
  }

  /** The factory returned: the thread is about to start and will run the first task. */
  void commitFirst() {
    FIRST.compareAndSet(this, FIRST_PENDING, FIRST_COMMITTED);
  }

  /** shutdownNow takes the first task back if the factory is still making the thread. */
  boolean takeFirstBack() {
    return FIRST.compareAndSet(this, FIRST_PENDING, NO_FIRST);
  }

  /**
   * Marks this worker counted in workersStarted; true for the one caller that must count it. The
   * starter counts it before {@code Thread.start} and the worker when it runs, whichever is first,
   * so the count moves before the thread can run, let alone count its own stop.
   */
  boolean markCounted() {
    return COUNTED.compareAndSet(this, false, true);
  }

  /** Called by the starter when starting the thread failed; false if the thread runs anyway. */
  boolean abandon() {
    return LIFE.compareAndSet(this, NEW, ABANDONED);
  }

  boolean isAbandoned() {
    return life == ABANDONED;
  }

  /** Records the thread the factory returned, unless the worker already recorded its own. */
  void offerThread(Thread t) {
    THREAD.compareAndSet(this, null, t);
  }

  /**
   * Interrupts this worker's thread for shutdownNow (its task, or its idle wait): at once, or when
   * the worker lifts its shield.
   */
  void interruptToStop() {
    Thread t = thread;
    if (t == null) {
      return; // its factory is still running: the worker sees `stopping` when it runs
    }
    for (;;) {
      int s = shield;
      if (s == OPEN) {
        if (SHIELD.compareAndSet(this, OPEN, INTERRUPTING)) {
          deliver(t);
          return;
        }
      } else if (s == SHIELDED) {
        if (SHIELD.compareAndSet(this, SHIELDED, OWED)) {
          return;
        }
      } else if (s == INTERRUPTING) {
        // Not "one is enough": the interrupt on its way may have landed and been handled
        // already; its interrupter delivers once more, and we need not wait for a slow one.
        // Unless we ask from inside that delivery (see #delivering).
        if (delivering(t) || SHIELD.compareAndSet(this, INTERRUPTING, AGAIN)) {
          return;
        }
      } else {
        return; // OWED or AGAIN: an interrupt that follows our request is owed already
      }
    }
  }

  /** Under INTERRUPTING: interrupts {@code t}, again for each request that came meanwhile. */
  private void deliver(Thread t) {
    for (;;) {
      interrupt(t); // never throws
      if (SHIELD.compareAndSet(this, INTERRUPTING, OPEN)) {
        return;
      }
      shield = INTERRUPTING; // it was AGAIN, which only this interrupter leaves
    }
  }

  /** {@link #shield}'s answer: the shield was up already (dependents that end another pool). */
  static final int NESTED = -1;
  /** {@link #shield}'s answer: the thread was not interrupted. */
  static final int CLEAR = 0;
  /** {@link #shield}'s answer: the thread was interrupted; the flag was cleared. */
  static final int WAS_INTERRUPTED = 1;

  /**
   * Interrupts {@code t}, best effort: a thread that refuses ({@code SecurityException}, or a
   * factory's {@code Thread} subclass that throws) stays as it is, as in {@code ThreadPoolExecutor};
   * shutdownNow must still hand back what it took.
   */
  static void interrupt(Thread t) {
    Delivery outer = DELIVERING.get();
    DELIVERING.set(new Delivery(t, outer));
    try {
      t.interrupt();
    } catch (Throwable refused) {
      // Its task is not stopped early; everything else of shutdownNow goes on. Errors too (review
      // r7, F6): one escaping here would lose the tasks shutdownNow took back from the line.
    } finally {
      DELIVERING.set(outer);
    }
  }

  /** One {@code interrupt()} this thread is inside now, and the one it was called from. */
  private record Delivery(Thread to, Delivery outer) { }

  /**
   * The deliveries this thread is inside now (through {@link #interrupt}), innermost first, else
   * null. Allocated only around a delivery, which is rare: the hot path never sees it.
   */
  private static final ThreadLocal<Delivery> DELIVERING = new ThreadLocal<>();

  /**
   * Whether this thread is inside {@code t.interrupt()} now, at any depth. A request to interrupt
   * {@code t} made from there (a factory's thread whose {@code interrupt()} calls
   * {@code cancel(true)} or a {@code shutdownNow}, directly or through another thread's
   * {@code interrupt()}) joins the delivery on its way instead of asking for one more: asking
   * again would make the delivery call {@code interrupt()} again, which asks again, for as long as
   * the task runs (review r9, F1; through two threads, review r11, F1; {@code FutureTask}
   * interrupts once).
   */
  static boolean delivering(Thread t) {
    if (t == null) {
      return false;
    }
    for (Delivery d = DELIVERING.get(); d != null; d = d.outer) {
      if (d.to == t) {
        return true;
      }
    }
    return false;
  }

  /**
   * On this worker's own thread, before it runs termination dependents: raises the shield and
   * clears the interrupt flag; the answer goes to {@link #unshield}.
   */
  int shield() {
    for (;;) {
      int s = shield;
      if (s == SHIELDED || s == OWED) {
        return NESTED; // only this thread raises it: a dependent is ending another pool
      }
      if (s == OPEN && SHIELD.compareAndSet(this, OPEN, SHIELDED)) {
        return Thread.interrupted() ? WAS_INTERRUPTED : CLEAR;
      }
      Thread.onSpinWait(); // INTERRUPTING or AGAIN: let it land, then clear it with the rest
    }
  }

  /**
   * Lifts the shield {@link #shield} raised: the thread is interrupted again if it was, or if an
   * interrupt is owed.
   */
  void unshield(int raised) {
    if (raised == NESTED) {
      return;
    }
    int s = (int) SHIELD.getAndSet(this, OPEN);
    if (raised == WAS_INTERRUPTED || s == OWED) {
      Thread.currentThread().interrupt();
    }
  }

  /** Called by the exclusive owner of this idle worker (it popped it from the stack). */
  void wake(Wake why) {
    signal = why;
    LockSupport.unpark(thread);
  }

  @Override
  public void run() {
    if (!LIFE.compareAndSet(this, NEW, RUNNING)) {
      return; // abandoned: its start was reported as failed and its task went elsewhere
    }
    thread = Thread.currentThread(); // the thread that won is the one to interrupt and join
    ON_WORKER.set(this);
    try {
      engine.runWorker(this);
    } finally {
      ON_WORKER.remove();
    }
  }

  /**
   * Whether the calling thread is running a worker loop of any pool: such a thread holds a task or
   * is about to take one, so it must never wait for a thread factory (guarantee 12).
   */
  static boolean onWorker() {
    return ON_WORKER.get() != null;
  }

  /** The worker whose loop runs on the calling thread, or null. */
  static Worker current() {
    return ON_WORKER.get();
  }

  /** For the model check, whose operations drive a worker from their own thread. */
  static void actAs(Worker w) {
    if (w == null) {
      ON_WORKER.remove();
    } else {
      ON_WORKER.set(w);
    }
  }

  /** Parks until the owner that popped this worker writes a signal; returns and clears it. */
  Wake awaitSignal() {
    Wake s;
    while ((s = takeSignal()) == null) {
      LockSupport.park(this);
      // An interrupt (shutdownNow interrupts every worker) must not make park return at once
      // forever; an idle worker leaves only through its signal.
      Thread.interrupted();
    }
    return s;
  }

  /** Returns and clears the signal, or null if none was written yet. */
  Wake takeSignal() {
    Wake s = signal;
    if (s != null) {
      signal = null;
    }
    return s;
  }
}
