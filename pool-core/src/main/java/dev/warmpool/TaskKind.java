package dev.warmpool;

import java.util.List;
import java.util.function.Consumer;

/**
 * What a queued argument is: each accepted task travels as a kind and an argument, so that queueing a
 * plain {@link Runnable} or a {@link FuncPool} argument allocates nothing. A kind knows how to run its
 * argument on a worker (and what to count) and how to hand it back on {@code shutdownNow()}.
 */
abstract class TaskKind {

  /**
   * Runs the argument on the current worker and counts what it ran under {@code accounting}: that
   * of the pool that accepted it (the worker's own; a subpool's task counts under its subpool).
   */
  abstract void run(Object arg, Accounting accounting, Worker worker);

  /** Adds to {@code out} what the argument would have run; part of {@code shutdownNow()}. */
  abstract void handBack(Object arg, List<Runnable> out);

  /**
   * For a subpool's shutdownNow: adds to {@code out} what a running argument still holds queued (a
   * lane's tasks); nothing for a plain task.
   */
  void handBackRunning(Object arg, List<Runnable> out) {}

  /**
   * The argument waited in line past its deadline and will never run: tell whoever waits for it
   * (a {@code submit} future fails with {@code cause}; a {@link CancellationAware} task hears
   * {@code onCancel()}). Runs no user code on the timer thread: the caller sees to that.
   */
  void expired(Object arg, PoolOverloadedException cause) {}

  /**
   * On the timer thread, as the argument expires: settles at once what runs no user code (a
   * {@code submit} future fails now, so it is never pending on a terminated pool, and a later
   * cancel finds it done). Returns whether user code must still hear of it through
   * {@link #expired}, on another thread.
   */
  boolean expiredAtOnce(Object arg, PoolOverloadedException cause) {
    return false;
  }

  /**
   * Under the line's lock, as the deadline of the argument's entry passes: whether the entry leaves
   * the line expired now, adding to {@code tasks} the tasks that expire with it beyond the argument
   * itself. A serial lane says no once it was admitted (its later tasks or a due timer ride in it),
   * and otherwise takes its queued tasks out, all of them unadmitted. Runs no user code.
   */
  boolean expiring(Object arg, List<Runnable> tasks) {
    return true;
  }

  /**
   * Where the tasks that expire with the argument's entry ({@link #expiring}) are counted: the
   * accounting that counted them in, which for a sharded pool's lane is its own shard's, whichever
   * shard's line it expired in.
   */
  Accounting countsIn(Object arg, Accounting line) {
    return line;
  }

  /** A task that fails in its own way when it expires in line (a {@code submit} future). */
  interface Expirable {
    void expired(PoolOverloadedException cause);
  }

  /** Whether accepting it counts one task; a lane's carrier does not (the lane counts its own). */
  boolean countsAsTask() {
    return true;
  }

  /** A plain {@link Runnable}: counted as one task, handed back as itself. */
  static final TaskKind RUNNABLE = new TaskKind() {
    @Override
    void run(Object arg, Accounting accounting, Worker worker) {
      accounting.run((Runnable) arg);
    }

    @Override
    void handBack(Object arg, List<Runnable> out) {
      out.add(DecoratedTask.original((Runnable) arg)); // as submitted
    }

    @Override
    boolean expiredAtOnce(Object arg, PoolOverloadedException cause) {
      Runnable task = DecoratedTask.original((Runnable) arg);
      if (task instanceof Expirable e) {
        e.expired(cause); // our own future: no user code
        return false;
      }
      return task instanceof CancellationAware;
    }

    @Override
    void expired(Object arg, PoolOverloadedException cause) {
      if (DecoratedTask.original((Runnable) arg) instanceof CancellationAware c) {
        c.onExpired(cause);
      }
    }
  };

  /** A function applied to each argument (a {@link FuncPool}): counted as one task per argument. */
  static TaskKind of(Consumer<Object> function) {
    return new TaskKind() {
      @Override
      void run(Object arg, Accounting accounting, Worker worker) {
        accounting.run(function, arg);
      }

      @Override
      void handBack(Object arg, List<Runnable> out) {
        out.add(() -> function.accept(arg));
      }
    };
  }
}
