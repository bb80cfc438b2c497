package dev.warmpool.spring;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code warmpool.*} properties:
 * <pre>{@code
 * warmpool:
 *   pools:
 *     io:   { capacity: 64, max-idle: 10s, primary: true }
 *     db:   { capacity: 20, max-waiting: 200, max-wait-in-line: 50ms }
 *     http: { capacity: 32, nonblocking: true }
 *     pay:  { parent: io, capacity: 8 }  # a subpool of io: a bulkhead on io's workers
 *   spring.task-executor: io           # @Async and the applicationTaskExecutor on the pool "io"
 *   reactor.bounded-elastic: true      # Schedulers.boundedElastic() on warmpool
 *   rxjava.io: io                      # RxJava's Schedulers.io() on the pool "io"
 *   metrics.task-timers: true          # the executor and executor.idle timers (with Micrometer)
 *   shutdown.await-termination: 30s
 * }</pre>
 * Every entry of {@code pools} becomes one {@link dev.warmpool.WorkerPool} bean named after its
 * key; a setting left out keeps {@link dev.warmpool.WorkerPool#builder()}'s default. Binding is
 * strict: a value the builder refuses, an unknown key inside an entry, a setting that cannot apply
 * (a line setting on a nonblocking pool, a thread setting on a subpool) and a {@code parent} or
 * adopted name that is no pool fail the start-up with a message naming the key and value.
 */
@ConfigurationProperties("warmpool")
public class WarmpoolProperties {
  /** The pools: one WorkerPool bean per entry, named after the entry's key (also the pool's name). */
  private final Map<String, Pool> pools = new LinkedHashMap<>();

  private final Reactor reactor = new Reactor();

  private final Rxjava rxjava = new Rxjava();

  private final Shutdown shutdown = new Shutdown();

  private final Spring spring = new Spring();

  private final Metrics metrics = new Metrics();

  /** The pools by name (bean name and pool name). */
  public Map<String, Pool> getPools() {
    return pools;
  }

  /** Reactor settings. */
  public Reactor getReactor() {
    return reactor;
  }

  /** RxJava settings. */
  public Rxjava getRxjava() {
    return rxjava;
  }

  /** How the pools close with the application context. */
  public Shutdown getShutdown() {
    return shutdown;
  }

  /** Spring's own executors, adopted onto a pool on request. */
  public Spring getSpring() {
    return spring;
  }

  /** The pools' meters (with warmpool-micrometer and a MeterRegistry bean). */
  public Metrics getMetrics() {
    return metrics;
  }

  /** One pool: {@code warmpool.pools.<name>.*}. */
  public static class Pool {
    /**
     * Most tasks running at once and most worker threads, from 1 to 131072. Default: 10 x the
     * available processors.
     */
    private @Nullable Integer capacity;

    /** How long an idle worker is kept before it is retired (> 0). Default: 60s. */
    private @Nullable Duration maxIdle;

    /**
     * Whether a task is rejected at once when every seat is taken, instead of waiting in line.
     * Default: false; for a subpool, its parent's mode.
     */
    private @Nullable Boolean nonblocking;

    /** Blocking mode: the most entries the waiting line holds before rejecting (>= 0). Default: 100000. */
    private @Nullable Integer maxWaiting;

    /**
     * Blocking mode: the longest an entry may wait in line for a seat before it is refused (> 0).
     * Default: no limit.
     */
    private @Nullable Duration maxWaitInLine;

    /**
     * Blocking mode: controlled delay (WorkerPool.Builder.controlledDelay): while the line has not
     * once been empty during the interval it stands, and an entry that waited longer than the target
     * is refused; set both, 0 < target < interval. Default: off.
     */
    private final ControlledDelay controlledDelay = new ControlledDelay();

    /**
     * Blocking mode: while the line stands, a freed seat goes to the newest entry
     * (WorkerPool.Builder.adaptiveLifo). Default: false.
     */
    private @Nullable Boolean adaptiveLifo;

    /** Whether the workers are virtual threads (needs Java 21 or newer). */
    private boolean virtualThreads = false;

    /** Whether this pool is the primary WorkerPool bean; at most one pool may be. */
    private boolean primary = false;

    /**
     * Name of another entry of warmpool.pools: this entry is then a subpool of that pool
     * (WorkerPool.newSubpool), a bulkhead that runs on the parent's workers under its own capacity
     * (required), mode and max-waiting (default: the parent's). max-idle, virtual-threads,
     * max-wait-in-line, controlled-delay and adaptive-lifo do not apply to a subpool (it takes its
     * parent's line settings).
     */
    private @Nullable String parent;

    public @Nullable Integer getCapacity() {
      return capacity;
    }

    public void setCapacity(@Nullable Integer capacity) {
      this.capacity = capacity;
    }

    public @Nullable Duration getMaxIdle() {
      return maxIdle;
    }

    public void setMaxIdle(@Nullable Duration maxIdle) {
      this.maxIdle = maxIdle;
    }

    public @Nullable Boolean getNonblocking() {
      return nonblocking;
    }

    public void setNonblocking(@Nullable Boolean nonblocking) {
      this.nonblocking = nonblocking;
    }

    public @Nullable Integer getMaxWaiting() {
      return maxWaiting;
    }

    public void setMaxWaiting(@Nullable Integer maxWaiting) {
      this.maxWaiting = maxWaiting;
    }

    public @Nullable Duration getMaxWaitInLine() {
      return maxWaitInLine;
    }

    public void setMaxWaitInLine(@Nullable Duration maxWaitInLine) {
      this.maxWaitInLine = maxWaitInLine;
    }

    public ControlledDelay getControlledDelay() {
      return controlledDelay;
    }

    public @Nullable Boolean getAdaptiveLifo() {
      return adaptiveLifo;
    }

    public void setAdaptiveLifo(@Nullable Boolean adaptiveLifo) {
      this.adaptiveLifo = adaptiveLifo;
    }

    public boolean isVirtualThreads() {
      return virtualThreads;
    }

    public void setVirtualThreads(boolean virtualThreads) {
      this.virtualThreads = virtualThreads;
    }

    public boolean isPrimary() {
      return primary;
    }

    public void setPrimary(boolean primary) {
      this.primary = primary;
    }

    public @Nullable String getParent() {
      return parent;
    }

    public void setParent(@Nullable String parent) {
      this.parent = parent;
    }
  }

  /** {@code warmpool.pools.<name>.controlled-delay.*}. */
  public static class ControlledDelay {
    /** How long an entry may wait once the line stands (> 0, < interval). */
    private @Nullable Duration target;

    /** How long the line must stay non-empty to stand; the longest wait while it does not. */
    private @Nullable Duration interval;

    public @Nullable Duration getTarget() {
      return target;
    }

    public void setTarget(@Nullable Duration target) {
      this.target = target;
    }

    public @Nullable Duration getInterval() {
      return interval;
    }

    public void setInterval(@Nullable Duration interval) {
      this.interval = interval;
    }
  }

  /** {@code warmpool.reactor.*}. */
  public static class Reactor {
    /**
     * Whether Reactor's bounded-elastic schedulers (Schedulers.boundedElastic() and
     * newBoundedElastic(..)) are backed by warmpool, installed with PoolSchedulers.factory(..) before
     * other beans are created and reset when the context closes. Needs warmpool-reactor.
     */
    private boolean boundedElastic = false;

    public boolean isBoundedElastic() {
      return boundedElastic;
    }

    public void setBoundedElastic(boolean boundedElastic) {
      this.boundedElastic = boundedElastic;
    }
  }

  /** {@code warmpool.rxjava.*}. */
  public static class Rxjava {
    /**
     * Name of the WorkerPool bean that backs RxJava's Schedulers.io(), installed before other beans
     * are created and removed when the context closes. Needs warmpool-rxjava.
     */
    private @Nullable String io;

    public @Nullable String getIo() {
      return io;
    }

    public void setIo(@Nullable String io) {
      this.io = io;
    }
  }

  /** {@code warmpool.spring.*}: left unset, Boot's own executors stay as Boot makes them. */
  public static class Spring {
    /**
     * Name of the pool on which the applicationTaskExecutor bean runs (an AsyncTaskExecutor: @Async,
     * MVC async requests and everything else that uses it; rejections are TaskRejectedException
     * caused by PoolOverloadedException). Unset: Boot's own, configured by spring.task.execution.*.
     */
    private @Nullable String taskExecutor;

    /**
     * Name of the pool on which the taskScheduler bean runs (a TaskScheduler: @Scheduled runs there,
     * on the pool's timers). Unset: Boot's own, configured by spring.task.scheduling.*.
     */
    private @Nullable String taskScheduler;

    public @Nullable String getTaskExecutor() {
      return taskExecutor;
    }

    public void setTaskExecutor(@Nullable String taskExecutor) {
      this.taskExecutor = taskExecutor;
    }

    public @Nullable String getTaskScheduler() {
      return taskScheduler;
    }

    public void setTaskScheduler(@Nullable String taskScheduler) {
      this.taskScheduler = taskScheduler;
    }
  }

  /** {@code warmpool.metrics.*}. */
  public static class Metrics {
    /**
     * Whether every pool also records the executor (run time) and executor.idle (acceptance to
     * start) timers of each task, tag name; false leaves both out, and their cost per task.
     */
    private boolean taskTimers = true;

    public boolean isTaskTimers() {
      return taskTimers;
    }

    public void setTaskTimers(boolean taskTimers) {
      this.taskTimers = taskTimers;
    }
  }

  /** {@code warmpool.shutdown.*}. */
  public static class Shutdown {
    /**
     * How long each pool may take to finish its running and waiting tasks after shutdown() when the
     * context closes; then shutdownNow() interrupts what is left (>= 0).
     */
    private Duration awaitTermination = Duration.ofSeconds(30);

    public Duration getAwaitTermination() {
      return awaitTermination;
    }

    public void setAwaitTermination(Duration awaitTermination) {
      this.awaitTermination = awaitTermination;
    }
  }
}
