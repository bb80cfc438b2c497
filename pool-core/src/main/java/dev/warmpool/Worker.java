package dev.warmpool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * A worker thread and its loop: run a task, take the next one, spin briefly, park on the idle stack.
 *
 * <h2>The loop</h2>
 * After each task the worker settles its seat ({@link BoundedPool#finishTask}: hand it to the head of
 * the waiting line and run that entry next, or give it back), then takes the next task from the run
 * queue. Only when the queue is empty does it become a <em>spinner</em> (if fewer than
 * {@link BoundedPool#MAX_SPINNERS} spin), polling the queue for a few microseconds, and only then
 * does it push itself on the idle stack and park.
 *
 * <h2>Spinner token</h2>
 * {@link #spinner} says that this worker counts in the pool's spinner count: it took the count
 * itself, or a waker took it on its behalf before unparking it. A spinner that finds a task gives the
 * count back and, if it was the last spinner while tasks remain, wakes another
 * ({@link BoundedPool#foundWork}). A spinner that finds nothing gives the count back, then re-reads
 * the queue (publish, then check) before it parks; once on the stack it reads the queue once more,
 * and signals if a task arrived meanwhile.
 *
 * <h2>Life</h2>
 * <pre>
 *   NEW -> RUNNING     the thread entered run() (CAS)
 *   NEW -> ABANDONED   starting the thread failed (CAS by the starter): run() does nothing
 * </pre>
 * The CAS makes a start that "fails" after a factory already started the thread safe: whichever side
 * wins decides whether this worker lives, so a task is never both rejected and run.
 *
 * <h2>Wake-ups</h2>
 * Whoever pops this worker from the idle stack owns it and writes {@link #signal} (WAKE or RETIRE),
 * then unparks it. The worker parks until the signal is set, so a stray unpark or interrupt only
 * makes it look again.
 */
final class Worker extends TaskSlot implements Runnable {
  private static final int NEW = 0;
  private static final int RUNNING = 1;
  private static final int ABANDONED = 2;
  static final int WAKE = 1;
  static final int RETIRE = 2;

  /** Spin iterations before parking: a few microseconds, well under a park/unpark round trip. */
  static final int SPINS = Runtime.getRuntime().availableProcessors() > 1 ? 1 << 9 : 0;

  private static final VarHandle LIFE;

  static {
    try {
      LIFE = MethodHandles.lookup().findVarHandle(Worker.class, "life", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  final BoundedPool pool;
  Thread thread;
  private volatile int life;
  private volatile int signal;
  /** Thread-confined: this worker counts in the pool's spinner count. */
  boolean spinner;
  /** Thread-confined: this worker holds the seat of the task in its slot or just run. */
  boolean holdsSeat;
  /** Set by whoever retired this worker and gave its slot back, before the worker exits. */
  volatile boolean slotReleased;
  /** Written only under the idle stack's lock, when the worker is pushed. */
  long lastUsed;
  /** The lane this worker is draining, or null; read by shutdownNow to hand back its queue. */
  volatile SerialLane lane;

  /** A worker that starts with {@code kind}/{@code arg} (holding its seat), or as a spinner. */
  Worker(BoundedPool pool, TaskKind kind, Object arg) {
    this.pool = pool;
    this.kind = kind;
    this.arg = arg;
    this.holdsSeat = kind != null;
    this.spinner = kind == null;
  }

  /** Called by the starter when starting the thread failed; false if the thread runs anyway. */
  boolean abandon() {
    return LIFE.compareAndSet(this, NEW, ABANDONED);
  }

  boolean isAbandoned() {
    return life == ABANDONED;
  }

  /** Called by the exclusive owner of this idle worker (it popped it from the stack). */
  void wake(int why) {
    signal = why;
    LockSupport.unpark(thread);
  }

  @Override
  public void run() {
    if (!LIFE.compareAndSet(this, NEW, RUNNING)) {
      return; // abandoned: its start was reported as failed and its task went elsewhere
    }
    boolean normal = false;
    try {
      loop();
      normal = true;
    } finally {
      pool.workerExited(this, normal);
    }
  }

  private void loop() {
    boolean hasTask = kind != null;
    for (;;) {
      if (!hasTask && !findTask()) {
        return;
      }
      TaskKind k = kind;
      Object a = arg;
      clear();
      k.run(a, pool, this);
      switch (pool.finishTask(this)) {
        case RUN_NEXT -> hasTask = true;
        case LOOK_FOR_WORK -> hasTask = false;
        case EXIT -> {
          return;
        }
      }
    }
  }

  /** Takes the next task into the slot, spinning then parking; false if the worker must exit. */
  private boolean findTask() {
    RunQueue queue = pool.runQueue;
    for (;;) {
      if (takeFrom(queue)) {
        return true;
      }
      if (pool.mayExitIdle()) {
        dropSpinner();
        return false;
      }
      if (spinner || (spinner = pool.tryStartSpinning())) {
        for (int i = 0; i < SPINS; i++) {
          Thread.onSpinWait();
          if (queue.size() != 0 && takeFrom(queue)) {
            return true;
          }
        }
        dropSpinner();
        // Publish (the count dropped), then check: a producer that saw this worker spinning
        // relied on it. If work is there, spin again; if another spinner exists, it covers it.
        if (!queue.isEmpty() && (spinner = pool.tryStartSpinning())) {
          continue;
        }
      }
      switch (pool.parkIdle(this)) {
        case WAKE -> spinner = true; // the waker took the spinner count for us
        case RETIRE -> {
          return false;
        }
        default -> throw new AssertionError();
      }
    }
  }

  private boolean takeFrom(RunQueue queue) {
    if (!queue.poll(this)) {
      return false;
    }
    holdsSeat = true;
    if (spinner) {
      spinner = false;
      pool.foundWork();
    }
    return true;
  }

  void dropSpinner() {
    if (spinner) {
      spinner = false;
      pool.stopSpinning();
    }
  }

  /** Parks until the owner that popped this worker writes a signal; returns and clears it. */
  int awaitSignal() {
    int s;
    while ((s = signal) == 0) {
      LockSupport.park(this);
      // An interrupt (shutdownNow interrupts every worker) must not make park return at once
      // forever; an idle worker leaves only through its signal.
      Thread.interrupted();
    }
    signal = 0;
    return s;
  }
}
