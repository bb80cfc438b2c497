package dev.warmpool;

import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * A worker thread's state and its hand-off slot.
 *
 * <h2>Hand-off</h2>
 * Whoever pops a worker from the {@link IdleStack} owns it exclusively and writes the next task into
 * its slot: {@code fn} (plain) then {@code arg} (volatile, publishing both). The worker spins
 * briefly on {@code arg}, then announces {@code parked = true} and parks. The submitter unparks only if
 * it reads {@code parked == true} after writing {@code arg}; because both sides write one volatile and
 * then read the other, at least one of them sees the other's write, so no wake-up is lost and a
 * worker that is still spinning costs the submitter no unpark.
 *
 * <h2>States</h2>
 * <pre>
 *   BUSY -> IDLE      the worker found no waiting entry and pushed itself on the idle stack
 *   IDLE -> BUSY      a submitter popped it and wrote a task into its slot
 *   IDLE -> RETIRED   the cleaner, a shrinking resize or shutdown popped it and wrote RETIRE
 *   BUSY -> EXITED    surplus after a shrink, shutdown with an empty line, or a throwing failure handler
 * </pre>
 */
final class Worker implements Runnable {
  /** Slot value that tells an idle worker to exit. */
  static final Object RETIRE = new Object();
  /** A task function that does nothing and is not counted: wakes a worker to look at the line. */
  static final Consumer<Object> WAKE = arg -> {};
  /** The task function of plain {@link Runnable} tasks. */
  static final Consumer<Object> RUN = arg -> ((Runnable) arg).run();

  /** Spin iterations before parking: a few microseconds, well under a park/unpark round trip. */
  static final int SPINS = Runtime.getRuntime().availableProcessors() > 1 ? 1 << 7 : 0;

  final BoundedPool pool;
  Thread thread;
  /** Written by the owner before {@link #arg}; read by the worker after it. */
  Consumer<Object> fn;
  private Object firstArg;
  private volatile Object arg;
  private volatile boolean parked;
  /** Written only under the idle stack's lock, when the worker is pushed. */
  long lastUsed;
  /** True when the worker's slot in the pool count was already given back before it exits. */
  volatile boolean countReleased;

  Worker(BoundedPool pool, Consumer<Object> fn, Object firstArg) {
    this.pool = pool;
    this.fn = fn;
    this.firstArg = firstArg;
  }

  /** Called by the exclusive owner of this idle worker. */
  void handOff(Consumer<Object> fn, Object arg) {
    this.fn = fn;
    this.arg = arg;
    if (parked) {
      LockSupport.unpark(thread);
    }
  }

  void retire() {
    handOff(WAKE, RETIRE);
  }

  /**
   * Waits on the slot: a short spin, then park. Returns the task argument or {@link #RETIRE}.
   * At most one spinner per core: with many idle workers on few cores, more spinners would only
   * steal the CPU from the threads that produce and run tasks.
   */
  Object awaitTask() {
    Object a = arg;
    if (a == null && pool.tryStartSpinning()) {
      for (int i = 0; a == null && i < SPINS; i++) {
        Thread.onSpinWait();
        a = arg;
      }
      pool.stopSpinning();
    }
    if (a == null) {
      parked = true;
      while ((a = arg) == null) {
        LockSupport.park(this);
        Thread.interrupted(); // an interrupt meant for a finished task must not make park spin
      }
      parked = false;
    }
    arg = null;
    return a;
  }

  @Override
  public void run() {
    Consumer<Object> f = fn;
    Object a = firstArg;
    firstArg = null;
    boolean normal = false;
    try {
      while (a != null) {
        if (f != WAKE) {
          pool.runTask(this, f, a);
        }
        a = pool.nextTask(this);
        f = fn;
      }
      normal = true;
    } finally {
      pool.workerExited(this, normal);
    }
  }
}
