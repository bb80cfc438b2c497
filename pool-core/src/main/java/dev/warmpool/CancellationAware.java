package dev.warmpool;

/**
 * A task for a pool's or a lane's {@code schedule*} methods that wants to hear when its timer ends
 * without running it: its future was cancelled, the pool shut down, or the lane closed (DESIGN.md
 * guarantee 7). Adapters use it to signal their subscribers and to forget the task, since nothing
 * else tells a task that it will never run.
 *
 * <p>{@link #onCancel()} is called once, after the future reads cancelled, on the thread that
 * cancelled it, or on a warmpool helper thread if that was the shared timer thread (no user code
 * runs there). It must not block. An exception it throws goes to the calling thread's
 * uncaught-exception handler and does not stop a shutdown from cancelling the other timers.
 */
public interface CancellationAware extends Runnable {

  /** The task's timer was cancelled: it will not run (again). */
  void onCancel();

  /**
   * The task waited in a pool's line past its deadline ({@code maxWaitInLine}, or its own
   * {@code enqueue} deadline, or the {@code controlledDelay} target while the line stood), or was queued in a serial lane that waited for its first seat past
   * {@code maxWaitInLine}, and will never run; {@code cause} says how long it waited. Called
   * once, on a warmpool helper thread, instead of {@link #onCancel()}; by default it calls
   * {@code onCancel()}. An adapter overrides it to deliver {@code cause} as a rejection.
   */
  default void onExpired(PoolOverloadedException cause) {
    onCancel();
  }
}
