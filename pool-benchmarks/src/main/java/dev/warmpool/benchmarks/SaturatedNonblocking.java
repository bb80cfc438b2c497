package dev.warmpool.benchmarks;

import dev.warmpool.FuncPool;
import dev.warmpool.WorkerPool;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Scenario 3: nonblocking mode under saturation. {@link Saturated#offer} submits small tasks from
 * one producer as fast as it can to {@value #WORKERS} workers and counts accepted and refused
 * submissions per second. {@link Rejection#reject} measures one refusal while every worker is held
 * busy for the whole trial (its time in ns, its allocation with {@code -prof gc}).
 */
@State(Scope.Benchmark)
public class SaturatedNonblocking {
  static final int WORKERS = 2;
  /** Work per accepted task, in Blackhole tokens (about a microsecond). */
  static final int TASK_TOKENS = 300;

  /** How a peer refuses: warmpool's two APIs, and the exception of every other peer. */
  interface Offer {
    boolean offer(Runnable task);
  }

  static Offer offerOf(String variant, ExecutorService executor) {
    switch (variant) {
      case "warmpool-tryExecute":
        WorkerPool pool = (WorkerPool) executor;
        return pool::tryExecute;
      case "warmpool-FuncPool.tryInvoke":
        FuncPool<Runnable> fp = FuncPool.of((WorkerPool) executor, Runnable::run);
        return fp::tryInvoke;
      default: // warmpool-execute and the peers: RejectedExecutionException (PoolOverloadedException for us)
        return task -> {
          try {
            executor.execute(task);
            return true;
          } catch (RejectedExecutionException refused) {
            return false;
          }
        };
    }
  }

  static String peerOf(String variant) {
    return variant.startsWith("warmpool") ? Peers.WARMPOOL : variant;
  }

  @AuxCounters(AuxCounters.Type.OPERATIONS)
  @State(Scope.Thread)
  public static class Counts {
    public long accepted;
    public long rejected;

    @Setup(Level.Iteration)
    public void clear() {
      accepted = 0;
      rejected = 0;
    }
  }

  @State(Scope.Benchmark)
  public static class Saturated {
    @Param({"warmpool-tryExecute"})
    public String variant;

    ExecutorService executor;
    Offer offer;
    final Runnable task = () -> Blackhole.consumeCPU(TASK_TOKENS);

    @Setup(Level.Trial)
    public void start() {
      executor = Peers.nonblocking(peerOf(variant), WORKERS, "sat");
      offer = offerOf(variant, executor);
    }

    @TearDown(Level.Trial)
    public void stop() {
      Peers.close(executor);
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @Threads(1)
  public boolean offer(Saturated s, Counts c) {
    boolean ok = s.offer.offer(s.task);
    if (ok) {
      c.accepted++;
    } else {
      c.rejected++;
    }
    return ok;
  }

  @State(Scope.Benchmark)
  public static class Rejection {
    @Param({"warmpool-tryExecute"})
    public String variant;

    ExecutorService executor;
    Offer offer;
    final CountDownLatch release = new CountDownLatch(1);
    final Runnable noop = () -> {};

    @Setup(Level.Trial)
    public void start() throws InterruptedException {
      executor = Peers.nonblocking(peerOf(variant), WORKERS, "rej");
      offer = offerOf(variant, executor);
      CountDownLatch running = new CountDownLatch(WORKERS);
      for (int i = 0; i < WORKERS; i++) {
        executor.execute(() -> {
          running.countDown();
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
      }
      running.await();
      if (offer.offer(noop)) {
        throw new IllegalStateException(variant + " accepted a task although all workers are busy");
      }
    }

    @TearDown(Level.Trial)
    public void stop() {
      release.countDown();
      Peers.close(executor);
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.AverageTime)
  @OutputTimeUnit(TimeUnit.NANOSECONDS)
  @Threads(1)
  public boolean reject(Rejection r) {
    return r.offer.offer(r.noop);
  }
}
