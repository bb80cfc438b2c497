package dev.warmpool.benchmarks;

import dev.warmpool.WorkerPool;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

/**
 * Scenario 2: tiny-task throughput in blocking mode. Each producer submits a batch of
 * {@value #BATCH} empty tasks and waits until they have all run, so the figure is tasks completed per
 * second (not tasks queued), and a peer with an unbounded queue holds at most one batch per producer.
 * Besides {@code execute}, warmpool also runs as {@code warmpool-enqueue}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Benchmark)
public class TinyTaskThroughput {
  static final int BATCH = 1000;

  @Param({Peers.WARMPOOL})
  public String peer;

  @Param({"2", "64"})
  public int workers;

  /** {@code warmpool-enqueue}: warmpool's {@code enqueue}, which never blocks the producer. */
  static final String WARMPOOL_ENQUEUE = "warmpool-enqueue";

  private ExecutorService executor;
  private Executor submit;

  @Setup(Level.Trial)
  public void start() {
    if (peer.equals(WARMPOOL_ENQUEUE)) {
      WorkerPool pool = (WorkerPool) Peers.blocking(Peers.WARMPOOL, workers, "tiny");
      executor = pool;
      submit = pool::enqueue;
    } else {
      executor = Peers.blocking(peer, workers, "tiny");
      submit = executor;
    }
  }

  @TearDown(Level.Trial)
  public void stop() {
    Peers.close(executor);
  }

  /** Per producer thread. */
  @State(Scope.Thread)
  public static class Producer {
    final Batch batch = new Batch();
  }

  @Benchmark
  @Threads(1)
  @OperationsPerInvocation(BATCH)
  public void oneProducer(Producer p) {
    p.batch.submitAndAwait(submit, BATCH);
  }

  @Benchmark
  @Threads(2)
  @OperationsPerInvocation(BATCH)
  public void twoProducers(Producer p) {
    p.batch.submitAndAwait(submit, BATCH);
  }
}
