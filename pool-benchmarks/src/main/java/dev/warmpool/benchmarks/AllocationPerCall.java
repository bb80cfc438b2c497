package dev.warmpool.benchmarks;

import dev.warmpool.FuncPool;
import dev.warmpool.WorkerPool;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
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

/**
 * Scenario 6: bytes allocated per submission (run with {@code -prof gc}; the report reads
 * {@code gc.alloc.rate.norm}). Closed loop with one task outstanding, so an idle worker is always
 * there and each call takes the hot path; the figure includes what the worker allocates.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
@Threads(1)
public class AllocationPerCall {
  static final int WORKERS = 2;

  @Param({"warmpool-execute"})
  public String variant;

  private final OneShot task = new OneShot(null);
  private ExecutorService executor;
  private Consumer<OneShot> call;

  @Setup(Level.Trial)
  public void start() {
    String peer = variant.startsWith("warmpool") ? Peers.WARMPOOL : variant;
    executor = Peers.blocking(peer, WORKERS, "alloc");
    switch (variant) {
      case "warmpool-tryExecute": {
        WorkerPool pool = (WorkerPool) executor;
        call = t -> {
          while (!pool.tryExecute(t)) {
            // the last worker may not be back on the idle stack yet (it set done before that)
            Thread.onSpinWait();
          }
        };
        break;
      }
      case "warmpool-enqueue": {
        WorkerPool pool = (WorkerPool) executor;
        call = pool::enqueue;
        break;
      }
      case "warmpool-FuncPool.invoke": {
        FuncPool<OneShot> fp = FuncPool.of((WorkerPool) executor, OneShot::run);
        call = fp::invoke;
        break;
      }
      default: // warmpool-execute and the peers
        ExecutorService e = executor;
        call = e::execute;
    }
  }

  @TearDown(Level.Trial)
  public void stop() {
    Peers.close(executor);
  }

  @Benchmark
  public void submitAndRun() {
    task.arm();
    call.accept(task);
    task.await();
  }
}
