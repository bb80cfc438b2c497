package dev.warmpool.benchmarks;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Scenario 5, expiry across bursts: {@code bursts} bursts of {@code tasks} tasks (each sleeping
 * {@code taskMs}) on at most 64 workers, separated by idle gaps longer than twice {@code maxIdle}.
 * A sampler counts the pool's worker threads every 10 ms. Figures per peer: idle life (last task of a
 * burst done -> no worker left), threads started per burst, first-task latency after an idle gap,
 * and wake-ups of the pool's housekeeping thread (warmpool's shared timer, Reactor's evictor) per gap.
 * The first burst is cold for every peer, so per-burst figures are medians over the later bursts.
 *
 * <p>Usage: {@code IdleExpiry <peer> [bursts=3] [tasks=256] [taskMs=20] [maxIdleS=1] [gapMs=3000]}
 * with peer {@code warmpool}, {@code tpe-cached} or {@code bounded-elastic}.
 */
public final class IdleExpiry {
  static final String TABLE = "expiry";
  static final String BOUNDED_ELASTIC = "bounded-elastic";
  static final String WORKER_PREFIX = "exp-";
  static final int CAPACITY = 64;
  static final long SAMPLE_MS = 10;

  private IdleExpiry() {}

  public static void main(String[] args) throws InterruptedException {
    String peer = args[0];
    Map<String, String> o = Harness.options(args, 1);
    int bursts = Harness.intOption(o, "bursts", 3);
    int tasks = Harness.intOption(o, "tasks", 256);
    int taskMs = Harness.intOption(o, "taskMs", 20);
    int maxIdleS = Harness.intOption(o, "maxIdleS", 1);
    int gapMs = Harness.intOption(o, "gapMs", 3000);

    Executor executor;
    Runnable close;
    String housekeeping; // OS thread-name prefix of the peer's housekeeping thread, if any
    switch (peer) {
      case Peers.WARMPOOL: {
        WorkerPool pool = WorkerPool.builder().name("exp").capacity(CAPACITY)
            .maxIdle(Duration.ofSeconds(maxIdleS)).build();
        executor = pool;
        close = pool::shutdownNow;
        housekeeping = "warmpool-timer";
        break;
      }
      case Peers.TPE_CACHED: {
        ThreadPoolExecutor tpe = new ThreadPoolExecutor(0, Integer.MAX_VALUE, maxIdleS,
            TimeUnit.SECONDS, new SynchronousQueue<>(), Peers.named("exp"));
        executor = tpe;
        close = tpe::shutdownNow;
        housekeeping = null;
        break;
      }
      case BOUNDED_ELASTIC: {
        Scheduler s = Schedulers.newBoundedElastic(CAPACITY, Integer.MAX_VALUE, Peers.named("exp"),
            maxIdleS);
        executor = s::schedule;
        close = s::dispose;
        housekeeping = "boundedElastic-"; // "boundedElastic-evictor-N", truncated by Linux
        break;
      }
      default:
        throw new IllegalArgumentException("unknown peer " + peer);
    }

    long origin = System.nanoTime();
    List<long[]> samples = new ArrayList<>(); // {nanos since origin, workers}
    Thread sampler = new Thread(() -> {
      while (!Thread.currentThread().isInterrupted()) {
        long[] s = {System.nanoTime() - origin, Harness.threadsNamed(WORKER_PREFIX)};
        synchronized (samples) {
          samples.add(s);
        }
        try {
          Thread.sleep(SAMPLE_MS);
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "sampler");
    sampler.setDaemon(true);
    sampler.start();
    Thread.sleep(100);

    double[] idleLife = new double[bursts];
    double[] starts = new double[bursts];
    double[] firstTask = new double[bursts];
    double[] wakeUps = new double[bursts];
    int peak = 0;
    for (int b = 0; b < bursts; b++) {
      AtomicLong firstRun = new AtomicLong();
      AtomicLong remaining = new AtomicLong(tasks);
      CountDownLatch done = new CountDownLatch(1);
      Runnable task = () -> {
        firstRun.compareAndSet(0, System.nanoTime());
        try {
          Thread.sleep(taskMs);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        if (remaining.decrementAndGet() == 0) {
          done.countDown();
        }
      };
      long startedBefore = Harness.THREADS.getTotalStartedThreadCount();
      long burstStart = System.nanoTime();
      for (int i = 0; i < tasks; i++) {
        executor.execute(task);
      }
      done.await();
      long burstEnd = System.nanoTime();
      starts[b] = Harness.THREADS.getTotalStartedThreadCount() - startedBefore;
      firstTask[b] = (firstRun.get() - burstStart) / 1000.0;
      peak = Math.max(peak, Harness.threadsNamed(WORKER_PREFIX));

      wakeUps[b] = idleGap(housekeeping, gapMs);
      idleLife[b] = idleLife(samples, burstEnd - origin, gapMs);
      System.out.printf("%s burst %d: %.0f threads started, first task %.0f us, idle life %.3f s,"
          + " %d housekeeping wake-ups%n", peer, b + 1, starts[b], firstTask[b], idleLife[b],
          (long) wakeUps[b]);
    }
    sampler.interrupt();
    sampler.join();
    close.run();

    double[] later = Arrays.copyOfRange(starts, bursts > 1 ? 1 : 0, bursts);
    double[] laterFirst = Arrays.copyOfRange(firstTask, bursts > 1 ? 1 : 0, bursts);
    Harness.result(TABLE, "idle life s", peer, Harness.median(idleLife));
    Harness.result(TABLE, "idle life / maxIdle", peer, Harness.median(idleLife) / maxIdleS);
    Harness.result(TABLE, "threads started per burst", peer, Harness.median(later));
    Harness.result(TABLE, "first task after idle us", peer, Harness.median(laterFirst));
    Harness.result(TABLE, "housekeeping wake-ups per gap", peer, Harness.median(wakeUps));
    Harness.result(TABLE, "peak workers", peer, peak);
    synchronized (samples) {
      long bucket = TimeUnit.MILLISECONDS.toNanos(50); // one point (the max) per 50 ms for the chart
      for (int i = 0; i < samples.size(); ) {
        long end = samples.get(i)[0] + bucket;
        long max = 0;
        long t = samples.get(i)[0];
        for (; i < samples.size() && samples.get(i)[0] < end; i++) {
          max = Math.max(max, samples.get(i)[1]);
        }
        Harness.series("expiry-threads", peer, t / 1e9, max);
      }
    }
  }

  /**
   * Sleeps through the idle gap, reading the housekeeping thread's wake-ups every 50 ms (it may exit
   * or start during the gap: a thread first seen during the gap counts from zero); returns them.
   */
  private static long idleGap(String housekeeping, int gapMs) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(gapMs);
    if (housekeeping == null) {
      Thread.sleep(gapMs);
      return 0;
    }
    Map<String, Long> first = new HashMap<>(Harness.wakeUps(housekeeping));
    Map<String, Long> last = new HashMap<>(first);
    for (long left; (left = end - System.nanoTime()) > 0; ) {
      Thread.sleep(Math.min(50, TimeUnit.NANOSECONDS.toMillis(left) + 1));
      for (Map.Entry<String, Long> e : Harness.wakeUps(housekeeping).entrySet()) {
        first.putIfAbsent(e.getKey(), 0L);
        last.put(e.getKey(), e.getValue());
      }
    }
    long n = 0;
    for (Map.Entry<String, Long> e : last.entrySet()) {
      n += e.getValue() - first.get(e.getKey());
    }
    return n;
  }

  /** Seconds from {@code endNanos} to the first sample with no worker, or the gap if none. */
  private static double idleLife(List<long[]> samples, long endNanos, int gapMs) {
    synchronized (samples) {
      for (long[] s : samples) {
        if (s[0] >= endNanos && s[1] == 0) {
          return (s[0] - endNanos) / 1e9;
        }
      }
    }
    return gapMs / 1000.0;
  }
}
