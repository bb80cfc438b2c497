package dev.warmpool.micrometer;

import dev.warmpool.PoolStats;
import dev.warmpool.WorkerPool;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;

/**
 * Binds a {@link WorkerPool}'s figures to a Micrometer {@link MeterRegistry}:
 * <pre>{@code
 * new WorkerPoolMetrics(pool, Tags.of("app", "shop")).bindTo(registry);
 * }</pre>
 *
 * <h2>Meters</h2>
 * Where Micrometer's {@code ExecutorServiceMetrics} has a meter with the same meaning, the same name,
 * type and base unit are used, so dashboards built for a {@code ThreadPoolExecutor} work unchanged:
 * <table>
 *   <caption>Micrometer's executor meters</caption>
 *   <tr><th>name</th><th>type</th><th>unit</th><th>value</th></tr>
 *   <tr><td>{@code executor.completed}</td><td>function counter</td><td>tasks</td>
 *       <td>tasks that finished running, normally or by throwing ({@code completed + failed}),
 *       as a {@code ThreadPoolExecutor} counts them</td></tr>
 *   <tr><td>{@code executor.active}</td><td>gauge</td><td>threads</td><td>tasks running ({@code busy})</td></tr>
 *   <tr><td>{@code executor.queued}</td><td>gauge</td><td>tasks</td>
 *       <td>entries in the waiting line ({@code waiting})</td></tr>
 *   <tr><td>{@code executor.pool.size}</td><td>gauge</td><td>threads</td><td>live workers ({@code workers})</td></tr>
 *   <tr><td>{@code executor.pool.max}</td><td>gauge</td><td>threads</td><td>{@code capacity}</td></tr>
 *   <tr><td>{@code executor}</td><td>timer</td><td>seconds</td>
 *       <td>how long each task ran, a failing one included (as Micrometer's
 *       {@code TimedExecutorService} names it)</td></tr>
 *   <tr><td>{@code executor.idle}</td><td>timer</td><td>seconds</td>
 *       <td>how long each task waited from acceptance to its start: run queue plus waiting line
 *       (for a delayed or periodic run, from when it was due)</td></tr>
 * </table>
 * The two timers hear every task of every door (plain tasks, serial lanes, delayed and periodic
 * runs, and so every adapter's tasks) through {@link WorkerPool#setTaskTimer}; a subpool's tasks
 * are timed for its parent as well. They cost two {@code System.nanoTime()} calls, a small wrapper
 * per task and two timer updates (see the module README for the measured cost); turn them off with
 * {@link #WorkerPoolMetrics(WorkerPool, Iterable, boolean)}.
 * warmpool's own figures, each as {@link PoolStats} defines it:
 * <table>
 *   <caption>warmpool meters</caption>
 *   <tr><th>name</th><th>type</th><th>unit</th><th>value</th></tr>
 *   <tr><td>{@code warmpool.submitted}</td><td>function counter</td><td>tasks</td><td>{@code submitted}</td></tr>
 *   <tr><td>{@code warmpool.failed}</td><td>function counter</td><td>tasks</td><td>{@code failed}</td></tr>
 *   <tr><td>{@code warmpool.rejected}</td><td>function counter</td><td>tasks</td><td>{@code rejected}</td></tr>
 *   <tr><td>{@code warmpool.expired}</td><td>function counter</td><td>tasks</td>
 *       <td>{@code expired}: entries that left the waiting line unrun past their line deadline
 *       ({@code maxWaitInLine}, {@code enqueue(task, maxWait)})</td></tr>
 *   <tr><td>{@code warmpool.waiting}</td><td>gauge</td><td>tasks</td>
 *       <td>{@code waiting} (the same figure as {@code executor.queued}, under warmpool's word)</td></tr>
 *   <tr><td>{@code warmpool.idle}</td><td>gauge</td><td>threads</td><td>{@code idle}</td></tr>
 *   <tr><td>{@code warmpool.workers.started}</td><td>function counter</td><td>threads</td><td>{@code workersStarted}</td></tr>
 *   <tr><td>{@code warmpool.workers.expired}</td><td>function counter</td><td>threads</td><td>{@code workersExpired}</td></tr>
 *   <tr><td>{@code warmpool.workers.stopped}</td><td>function counter</td><td>threads</td><td>{@code workersStopped}</td></tr>
 * </table>
 * Every meter carries the tag {@code name} = {@link WorkerPool#name()} (the tag Micrometer's executor
 * meters use) plus the given tags.
 *
 * <h2>Cost and consistency</h2>
 * Meters read {@link WorkerPool#stats()}, a snapshot that never blocks the pool. All meters of one
 * binding share a snapshot for up to 100 ms, so one scrape takes one snapshot and its figures belong
 * together.
 *
 * <h2>Lifetime</h2>
 * The meters hold the pool weakly, as Micrometer's binders do: a pool that is no longer referenced
 * elsewhere can be collected, and its gauges then read {@code NaN}. A closed pool keeps reporting:
 * its counters keep their final values and its gauges fall to zero as its workers end; reading never
 * throws.
 */
public final class WorkerPoolMetrics implements MeterBinder {
  private final WorkerPool pool;
  private final Tags tags;
  private final LongSupplier nanoClock;
  private final boolean taskTimers;

  /**
   * Meters for {@code pool}, tagged with its name and {@code tags}, task timers included.
   *
   * @throws NullPointerException if {@code pool} or {@code tags} is null
   */
  public WorkerPoolMetrics(WorkerPool pool, Iterable<Tag> tags) {
    this(pool, tags, true);
  }

