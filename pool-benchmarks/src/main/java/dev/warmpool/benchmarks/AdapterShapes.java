package dev.warmpool.benchmarks;

import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.subjects.PublishSubject;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.IntToDoubleFunction;
import org.HdrHistogram.Histogram;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Scenario 7, Reactor and RxJava shapes on one scheduler per fresh JVM:
 * <ul>
 *   <li><b>subscribeOn</b>: {@code items} calls of {@code Mono.fromCallable(..).subscribeOn(s)}
 *       ({@code Single} for RxJava) merged with {@code flatMap(.., 64)}; items per second.</li>
 *   <li><b>sparse publishOn</b> ({@code observeOn} for RxJava): a producer emits one item every 50 us;
 *       end-to-end latency from emission to {@code onNext} on the scheduler, p50 and p99.</li>
 * </ul>
 * Every pool has 10 x nproc threads, the size of Reactor's default {@code boundedElastic()}.
 * Usage: {@code AdapterShapes <reactor|rxjava> <scheduler> [items=200000] [sparse=10000] [reps=3]}
 * with scheduler {@code warmpool}, {@code bounded-elastic} or {@code from-fixed} (Reactor), and
 * {@code warmpool}, {@code rx-io} or {@code rx-from-fixed} (RxJava).
 */
public final class AdapterShapes {
  static final int CONCURRENCY = 64;
  static final long SPARSE_GAP_NANOS = TimeUnit.MICROSECONDS.toNanos(50);
  static final int THREADS = 10 * Runtime.getRuntime().availableProcessors();

  private AdapterShapes() {}

  public static void main(String[] args) throws InterruptedException {
    String library = args[0];
    String peer = args[1];
    Map<String, String> o = Harness.options(args, 2);
    int items = Harness.intOption(o, "items", 200_000);
    int sparse = Harness.intOption(o, "sparse", 10_000);
    int reps = Harness.intOption(o, "reps", 3);
    WorkerPool pool = WorkerPool.builder().name("adapter").capacity(THREADS).build();
    ExecutorService fixed = Executors.newFixedThreadPool(THREADS, Peers.named("fixed"));
    String table = library.equals("reactor") ? "reactor" : "rxjava";
    try {
      if (library.equals("reactor")) {
        Scheduler s = reactorScheduler(peer, pool, fixed);
        measure(table, peer, "subscribeOn items/s", reps, n -> reactorSubscribeOn(s, items));
        sparse(table, peer, "publishOn", reps, sparse, (h, n) -> reactorPublishOn(s, h, n));
      } else {
        io.reactivex.rxjava3.core.Scheduler s = rxScheduler(peer, pool, fixed);
        measure(table, peer, "subscribeOn items/s", reps, n -> rxSubscribeOn(s, items));
        sparse(table, peer, "observeOn", reps, sparse, (h, n) -> rxObserveOn(s, h, n));
      }
    } finally {
      pool.shutdownNow();
      fixed.shutdownNow();
    }
  }

  static Scheduler reactorScheduler(String peer, WorkerPool pool, ExecutorService fixed) {
    switch (peer) {
      case Peers.WARMPOOL: return dev.warmpool.reactor.PoolSchedulers.from(pool);
      case IdleExpiry.BOUNDED_ELASTIC: return Schedulers.boundedElastic();
      case "from-fixed": return Schedulers.fromExecutorService(fixed);
      default: throw new IllegalArgumentException("unknown Reactor scheduler " + peer);
    }
  }

  static io.reactivex.rxjava3.core.Scheduler rxScheduler(String peer, WorkerPool pool,
      ExecutorService fixed) {
    switch (peer) {
      case Peers.WARMPOOL: return dev.warmpool.rxjava3.PoolSchedulers.from(pool);
      case "rx-io": return io.reactivex.rxjava3.schedulers.Schedulers.io();
      case "rx-from-fixed": return io.reactivex.rxjava3.schedulers.Schedulers.from(fixed);
      default: throw new IllegalArgumentException("unknown RxJava scheduler " + peer);
    }
  }

  /** One warm-up and {@code reps} measured runs of a throughput shape; prints the median. */
  static void measure(String table, String peer, String column, int reps, IntToDoubleFunction run) {
    run.applyAsDouble(0);
    double[] v = new double[reps];
    for (int r = 0; r < reps; r++) {
      v[r] = run.applyAsDouble(r);
    }
    Harness.result(table, column, peer, Harness.median(v));
  }

  interface SparseRun {
    void run(Histogram h, int n) throws InterruptedException;
  }

  /** One warm-up and {@code reps} measured runs of a latency shape; prints median p50 and p99. */
  static void sparse(String table, String peer, String shape, int reps, int n, SparseRun run)
      throws InterruptedException {
    Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
    run.run(h, Math.max(1000, n / 4));
    double[] p50 = new double[reps];
    double[] p99 = new double[reps];
    for (int r = 0; r < reps; r++) {
      h.reset();
      run.run(h, n);
      p50[r] = h.getValueAtPercentile(50) / 1000.0;
      p99[r] = h.getValueAtPercentile(99) / 1000.0;
    }
    Harness.result(table, shape + " p50 us", peer, Harness.median(p50));
    Harness.result(table, shape + " p99 us", peer, Harness.median(p99));
  }

  static double reactorSubscribeOn(Scheduler s, int items) {
    long t0 = System.nanoTime();
    Flux.range(0, items)
        .flatMap(i -> Mono.fromCallable(() -> i).subscribeOn(s), CONCURRENCY)
        .blockLast();
    return items / ((System.nanoTime() - t0) / 1e9);
  }

  static void reactorPublishOn(Scheduler s, Histogram h, int n) throws InterruptedException {
    Sinks.Many<Long> sink = Sinks.many().unicast().onBackpressureBuffer();
    CountDownLatch done = new CountDownLatch(1);
    sink.asFlux().publishOn(s).subscribe(
        t -> h.recordValue(System.nanoTime() - t), e -> done.countDown(), done::countDown);
    for (int i = 0; i < n; i++) {
      Harness.spinNanos(SPARSE_GAP_NANOS);
      sink.emitNext(System.nanoTime(), Sinks.EmitFailureHandler.FAIL_FAST);
    }
    sink.emitComplete(Sinks.EmitFailureHandler.FAIL_FAST);
    done.await();
  }

  static double rxSubscribeOn(io.reactivex.rxjava3.core.Scheduler s, int items) {
    long t0 = System.nanoTime();
    Flowable.range(0, items)
        .flatMapSingle(i -> Single.fromCallable(() -> i).subscribeOn(s), false, CONCURRENCY)
        .blockingLast();
    return items / ((System.nanoTime() - t0) / 1e9);
  }

  static void rxObserveOn(io.reactivex.rxjava3.core.Scheduler s, Histogram h, int n)
      throws InterruptedException {
    PublishSubject<Long> subject = PublishSubject.create();
    CountDownLatch done = new CountDownLatch(1);
    subject.observeOn(s).subscribe(
        t -> h.recordValue(System.nanoTime() - t), e -> done.countDown(), done::countDown);
    for (int i = 0; i < n; i++) {
      Harness.spinNanos(SPARSE_GAP_NANOS);
      subject.onNext(System.nanoTime());
    }
    subject.onComplete();
    done.await();
  }
}
