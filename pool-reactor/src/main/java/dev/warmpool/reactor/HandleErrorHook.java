package dev.warmpool.reactor;

import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Calls the hook set with {@link Schedulers#onHandleError}, as Reactor's own schedulers do for a task
 * that throws. Reactor offers no public call for it ({@code Schedulers.handleError} is package
 * private), so the failure takes Reactor's own path: a direct {@code Schedulers.fromExecutor}
 * scheduler runs a task that rethrows it, in place, and Reactor reports it to the thread's
 * uncaught-exception handler and then to the hook. The uncaught-exception handler is muted for that
 * one call, because the pool's failure handler reports the failure already (and counts it); the
 * handler is the current thread's own, so muting it is invisible to other threads.
 */
final class HandleErrorHook {
  private static final Scheduler IN_PLACE = Schedulers.fromExecutor(Runnable::run);
  private static final Thread.UncaughtExceptionHandler MUTED = (t, e) -> { };

  private HandleErrorHook() {}

  /** Passes {@code failure} to the onHandleError hook, if one is set, on the current thread. */
  static void call(Throwable failure) {
    Thread self = Thread.currentThread();
    Thread.UncaughtExceptionHandler own = self.getUncaughtExceptionHandler();
    boolean groupDefault = own == self.getThreadGroup();
    self.setUncaughtExceptionHandler(MUTED);
    try {
      IN_PLACE.schedule(() -> {
        throw PoolTask.<RuntimeException>sneaky(failure);
      });
    } catch (RuntimeException hookFailed) {
      // a hook that throws must not hide the task's failure from the pool
    } finally {
      self.setUncaughtExceptionHandler(groupDefault ? null : own);
    }
  }
}
