package dev.warmpool.rxjava3;

import io.reactivex.rxjava3.disposables.DisposableContainer;

/**
 * What a {@link PoolTask} belongs to, as RxJava's {@code ScheduledRunnable} belongs to a
 * {@link DisposableContainer}: the {@link PoolWorker} whose lane runs it, or, for a delayed or periodic
 * direct task, the {@link PoolScheduler} that tracks it until it ends ({@link #delete} then). An
 * immediate direct task has none: it is in the pool's hands and runs.
 */
interface TaskParent extends DisposableContainer {

  /** Whether a task accepted earlier is skipped when reached: its worker was disposed. */
  boolean skipsAccepted();

  /** A task of this parent starts: its worker's lane has a thread, so the worker is admitted. */
  void running();

  /** The pool cancelled a pending timer of this parent without a dispose (the pool shut down). */
  void timerCancelledByPool();
}
