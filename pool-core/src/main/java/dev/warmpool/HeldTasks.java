package dev.warmpool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;

/**
 * The tasks that a worker's running task queued on its own pool, held back by that worker until the
 * task ends (see {@link Engine}, "Held tasks"). Each holds a seat. The owner adds them while its task
 * runs and takes them all when it ends; two other threads may take them all earlier: the engine's
 * hold watch on the timer thread (the task runs long, it may block) and {@code shutdownNow} (it hands
 * them back). So every access takes a small spin lock, which only those rare takers contend.
 */
final class HeldTasks {
  private static final VarHandle LOCK;

  static {
    try {
      LOCK = MethodHandles.lookup().findVarHandle(HeldTasks.class, "lock", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @SuppressWarnings("unused") // accessed through LOCK
  private volatile int lock;
  /**
   * Written under the lock; the owner may read it without, as only the owner adds. Volatile for the
   * hold watch's unlocked look ({@link Engine#publishAllHeld}): the add and the holder's later read
   * of the watch flag must not be reordered.
   */
  private volatile int size;
  /** When the first of the tasks held now was added (in the hold watch's timer's time); written before size. */
  private long since;
  private TaskKind[] kinds = new TaskKind[4];
  private Object[] args = new Object[4];

  /** Whether anything is held; exact for the owner, a hint for anyone else. */
  boolean isEmpty() {
    return size == 0;
  }

  /**
   * Whether tasks have been held here since at or before {@code cutoff} (in the watch timer's
   * time, {@link SharedTimer#now()}); a hint for the hold watch: read without the lock, after the
   * size it was written before.
   */
  boolean heldSince(long cutoff) {
    return size != 0 && since - cutoff <= 0;
  }

  /** How many are held now; for the model check. */
  int size() {
    lock();
    try {
      return size;
    } finally {
      unlock();
    }
  }

  /**
   * The owner adds a task; true if it is the first one held now (the caller arms the watch). The
   * first is stamped in the watch's timer's time.
   */
  boolean add(TaskKind kind, Object arg, SharedTimer clock) {
    lock();
    try {
      int n = size;
      if (n == kinds.length) {
        kinds = java.util.Arrays.copyOf(kinds, n * 2);
        args = java.util.Arrays.copyOf(args, n * 2);
      }
      kinds[n] = kind;
      args[n] = arg;
      if (n == 0) {
        since = clock.now();
      }
      size = n + 1;
      return n == 0;
    } finally {
      unlock();
    }
  }

  /**
   * Takes every task: the first into {@code first} if it is not null (the owner runs it next), the
   * others into {@code queue}, in the order they were added.
   *
   * @return how many went into {@code queue}
   */
  int drainTo(TaskSlot first, RunQueue queue) {
    lock();
    try {
      int n = size;
      int i = 0;
      if (first != null && n != 0) {
        first.kind = kinds[0];
        first.arg = args[0];
        i = 1;
      }
      for (; i < n; i++) {
        queue.offer(kinds[i], args[i]);
      }
      clear(n);
      return first != null && n != 0 ? n - 1 : n;
    } finally {
      unlock();
    }
  }

  /** Hands every task back into {@code out} (shutdownNow); returns how many, whose seats to free. */
  int handBack(List<Runnable> out) {
    lock();
    try {
      int n = size;
      for (int i = 0; i < n; i++) {
        kinds[i].handBack(args[i], out);
      }
      clear(n);
      return n;
    } finally {
      unlock();
    }
  }

  private void clear(int n) {
    for (int i = 0; i < n; i++) {
      kinds[i] = null;
      args[i] = null;
    }
    size = 0;
  }

  private void lock() {
    while (!LOCK.compareAndSet(this, 0, 1)) {
      Thread.onSpinWait(); // a taker moves a few tasks and leaves
    }
  }

  private void unlock() {
    LOCK.setRelease(this, 0);
  }
}
