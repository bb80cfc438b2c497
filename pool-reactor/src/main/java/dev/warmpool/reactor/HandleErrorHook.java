package dev.warmpool.reactor;

import java.lang.reflect.Field;
import java.util.function.BiConsumer;
import reactor.core.Exceptions;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Calls the hook set with {@link Schedulers#onHandleError}, as Reactor's own schedulers do for a task
 * that throws. The thread's uncaught-exception handler, which Reactor's {@code handleError} calls
 * first, is not called here: the pool's failure handler reports the failure already, and counts it.
 *
 * <p>Reactor offers no public call for the hook ({@code Schedulers.handleError} and the field
 * {@code onHandleErrorHook} are package private), so it is read from that field; reactor-core is an
 * automatic module, which opens its packages. Only if the field cannot be read (another Reactor
 * version) does the failure take Reactor's own path instead: an in-place {@code fromExecutor}
 * scheduler runs a task that rethrows it, with the thread's handler muted for that call. That path
 * passes the rethrowing task through {@code Schedulers.onSchedule} a second time, which the field
 * read avoids (each task passes through {@code onSchedule} exactly once).
 */
final class HandleErrorHook {
  private static final Field HOOK = hookField();
  private static final Scheduler IN_PLACE = Schedulers.fromExecutor(Runnable::run);
  private static final Thread.UncaughtExceptionHandler MUTED = (t, e) -> { };

  private HandleErrorHook() {}

  private static Field hookField() {
    try {
      Field f = Schedulers.class.getDeclaredField("onHandleErrorHook");
      f.setAccessible(true);
      return f;
    } catch (ReflectiveOperationException | RuntimeException unavailable) {
      return null;
    }
  }

  /** Passes {@code failure} to the onHandleError hook, if one is set, on the current thread. */
  static void call(Throwable failure) {
    try {
      if (HOOK != null) {
        @SuppressWarnings("unchecked")
        BiConsumer<Thread, ? super Throwable> hook =
            (BiConsumer<Thread, ? super Throwable>) HOOK.get(null);
        if (hook != null) {
          hook.accept(Thread.currentThread(), Exceptions.unwrap(failure));
        }
      } else {
        throughReactor(failure);
      }
    } catch (IllegalAccessException | RuntimeException hookFailed) {
      // a hook that throws must not hide the task's failure from the pool
    }
  }

  private static void throughReactor(Throwable failure) {
    Thread self = Thread.currentThread();
    Thread.UncaughtExceptionHandler own = self.getUncaughtExceptionHandler();
    boolean groupDefault = own == self.getThreadGroup();
    self.setUncaughtExceptionHandler(MUTED);
    try {
      IN_PLACE.schedule(() -> {
        throw PoolTask.<RuntimeException>sneaky(failure);
      });
    } finally {
      self.setUncaughtExceptionHandler(groupDefault ? null : own);
    }
  }
}
