package dev.warmpool.reactor;

import java.lang.reflect.Field;
import java.util.function.BiConsumer;
import reactor.core.Exceptions;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Reports a task's failure as Reactor's own schedulers do ({@code Schedulers.handleError}): to the
 * thread's uncaught-exception handler, then to the hook set with {@link Schedulers#onHandleError}.
 * The pool calls it (through {@link PoolTask#onFailure}) once per failure, when no failure handler
 * was set on its builder.
 *
 * <p>Reactor offers no public call for this path ({@code Schedulers.handleError} and the field
 * {@code onHandleErrorHook} are package private), so the hook is read from that field; reactor-core
 * is an automatic module, which opens its packages. Only if the field cannot be read (another
 * Reactor version) does the failure take Reactor's own path instead: an in-place
 * {@code fromExecutor} scheduler runs a task that rethrows it. That path passes the rethrowing task
 * through {@code Schedulers.onSchedule} a second time, which the field read avoids (each task passes
 * through {@code onSchedule} exactly once).
 */
final class HandleErrorHook {
  private static final Field HOOK = hookField();
  private static final Scheduler IN_PLACE = Schedulers.fromExecutor(Runnable::run);

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

  /** Reports {@code failure} on the current thread, as Reactor's {@code handleError} does. */
  static void call(Throwable failure) {
    if (HOOK == null) {
      IN_PLACE.schedule(() -> {
        throw HandleErrorHook.<RuntimeException>sneaky(failure);
      });
      return;
    }
    Thread self = Thread.currentThread();
    Throwable t = Exceptions.unwrap(failure);
    self.getUncaughtExceptionHandler().uncaughtException(self, t);
    try {
      @SuppressWarnings("unchecked")
      BiConsumer<Thread, ? super Throwable> hook =
          (BiConsumer<Thread, ? super Throwable>) HOOK.get(null);
      if (hook != null) {
        hook.accept(self, t);
      }
    } catch (IllegalAccessException | RuntimeException hookFailed) {
      // a hook that throws must not end the worker: the failure is counted and reported already
    }
  }

  @SuppressWarnings("unchecked")
  static <E extends Throwable> E sneaky(Throwable t) throws E {
    throw (E) t;
  }
}
