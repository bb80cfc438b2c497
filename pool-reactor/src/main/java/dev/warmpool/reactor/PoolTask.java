package dev.warmpool.reactor;

import dev.warmpool.CancellationAware;
import dev.warmpool.FailureAware;
import dev.warmpool.PoolClosedException;
import dev.warmpool.PoolOverloadedException;
import dev.warmpool.TaskHandle;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Supplier;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * One task of a scheduler or of one of its workers, immediate, delayed or periodic (the shape of
 * reactor-core's {@code WorkerTask}): it knows its container ({@link TaskOwner}), which
 * it leaves exactly once when it ends, and the handle core gave it (an {@code enqueue} handle or a
 * timer future), not the scheduler or worker that made it.
 *
 * <p><b>Disposal.</b> The task is a {@link FutureTask}: its {@code cancel(true)} is the interrupt
 * handshake (the interrupt reaches this run only, the run waits for it to land), and
 * {@code isDisposed()} is {@code isDone()}: false while it runs or waits for its next period, true
 * once it ran or was disposed. Disposing from another thread interrupts a running task; from the
 * task's own thread it does not. A disposed task also withdraws its core handle (it leaves the
 * line or the timer at once). The handle is bound after the hand-off, so {@link #submit} checks for
 * a dispose that came first (publish, then check).
 *
 * <p><b>End.</b> A task ends when its last run returns, or when it is cancelled while no run is in
 * progress ({@code thread} is null: publish, then check against {@code run}); whichever comes
 * second finds it ended already.
 *
 * <p><b>Periodic.</b> Core's periodic schedule (of the pool, or of a worker's lane) drives it:
 * fixed rate for a positive period, and for Reactor's "period {@code <= 0}" a fixed delay of one
 * nanosecond. Reactor's periodic tasks survive a failed run while core's schedule, as
 * {@code ScheduledExecutorService} requires, ends with it, so a failed run re-arms the task: it
 * hands itself to core again from its own run, which core recognises as a re-arm and does not
 * decorate again; every run keeps the context captured at the user's call (guarantee 15).
 *
 * <p><b>Failures</b> (guarantee 8): a run's exception propagates to the pool, which counts it and
 * hands it to {@link #onFailure} (Reactor's {@code onHandleError}), or to the pool's own failure
 * handler if one was set. <b>Expiry</b>: a task that waited in line past its deadline is refused
 * to the operator's subscriber as Reactor refuses a rejected task. <b>Closed pool</b>: a timer the
 * pool cancels before it is due (guarantee 7) is refused the same way, with a
 * {@link PoolClosedException} as cause, if the subscriber can be reached ({@link #onCancel}).
 */
final class PoolTask extends FutureTask<Void>
    implements Disposable, CancellationAware, FailureAware {

  /** Core's periodic schedule: {@code scheduleAtFixedRate} or {@code ..WithFixedDelay}. */
  interface Periodic {
    Future<?> schedule(Runnable task, long initialDelay, long period, TimeUnit unit);
  }

  private static final AtomicIntegerFieldUpdater<PoolTask> BITS =
      AtomicIntegerFieldUpdater.newUpdater(PoolTask.class, "bits");
  /** In {@link #bits}: set before a {@code cancel(true)}; the run clears the interrupt it meant. */
  private static final int INTERRUPT = 1;
  /** In {@link #bits}: the task ended and left its group (once). */
  private static final int ENDED = 2;

  /**
   * The user's runnable, as Reactor gave it and as decorated, and a periodic task's schedule: kept
   * in the callable FutureTask needs anyway (idle tasks may be many, issue 33).
   */
  private final Body body;
  private final TaskOwner parent;

  /** The thread in {@link #run}, else null. */
  private volatile Thread thread;
  /** Core's handle: a {@link TaskHandle} or a timer's {@link Future}; null until bound. */
  private volatile Object handle;
  /** {@link #INTERRUPT} and {@link #ENDED}. */
  private volatile int bits;

  /**
   * The user's runnable as {@code onSchedule} decorated it, and as Reactor's operator gave it
   * ({@code source}: told of an expiry or of a timer the pool cancelled); keeps a run's failure for
   * rethrow.
   */
  private static class Body implements Callable<Void> {
    final Runnable task;
    final Runnable source;
    Throwable failure;

    Body(Runnable task, Runnable source) {
      this.task = task;
      this.source = source;
    }

    @Override
    public Void call() {
      try {
        task.run();
      } catch (Throwable t) {
        failure = t; // not to FutureTask: a periodic task survives a failed run
      }
      return null;
    }
  }

  /** A periodic task's body: its schedule, and its period in nanoseconds ({@code <= 0}: at once). */
  private static final class PeriodicBody extends Body {
    final Periodic periodic;
    final long period;

    PeriodicBody(Runnable task, Runnable source, Periodic periodic, long period) {
      super(task, source);
      this.periodic = periodic;
      this.period = period;
    }
  }

  /** An immediate or a delayed task. */
  PoolTask(Runnable source, Runnable decorated, TaskOwner parent) {
    this(new Body(decorated, source), parent);
  }

  /**
   * A periodic task of Reactor's {@code source} (passed through {@code onSchedule} here); put it on
   * its schedule with {@code submit(() -> t.arm(initialDelay))}.
   */
  PoolTask(Runnable source, TaskOwner parent, long period, TimeUnit unit,
      Periodic atFixedRate, Periodic withFixedDelay) {
    this(new PeriodicBody(Schedulers.onSchedule(source), source,
        period > 0 ? atFixedRate : withFixedDelay, unit.toNanos(period)), parent);
  }

  private PoolTask(Body body, TaskOwner parent) {
    super(body);
    this.body = body;
    this.parent = parent;
  }

  boolean isPeriodic() {
    return body instanceof PeriodicBody;
  }

  /** A periodic task's schedule, its first run after {@code initialDelayNanos}. */
  Future<?> arm(long initialDelayNanos) {
    PeriodicBody p = (PeriodicBody) body;
    return p.periodic.schedule(this, initialDelayNanos, Math.max(1, p.period),
        TimeUnit.NANOSECONDS);
  }

  /**
   * Hands the task to core and binds the handle it returns (null for a lane's {@code execute});
   * withdraws it at once if the task was disposed meanwhile. A refused task ends and the refusal
   * propagates.
   */
  PoolTask submit(Supplier<?> handOff) {
    Object h;
    try {
      h = handOff.get();
    } catch (RuntimeException refused) {
      cancel(false);
      throw refused;
    }
    handle = h;
    if (isCancelled()) {
      withdraw(h);
    }
    return this;
  }

  @Override
  public void run() {
    if (parent.stopsTasks()) {
      cancel(false); // its scheduler or worker was disposed: a task that has not started never does
      return;
    }
    thread = Thread.currentThread();
    boolean again = false;
    try {
      if (!(body instanceof PeriodicBody)) {
        super.run();
      } else {
        again = runAndReset();
      }
    } finally {
      thread = null;
    }
    if ((bits & INTERRUPT) != 0 && isCancelled()) {
      Thread.interrupted(); // landed during the run (FutureTask waits for it): for this task only
    }
    Throwable failure = body.failure;
    body.failure = null;
    if (!again) {
      end();
    }
    if (failure != null) {
      if (again) {
        rearm();
      }
      throw HandleErrorHook.<RuntimeException>sneaky(failure); // to the pool: counted, reported
    }
  }

  /**
   * A failed periodic run ended core's schedule: a new one keeps the rate. Called from the run, so
   * core keeps the task's first decoration (guarantee 15).
   */
  private void rearm() {
    long period = ((PeriodicBody) body).period;
    long next = period > 0 && handle instanceof Delayed ending
        ? Math.max(0, ending.getDelay(TimeUnit.NANOSECONDS) + period) : 0;
    try {
      submit(() -> arm(next));
    } catch (RuntimeException closed) {
      // the pool or the lane closed: that was the last run (submit ended the task)
    }
  }

  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    if (mayInterruptIfRunning) {
      BITS.getAndAccumulate(this, INTERRUPT, (a, b) -> a | b);
    }
    if (!super.cancel(mayInterruptIfRunning)) {
      return false;
    }
    withdraw(handle);
    if (thread == null) {
      end(); // no run in progress: none will start
    }
    return true;
  }

  /**
   * Its scheduler closed: it never starts (again). A periodic task stops after a run in progress; a
   * one-shot run in progress finishes undisturbed, and reads disposed once it returned.
   */
  void stop() {
    if (body instanceof PeriodicBody || thread == null) {
      cancel(false);
    }
  }

  /** Reactor's rule: the task's own thread is not interrupted. */
  @Override
  public void dispose() {
    cancel(thread != Thread.currentThread());
  }

  @Override
  public boolean isDisposed() {
    return isDone();
  }

  /** Leaves the line or the timer; never core's interrupt (the task delivers its own). */
  private static void withdraw(Object h) {
    if (h instanceof TaskHandle t) {
      t.cancel();
    } else if (h instanceof Future<?> f) {
      f.cancel(false);
    }
  }

  private void end() {
    if ((BITS.getAndAccumulate(this, ENDED, (a, b) -> a | b) & ENDED) == 0) {
      parent.ended(this);
    }
  }

  /**
   * Core cancelled its timer: the pool closed before it was due (or handed it back), or the lane
   * closed. It will not run (again), so the operator's subscriber, if it can be reached, is refused
   * as Reactor refuses a task of a closed scheduler (DESIGN section 6); otherwise it just ends. A
   * cancel of our own (a dispose, a scheduler's or worker's sweep) withdraws the timer after the
   * task reads cancelled, so it comes here too and signals nothing.
   */
  @Override
  public void onCancel() {
    if (cancel(false)) {
      refuse(new PoolClosedException("the pool shut down before this timer was due"), false);
    }
  }

  /**
   * Its pool terminated and this task had not run: {@code shutdownNow} handed it back (a graceful
   * shutdown runs every accepted task first, and a timer the pool cancelled heard {@link #onCancel}).
   * Refused to the operator's subscriber as a task of a closed pool, so that it does not wait for
   * ever; a later run by whoever got it from {@code shutdownNow} does nothing. Only a task core
   * accepted ({@code handle} bound): one still being handed to core is refused by core itself.
   */
  void handedBack(String pool) {
    if (handle != null && thread == null && cancel(false)) {
      refuse(new PoolClosedException("pool '" + pool + "' was shut down (shutdownNow) before this"
          + " task ran"), false);
    }
  }

  /** It waited in a pool's line past its deadline: refused as a rejection, with core's cause. */
  @Override
  public void onExpired(PoolOverloadedException cause) {
    if (cancel(false)) {
      refuse(cause, true);
    }
  }

  /**
   * Signals {@code cause} to the operator's subscriber as Reactor signals a rejected task; if the
   * subscriber is out of reach, {@code dropped} says whether Reactor's dropped-error hook hears of it.
   */
  private void refuse(RuntimeException cause, boolean dropped) {
    Runnable source = body.source;
    Object actual = Scannable.from(source).scanUnsafe(Scannable.Attr.ACTUAL);
    if (actual instanceof CoreSubscriber<?> s) {
      Subscription operator = source instanceof Subscription o ? o : null;
      s.onError(Operators.onRejectedExecution(cause, operator, null, null, s.currentContext()));
    } else if (dropped) {
      Operators.onErrorDropped(Exceptions.failWithRejected(cause), Context.empty());
    }
  }

  /** The run threw and the pool has no failure handler of its own: Reactor's error path. */
  @Override
  public void onFailure(Throwable failure) {
    HandleErrorHook.call(failure);
  }

  @Override
  public String toString() {
    return "PoolTask[" + body.task + (isDone() ? ", disposed]" : "]");
  }
}
