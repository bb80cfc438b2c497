package dev.warmpool;

/**
 * A task that reports its own failures: an adapter's task, which reports to its ecosystem's hook
 * (Reactor's {@code Schedulers.onHandleError}, {@code RxJavaPlugins.onError}, a coroutine's
 * exception handling). When it throws, the pool counts the failure in {@link PoolStats#failed()}
 * and calls {@link #onFailure} instead of its default handler (the thread's uncaught-exception
 * handler). A failure handler set explicitly on the pool's builder is called instead of
 * {@code onFailure}: it sees every failure, whatever door the task came through (DESIGN.md
 * guarantee 8). The same holds for a delayed or periodic task that is a {@code FailureAware}.
 *
 * <p>{@code onFailure} runs on the worker, right after the task threw; if it throws, the worker
 * ends (as with a failure handler that throws) and the pool replaces it.
 */
public interface FailureAware extends Runnable {

  /** The task threw {@code failure}: report it, once. */
  void onFailure(Throwable failure);
}
