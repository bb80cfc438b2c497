package dev.warmpool.rxjava3;

import io.reactivex.rxjava3.disposables.DisposableContainer;
import java.util.concurrent.TimeUnit;

/**
 * What a {@link PoolTask} belongs to, as RxJava's {@code ScheduledRunnable} belongs to a
 * {@link DisposableContainer}: the {@link PoolWorker} whose lane runs it, or, for a direct task, the
 * {@link PoolScheduler}, which tracks a delayed or periodic one until it ends ({@link #delete} then).
 */
interface TaskParent extends DisposableContainer {

  /**
   * Hands the task to this parent's lane or pool, now ({@code delayNanos <= 0}) or after the delay.
   * Due now, it needs a thread now and is admitted or rejected as an immediate task, unless
   * {@code timer} (a periodic task's first arm), which goes through the timer and is never rejected
   * for load (guarantee 7). A refusal is reported by the parent's rules and returns false.
   */
  boolean arm(PoolTask task, long delayNanos, boolean timer);

  /** The clock of this parent's scheduler; a periodic task keeps its rate on it. */
  long now(TimeUnit unit);

  /** Whether a task accepted earlier is skipped when reached: its worker was disposed. */
  boolean skipsAccepted();

  /**
   * The pool ended a task of this parent unrun, without a dispose: it cancelled a pending timer (the
   * pool shut down), or the task {@code expired}: an immediate direct task waited in the pool's line
   * past its deadline ({@code maxWaitInLine}).
   */
  void cancelledByPool(boolean expired);
}