  /**
   * Meters for {@code pool}, tagged with its name and {@code tags}; {@code taskTimers} false leaves
   * out the {@code executor} and {@code executor.idle} timers (and their cost per task).
   *
   * @throws NullPointerException if {@code pool} or {@code tags} is null
   */
  public WorkerPoolMetrics(WorkerPool pool, Iterable<Tag> tags, boolean taskTimers) {
    this(pool, tags, System::nanoTime, taskTimers);
  }

  /** For tests: the clock that decides when the shared snapshot is renewed. */
  WorkerPoolMetrics(WorkerPool pool, Iterable<Tag> tags, LongSupplier nanoClock) {
    this(pool, tags, nanoClock, true);
  }

  private WorkerPoolMetrics(WorkerPool pool, Iterable<Tag> tags, LongSupplier nanoClock,
      boolean taskTimers) {
    this.pool = Objects.requireNonNull(pool, "pool must not be null");
    this.tags = Tags.concat(Objects.requireNonNull(tags, "tags must not be null"), "name", pool.name());
    this.nanoClock = nanoClock;
    this.taskTimers = taskTimers;
  }

  /**
   * Registers the meters listed above. Binding the same pool twice to one registry is harmless
   * (Micrometer returns the meters already registered, and a task is timed once per registry). The
   * task timers are installed with {@link WorkerPool#setTaskTimer}, after any timer the pool already
   * has (which keeps hearing).
   */
  @Override
  public void bindTo(MeterRegistry registry) {
    Objects.requireNonNull(registry, "registry must not be null");
    StatsSampler sampler = new StatsSampler(nanoClock);

    counter(registry, sampler, "executor.completed", "tasks",
        "Tasks that finished running, normally or by throwing", s -> s.completed() + s.failed());
    gauge(registry, sampler, "executor.active", "threads", "Tasks running now", PoolStats::busy);
    gauge(registry, sampler, "executor.queued", "tasks",
        "Entries in the waiting line: blocked callers and tasks waiting for a seat", PoolStats::waiting);
    gauge(registry, sampler, "executor.pool.size", "threads", "Live worker threads", PoolStats::workers);
    gauge(registry, sampler, "executor.pool.max", "threads", "The pool's capacity", PoolStats::capacity);

    counter(registry, sampler, "warmpool.submitted", "tasks", "Tasks accepted", PoolStats::submitted);
    counter(registry, sampler, "warmpool.failed", "tasks", "Tasks that threw", PoolStats::failed);
    counter(registry, sampler, "warmpool.rejected", "tasks",
        "Calls refused because the pool was full or closed", PoolStats::rejected);
    counter(registry, sampler, "warmpool.expired", "tasks",
        "Entries that left the waiting line unrun because they waited past their line deadline",
        PoolStats::expired);
    gauge(registry, sampler, "warmpool.waiting", "tasks", "Entries in the waiting line", PoolStats::waiting);
    gauge(registry, sampler, "warmpool.idle", "threads", "Workers parked idle", PoolStats::idle);
    counter(registry, sampler, "warmpool.workers.started", "threads", "Worker threads started",
        PoolStats::workersStarted);
    counter(registry, sampler, "warmpool.workers.expired", "threads",
        "Workers retired after staying idle longer than maxIdle", PoolStats::workersExpired);
    counter(registry, sampler, "warmpool.workers.stopped", "threads",
        "Workers stopped by shutdown, a shrinking resize or a failing failure handler",
        PoolStats::workersStopped);

    if (taskTimers) {
      Timer ran = Timer.builder("executor").tags(tags)
          .description("How long each task ran").register(registry);
      Timer waited = Timer.builder("executor.idle").tags(tags)
          .description("How long each task waited from acceptance to its start: run queue and line")
          .register(registry);
      WorkerPool.TaskTimer present = pool.taskTimer();
      if (!MeterTimers.records(present, ran)) {
        pool.setTaskTimer(new MeterTimers(ran, waited, present));
      }
    }
  }

  /** Records a pool's task timings in one registry's two timers, then tells the timer before it. */
  private static final class MeterTimers implements WorkerPool.TaskTimer {
    private final Timer ran;
    private final Timer waited;
    private final WorkerPool.@Nullable TaskTimer next;

    MeterTimers(Timer ran, Timer waited, WorkerPool.@Nullable TaskTimer next) {
      this.ran = ran;
      this.waited = waited;
      this.next = next;
    }

    @Override
    public void taskRan(long waitNanos, long runNanos) {
      waited.record(waitNanos, TimeUnit.NANOSECONDS);
      ran.record(runNanos, TimeUnit.NANOSECONDS);
      if (next != null) {
        next.taskRan(waitNanos, runNanos);
      }
    }

    /** Whether {@code timer}'s chain already records into {@code ran} (a second binding). */
    static boolean records(WorkerPool.@Nullable TaskTimer timer, Timer ran) {
      while (timer instanceof MeterTimers m) {
        if (m.ran == ran) {
          return true;
        }
        timer = m.next;
      }
      return false;
    }
  }

  private void gauge(MeterRegistry registry, StatsSampler sampler, String name, String unit,
      String description, ToDoubleFunction<PoolStats> figure) {
    Gauge.builder(name, pool, p -> figure.applyAsDouble(sampler.read(p)))
        .tags(tags).description(description).baseUnit(unit).register(registry);
  }

  private void counter(MeterRegistry registry, StatsSampler sampler, String name, String unit,
      String description, ToDoubleFunction<PoolStats> figure) {
    FunctionCounter.builder(name, pool, p -> figure.applyAsDouble(sampler.read(p)))
        .tags(tags).description(description).baseUnit(unit).register(registry);
  }

  @Override
  public String toString() {
    return "WorkerPoolMetrics(" + pool.name() + ")";
  }
}
