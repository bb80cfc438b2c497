package dev.warmpool.benchmarks;

import dev.warmpool.WorkerPool;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A task that queues a subtask on its own pool and waits for it outside the library
 * ({@code CompletableFuture.join}; Reactor {@code block()}, RxJava {@code blockingGet()} and Kotlin
 * {@code runBlocking} wait the same way): the round trip, in microseconds, for warmpool and for a
 * fixed pool of the same size. Such a subtask is held by its worker (Engine, "Held tasks") and only
 * the hold watch publishes it, so warmpool's round trip is at least the watch period.
 *
 * <p>Usage: {@code NestedWaitLatency [samples=2000] [rounds=3]}. Written by review 5; not part of
 * the benchmark report.
 */
public final class NestedWaitLatency {
  private NestedWaitLatency() {}

  public static void main(String[] args) throws Exception {
    int samples = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    WorkerPool pool = WorkerPool.builder().name("nested").capacity(8).build();
    ExecutorService fixed = Executors.newFixedThreadPool(8);
    try {
      for (int r = 0; r < rounds; r++) {
        report("warmpool", r, measure(pool, samples));
        report("fixed(8)", r, measure(fixed, samples));
      }
    } finally {
      pool.close();
      fixed.shutdown();
    }
  }

  private static long[] measure(ExecutorService executor, int samples) throws Exception {
    long[] nanos = new long[samples];
    Future<?> outer = executor.submit(() -> {
      for (int i = 0; i < samples; i++) {
        long t0 = System.nanoTime();
        CompletableFuture.supplyAsync(() -> 1, executor).join();
        nanos[i] = System.nanoTime() - t0;
      }
      return null;
    });
    outer.get();
    Arrays.sort(nanos);
    return nanos;
  }

  private static void report(String peer, int round, long[] sorted) {
    System.out.printf("%-9s round %d: p50 %8.1f us  p99 %8.1f us%n", peer, round,
        sorted[sorted.length / 2] / 1e3, sorted[sorted.length * 99 / 100] / 1e3);
  }
}
