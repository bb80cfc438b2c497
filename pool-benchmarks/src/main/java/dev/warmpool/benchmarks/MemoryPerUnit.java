package dev.warmpool.benchmarks;

import dev.warmpool.WorkerPool;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Memory as work grows, side by side in one JVM (issue 33): heap used after GC, minus the baseline
 * taken just before the units were made, divided by the number of units. Peers interleaved in each
 * round, median of {@code rounds} (default 3).
 *
 * <ul>
 *   <li>An idle Reactor {@code Worker} holding a pending timer: {@code createWorker()} then
 *       {@code schedule(task, 1, HOURS)}, 100k of them.</li>
 *   <li>The same for an RxJava {@code Scheduler.Worker} (RxJava's {@code io()} holds a thread per
 *       worker: measured with 2k workers).</li>
 *   <li>A task waiting in line: 1M tasks behind one busy seat of capacity 1 (warmpool blocking mode,
 *       {@code enqueue}; a serial lane's {@code execute}) against a fixed(1) pool with a
 *       {@code LinkedBlockingQueue}.</li>
 * </ul>
 * The task is one shared {@code Runnable}, so it costs nothing per unit; a peer's threads are
 * counted as far as their heap goes. Run: {@code java -Xmx2g -cp ... MemoryPerUnit [rounds=3]}.
 */
public final class MemoryPerUnit {
  static final int WORKERS = 100_000;
  static final int IO_WORKERS = 2_000;
  static final int LINE = 1_000_000;

  private static final Runnable TASK = () -> { };

  /** A shape's peer: makes its units (kept reachable in {@code keep}) and tears them down. */
  interface Peer {
    /** Made before the baseline (not counted): the scheduler or pool. */
    void setUp() throws Exception;

    /** Makes unit {@code i}; returns what keeps it reachable. */
    Object unit(int i) throws Exception;

    /** Disposes the units and the peer. */
    void tearDown(Object[] units) throws Exception;
  }

  /** Executors and pools a peer made, shut down after its measurement. */
  private static final List<ExecutorService> MADE = new ArrayList<>();

  private static <E extends ExecutorService> E made(E e) {
    MADE.add(e);
    return e;
  }

  public static void main(String[] args) throws Exception {
    int rounds = 3;
    for (String a : args) {
      if (a.startsWith("rounds=")) {
        rounds = Integer.parseInt(a.substring("rounds=".length()));
      }
    }
    Map<String, Map<String, List<Double>>> results = new LinkedHashMap<>();
    for (int r = 0; r < rounds; r++) {
      for (Map.Entry<String, Map<String, Shape>> shape : shapes().entrySet()) {
        for (Map.Entry<String, Shape> peer : shape.getValue().entrySet()) {
          double b = measure(peer.getValue());
          results.computeIfAbsent(shape.getKey(), k -> new LinkedHashMap<>())
              .computeIfAbsent(peer.getKey(), k -> new ArrayList<>()).add(b);
          System.err.printf(Locale.ROOT, "round %d  %-38s %-46s %8.1f B%n", r + 1, shape.getKey(),
              peer.getKey(), b);
        }
      }
    }
    System.out.printf(Locale.ROOT, "%n| shape | peer | bytes per unit (median of %d) | peer / warmpool |%n",
        rounds);
    System.out.println("|---|---|---|---|");
    for (Map.Entry<String, Map<String, List<Double>>> shape : results.entrySet()) {
      Double ref = null;
      for (Map.Entry<String, List<Double>> peer : shape.getValue().entrySet()) {
        double m = median(peer.getValue());
        if (ref == null) {
          ref = m;
        }
        System.out.printf(Locale.ROOT, "| %s | %s | %.0f | %s |%n", shape.getKey(), peer.getKey(),
            m, peer.getKey().startsWith("warmpool") ? "" : String.format(Locale.ROOT, "%.2f", m / ref));
      }
    }
    System.exit(0);
  }

  /** One peer of one shape: {@code n} units. */
  record Shape(int n, Peer peer) { }

  static Map<String, Map<String, Shape>> shapes() {
    Map<String, Map<String, Shape>> s = new LinkedHashMap<>();
    Map<String, Shape> re = new LinkedHashMap<>();
    re.put("warmpool", new Shape(WORKERS, new ReactorWorkers(() -> dev.warmpool.reactor
        .PoolSchedulers.from(made(WorkerPool.builder().name("mem").capacity(20).build())))));
    re.put("newBoundedElastic(64, MAX)", new Shape(WORKERS, new ReactorWorkers(
        () -> reactor.core.scheduler.Schedulers.newBoundedElastic(64, Integer.MAX_VALUE, "x"))));
    re.put("fromExecutorService(scheduled 20)", new Shape(WORKERS, new ReactorWorkers(
        () -> reactor.core.scheduler.Schedulers.fromExecutorService(
            made(Executors.newScheduledThreadPool(20))))));
    s.put("idle Reactor Worker with a pending timer", re);

    Map<String, Shape> rx = new LinkedHashMap<>();
    rx.put("warmpool", new Shape(WORKERS, new RxWorkers(() -> dev.warmpool.rxjava3.PoolSchedulers
        .from(made(WorkerPool.builder().name("mem").capacity(20).build())))));
    rx.put("Schedulers.from(fixed 20)", new Shape(WORKERS, new RxWorkers(
        () -> io.reactivex.rxjava3.schedulers.Schedulers.from(made(Executors.newFixedThreadPool(20))))));
    rx.put("io() (" + IO_WORKERS + " workers: a thread each)", new Shape(IO_WORKERS, new RxWorkers(
        io.reactivex.rxjava3.schedulers.Schedulers::io)));
    s.put("idle RxJava Worker with a pending timer", rx);

    Map<String, Shape> line = new LinkedHashMap<>();
    line.put("warmpool enqueue", new Shape(LINE, new Line(false)));
    line.put("fixed(1) + LinkedBlockingQueue, execute", new Shape(LINE, new Fixed()));
    line.put("warmpool serial lane execute", new Shape(LINE, new Line(true)));
    s.put("task waiting in line (capacity 1, blocking)", line);
    return s;
  }

  static double measure(Shape shape) throws Exception {
    Peer p = shape.peer();
    Object[] keep = new Object[shape.n()];
    p.setUp();
    try {
      long base = usedAfterGc();
      for (int i = 0; i < keep.length; i++) {
        keep[i] = p.unit(i);
      }
      long after = usedAfterGc();
      double perUnit = (double) (after - base) / keep.length;
      if (keep[keep.length - 1] == null) {
        throw new AssertionError("unreachable"); // keeps the units alive until here
      }
      return perUnit;
    } finally {
      p.tearDown(keep);
      Arrays.fill(keep, null);
      for (ExecutorService e : MADE) {
        e.shutdownNow();
      }
      MADE.clear();
    }
  }

  static long usedAfterGc() throws InterruptedException {
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 4; i++) {
      System.gc();
      Thread.sleep(50);
      used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
    }
    return used;
  }

  static double median(List<Double> v) {
    List<Double> s = new ArrayList<>(v);
    s.sort(null);
    int n = s.size();
    return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
  }

  interface Maker<T> {
    T make();
  }

  static final class ReactorWorkers implements Peer {
    private final Maker<reactor.core.scheduler.Scheduler> maker;
    private reactor.core.scheduler.Scheduler scheduler;

    ReactorWorkers(Maker<reactor.core.scheduler.Scheduler> maker) {
      this.maker = maker;
    }

    @Override
    public void setUp() {
      scheduler = maker.make();
      scheduler.init();
    }

    @Override
    public Object unit(int i) {
      reactor.core.scheduler.Scheduler.Worker w = scheduler.createWorker();
      w.schedule(TASK, 1, TimeUnit.HOURS);
      return w;
    }

    @Override
    public void tearDown(Object[] units) {
      for (Object w : units) {
        if (w != null) {
          ((reactor.core.Disposable) w).dispose();
        }
      }
      scheduler.dispose();
    }
  }

  static final class RxWorkers implements Peer {
    private final Maker<io.reactivex.rxjava3.core.Scheduler> maker;
    private io.reactivex.rxjava3.core.Scheduler scheduler;

    RxWorkers(Maker<io.reactivex.rxjava3.core.Scheduler> maker) {
      this.maker = maker;
    }

    @Override
    public void setUp() {
      scheduler = maker.make();
      scheduler.start();
    }

    @Override
    public Object unit(int i) {
      io.reactivex.rxjava3.core.Scheduler.Worker w = scheduler.createWorker();
      w.schedule(TASK, 1, TimeUnit.HOURS);
      return w;
    }

    @Override
    public void tearDown(Object[] units) {
      for (Object w : units) {
        if (w != null) {
          ((io.reactivex.rxjava3.disposables.Disposable) w).dispose();
        }
      }
      if (scheduler != io.reactivex.rxjava3.schedulers.Schedulers.io()) {
        scheduler.shutdown();
      }
    }
  }

  /** Tasks behind one busy seat of a warmpool of capacity 1, blocking mode. */
  static final class Line implements Peer {
    private final boolean lane;
    private WorkerPool pool;
    private dev.warmpool.SerialExecutor serial;
    private CountDownLatch release;

    Line(boolean lane) {
      this.lane = lane;
    }

    @Override
    public void setUp() throws InterruptedException {
      pool = WorkerPool.builder().name("line").capacity(1).maxWaiting(Integer.MAX_VALUE).build();
      release = new CountDownLatch(1);
      CountDownLatch busy = new CountDownLatch(1);
      CountDownLatch r = release;
      Runnable hold = () -> {
        busy.countDown();
        try {
          r.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      };
      if (lane) {
        serial = pool.newSerialExecutor();
        serial.execute(hold);
      } else {
        pool.execute(hold);
      }
      busy.await();
    }

    @Override
    public Object unit(int i) {
      if (lane) {
        serial.execute(TASK);
        return serial;
      }
      pool.enqueue(TASK); // its handle is not kept: the line holds the task
      return pool;
    }

    @Override
    public void tearDown(Object[] units) {
      release.countDown();
      pool.shutdownNow();
    }
  }

  /** Tasks behind the one busy thread of a fixed(1) pool with an unbounded LinkedBlockingQueue. */
  static final class Fixed implements Peer {
    private ExecutorService pool;
    private CountDownLatch release;

    @Override
    public void setUp() throws InterruptedException {
      pool = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
      release = new CountDownLatch(1);
      CountDownLatch busy = new CountDownLatch(1);
      CountDownLatch r = release;
      pool.execute(() -> {
        busy.countDown();
        try {
          r.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      busy.await();
    }

    @Override
    public Object unit(int i) {
      pool.execute(TASK);
      return pool;
    }

    @Override
    public void tearDown(Object[] units) {
      release.countDown();
      pool.shutdownNow();
    }
  }

  private MemoryPerUnit() {
  }
}
