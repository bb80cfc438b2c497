package dev.warmpool;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The one timer thread shared by all pools: it holds delayed tasks and pools' cleaners in a binary
 * heap ordered by deadline and fires each when due. Firing must be short and must run no user code:
 * delayed user tasks are only handed to their pool here, never run, and a worker start they need is
 * handed on to {@link ThreadStarter#ASYNC} (see {@link #isTimerThread()}).
 *
 * <p>The thread is a daemon, started on the first schedule and gone once the heap has stayed empty
 * for {@link #LINGER_NANOS}, also when its last task was cancelled rather than fired. Each task
 * knows its heap index, so cancelling removes it at once in O(log n) rather than leaving it to rot
 * until its deadline.
 */
final class SharedTimer {
  static final SharedTimer INSTANCE = new SharedTimer();
  static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

  /** A timer entry. {@code index} is accessed only under the timer's lock. */
  abstract static class Task {
    long deadline;
    /**
     * Breaks deadline ties in scheduling order, so equal delays fire first-in first-out. Read only
     * while the task is scheduled (under the lock); off the timer (fired, or never scheduled) the
     * owner may keep a time of its own here until it schedules the task again (a delayed task keeps
     * when it became due: no field of its own, idle timers may be many).
     */
    long seq;
    int index = -1;

    /** Runs on the timer thread when due; must not block. */
    abstract void fire();
  }

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  /** Accessed only under lock. */
  private Task[] heap = new Task[16];
  private int size;
  private long nextSeq;
  private Thread thread;
  private final Function<Runnable, Thread> threads;
  private final Ticker clock;

  SharedTimer() {
    this(TimerThread::new);
  }

  /** With the given way to make the timer thread; tests use it to make a start fail. */
  SharedTimer(Function<Runnable, Thread> threads) {
    this(threads, Ticker.system());
  }

  /**
   * With a clock of its own: a model check passes a fixed one, so that what callers measure in
   * this timer's time (how long a task has been held) does not depend on how fast the checker
   * runs, which would make its replays differ.
   */
  SharedTimer(Function<Runnable, Thread> threads, Ticker clock) {
    this.threads = threads;
    this.clock = clock;
  }

  /** Now, in this timer's time ({@link System#nanoTime()} but in model checks). */
  long now() {
    return clock.read();
  }

  /** Schedules (or reschedules) the task to fire {@code delayNanos} from now. */
  void scheduleIn(Task t, long delayNanos) {
    schedule(t, clock.read() + delayNanos);
  }

  /** A thread that {@link #isTimerThread()} recognizes, for a test's thread function. */
  static Thread newTimerThread(Runnable loop) {
    return new TimerThread(loop);
  }

  /** The timer's thread, a type of its own so that code can tell it is on it. */
  private static final class TimerThread extends Thread {
    TimerThread(Runnable loop) {
      super(loop, "warmpool-timer");
      setDaemon(true);
    }
  }

  /** Whether the calling thread is a timer thread, where no user code may run. */
  static boolean isTimerThread() {
    return Thread.currentThread() instanceof TimerThread;
  }

  /** Schedules (or reschedules) the task for {@code deadline} in this timer's time ({@link #now()}). */
  void schedule(Task t, long deadline) {
    lock.lock();
    try {
      if (t.index >= 0) {
        removeAt(t.index);
      }
      t.deadline = deadline;
      t.seq = nextSeq++;
      if (size == heap.length) {
        heap = Arrays.copyOf(heap, size * 2);
      }
      t.index = size++;
      heap[t.index] = t;
      siftUp(t.index);
      if (thread == null) {
        Thread fresh;
        try {
          fresh = threads.apply(this::loop);
          fresh.start();
        } catch (Throwable failure) {
          // No native thread: the caller learns the task is not scheduled, and the heap holds
          // nothing without a thread to fire it; the next schedule tries again.
          removeAt(t.index);
          throw failure;
        }
        thread = fresh;
      } else if (heap[0] == t) {
        changed.signal();
      }
    } finally {
      lock.unlock();
    }
  }

  /** Removes the task if it is scheduled; returns whether it was. */
  boolean cancel(Task t) {
    lock.lock();
    try {
      if (t.index < 0) {
        return false;
      }
      boolean wasFirst = t.index == 0;
      removeAt(t.index);
      if (size < heap.length / 4 && heap.length > 16) {
        heap = Arrays.copyOf(heap, heap.length / 2);
      }
      if (wasFirst) {
        changed.signal(); // the thread may sleep until the cancelled deadline; let it re-plan
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** Whether the task is scheduled now. */
  boolean isScheduled(Task t) {
    lock.lock();
    try {
      return t.index >= 0;
    } finally {
      lock.unlock();
    }
  }

  /** Tasks scheduled now; for tests. */
  int size() {
    lock.lock();
    try {
      return size;
    } finally {
      lock.unlock();
    }
  }

  /** The timer's thread now, or null; for tests (other timers' threads bear the same name). */
  Thread thread() {
    lock.lock();
    try {
      return thread;
    } finally {
      lock.unlock();
    }
  }

  /** Whether the timer thread is running; for tests. */
  boolean isRunning() {
    lock.lock();
    try {
      return thread != null;
    } finally {
      lock.unlock();
    }
  }

  private void loop() {
    for (;;) {
      Task due;
      lock.lock();
      try {
        due = null;
        long lingerUntil = clock.read() + LINGER_NANOS;
        while (due == null) {
          long now = clock.read();
          if (size == 0) {
            if (now - lingerUntil >= 0) {
              thread = null;
              return;
            }
            changed.awaitNanos(lingerUntil - now);
          } else if (heap[0].deadline - now <= 0) {
            due = heap[0];
            removeAt(0);
          } else {
            changed.awaitNanos(heap[0].deadline - now);
          }
        }
      } catch (InterruptedException e) {
        continue; // nobody interrupts this thread on purpose; keep serving
      } finally {
        lock.unlock();
      }
      try {
        due.fire();
      } catch (Throwable t) {
        Thread.currentThread().getUncaughtExceptionHandler()
            .uncaughtException(Thread.currentThread(), t);
      }
    }
  }

  private void removeAt(int i) {
    Task removed = heap[i];
    removed.index = -1;
    int last = --size;
    Task moved = heap[last];
    heap[last] = null;
    if (i != last) {
      heap[i] = moved;
      moved.index = i;
      siftDown(i);
      if (heap[i] == moved) {
        siftUp(i);
      }
    }
  }

  private static boolean before(Task a, Task b) {
    long d = a.deadline - b.deadline;
    return d < 0 || (d == 0 && a.seq < b.seq);
  }

  private void siftUp(int i) {
    Task t = heap[i];
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      Task p = heap[parent];
      if (!before(t, p)) {
        break;
      }
      heap[i] = p;
      p.index = i;
      i = parent;
    }
    heap[i] = t;
    t.index = i;
  }

  private void siftDown(int i) {
    Task t = heap[i];
    int half = size >>> 1;
    while (i < half) {
      int child = 2 * i + 1;
      int right = child + 1;
      if (right < size && before(heap[right], heap[child])) {
        child = right;
      }
      if (!before(heap[child], t)) {
        break;
      }
      heap[i] = heap[child];
      heap[i].index = i;
      i = child;
    }
    heap[i] = t;
    t.index = i;
  }
}
