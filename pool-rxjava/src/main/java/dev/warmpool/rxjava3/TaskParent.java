package dev.warmpool.rxjava3;

import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.disposables.DisposableContainer;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The container a {@link PoolTask} belongs to, as RxJava's {@code ScheduledRunnable} belongs to a
 * {@link DisposableContainer}: a worker (its serial lane runs the task) or, for a direct task, its
 * scheduler. {@link #add} is called before a delayed or periodic task is handed on and {@link
 * #delete} when it ends; whoever tracks it for a shutdown does so there.
 */
interface TaskParent extends DisposableContainer {

  /** {@link #arm}'s delay for a task due now that needs a thread now: admitted or refused now. */
  long NOW = -1;

  /**
   * Hands {@code task} to the pool or lane: due now as an immediate task ({@link #NOW}), else
   * through the timer after {@code delayNanos} (0: due now, never refused for load, guarantee 7),
   * at the core's fixed rate if {@code periodNanos > 0}.
   *
   * @return the hand-off's handle (a {@code TaskHandle} or a {@code Future}), or null if it has none
   * @throws RejectedExecutionException if the pool or lane refused it
   */
  Object arm(Runnable task, long delayNanos, long periodNanos);

  /** The pool refused a task of this parent, or the task expired in line: report it by its rules. */
  void refused(RejectedExecutionException e);

  /** The pool ended a pending timer of this parent unrun: it shut down, or the lane closed. */
  void cancelledByPool();

  /** Whether a task accepted earlier is skipped when reached: its worker was disposed. */
  default boolean skipsAccepted() {
    return false;
  }

  /** The clock of this parent's scheduler; a worker's periodic task keeps its rate on it. */
  long now(TimeUnit unit);

  @Override
  default boolean remove(Disposable d) {
    boolean removed = delete(d);
    if (removed) {
      d.dispose();
    }
    return removed;
  }
}
