package dev.warmpool.samples;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.PoolStats;
import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The README's demo: one nonblocking pool showing FILO reuse, a burst growing the pool, a periodic
 * task, nonblocking rejection as an exception, two subpools (one per dependency) sharing the pool's
 * threads under their own limits, and the pool shrinking to zero after {@code maxIdle},
 * with a live status line; then the Reactor, RxJava and coroutine samples.
 */
public final class Demo {
  private Demo() {}

  public static void main(String[] args) throws Exception {
    WorkerPool pool = WorkerPool.builder()
        .name("demo")
        .capacity(16)
        .maxIdle(Duration.ofSeconds(1))
        .nonblocking(true)
        .build();
    StatusLine status = StatusLine.start(pool);
    try {
      filoReuse(pool, status);
      burstAndRejection(pool, status);
      periodic(pool, status);
      subpools(pool, status);
      shrinkToZero(pool, status);
    } finally {
      status.stop();
      pool.close();
    }
    System.out.println("final " + pool.stats());
    Samples.runAll();
  }

  private static void filoReuse(WorkerPool pool, StatusLine status) throws Exception {
    status.say("1. FILO reuse: three workers go idle in the order A, B, C; the next task gets C");
    String[] names = new String[3];
    CountDownLatch running = new CountDownLatch(3);
    CountDownLatch[] release = {new CountDownLatch(1), new CountDownLatch(1), new CountDownLatch(1)};
    for (int i = 0; i < 3; i++) {
      int k = i;
      pool.execute(() -> {
        names[k] = Thread.currentThread().getName();
        running.countDown();
        await(release[k]);
      });
    }
    running.await();
    for (int i = 0; i < 3; i++) {
      release[i].countDown();
      int idle = i + 1;
      while (pool.stats().idle() < idle) {
        Thread.onSpinWait(); // wait until this worker is back on the idle stack
      }
    }
    String[] next = new String[1];
    CountDownLatch done = new CountDownLatch(1);
    pool.execute(() -> {
      next[0] = Thread.currentThread().getName();
      done.countDown();
    });
    done.await();
    status.say("   released " + String.join(", ", names) + " -> next task ran on " + next[0]
        + (next[0].equals(names[2]) ? " (the last released)" : " (unexpected!)"));
  }

  private static void burstAndRejection(WorkerPool pool, StatusLine status) throws Exception {
    status.say("2. A burst of 16 slow tasks grows the pool to its capacity; the 17th is rejected");
    CountDownLatch release = new CountDownLatch(1);
    for (int i = 0; i < pool.capacity(); i++) {
      pool.execute(() -> await(release));
    }
    Thread.sleep(300); // let the status line show the busy pool
    try {
      pool.execute(() -> {});
      status.say("   unexpected: the 17th task was accepted");
    } catch (PoolOverloadedException e) {
      status.say("   rejected at the call: " + e.getMessage());
    }
    release.countDown();
  }

  private static void periodic(WorkerPool pool, StatusLine status) throws Exception {
    status.say("3. A periodic task every 100 ms runs on pool workers, never on the timer thread");
    AtomicInteger runs = new AtomicInteger();
    CountDownLatch five = new CountDownLatch(5);
    ScheduledFuture<?> tick = pool.scheduleAtFixedRate(() -> {
      runs.incrementAndGet();
      five.countDown();
    }, 0, 100, TimeUnit.MILLISECONDS);
    five.await();
    tick.cancel(false);
    status.say("   ran " + runs.get() + " times, then cancelled");
  }

  private static void subpools(WorkerPool pool, StatusLine status) throws Exception {
    status.say("4. Two subpools, one per dependency: db (3) and partnerApi (5) share the pool's"
        + " threads; a stalled partner API fills only its own subpool");
    WorkerPool db = pool.newSubpool("db", 3, false, 100); // blocking: extra queries wait in db's line
    WorkerPool partnerApi = pool.newSubpool("partnerApi", 5);
    CountDownLatch stalled = new CountDownLatch(1);
    for (int i = 0; i < 5; i++) {
      partnerApi.execute(() -> await(stalled)); // the partner API hangs
    }
    try {
      partnerApi.execute(() -> { });
      status.say("   unexpected: a sixth call to the partner API was accepted");
    } catch (PoolOverloadedException e) {
      status.say("   partnerApi rejects on its own: " + e.getMessage());
    }
    CountDownLatch queries = new CountDownLatch(30);
    for (int i = 0; i < 30; i++) {
      db.enqueue(() -> { // at most 3 at once; the rest wait in db's own line, holding no thread
        sleep(2); // a query
        queries.countDown();
      });
    }
    status.say("   db: 30 queries accepted, " + db.stats().waiting() + " waiting in its line");
    queries.await();
    status.say("   db ran 30 queries meanwhile, 3 at a time: " + db.stats());
    stalled.countDown();
    db.close();
    partnerApi.close();
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void shrinkToZero(WorkerPool pool, StatusLine status) throws Exception {
    status.say("5. Quiet: idle workers expire after maxIdle (1 s) and the pool shrinks to zero");
    long start = System.nanoTime();
    while (pool.stats().workers() > 0 && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10)) {
      Thread.sleep(50);
    }
    status.say("   workers=" + pool.stats().workers() + " after "
        + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms; expired so far: "
        + pool.stats().workersExpired());
  }

  static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Prints the pool's gauges every 250 ms: in place on a terminal, as lines otherwise. */
  static final class StatusLine {
    private final WorkerPool pool;
    private final Thread thread;
    private final boolean terminal = System.console() != null;
    private volatile boolean running = true;

    private StatusLine(WorkerPool pool) {
      this.pool = pool;
      this.thread = new Thread(this::loop, "demo-status");
      thread.setDaemon(true);
    }

    static StatusLine start(WorkerPool pool) {
      StatusLine s = new StatusLine(pool);
      s.thread.start();
      return s;
    }

    static String format(PoolStats s) {
      return String.format("[workers %2d | busy %2d | idle %2d | waiting %d | completed %d | rejected %d]",
          s.workers(), s.busy(), s.idle(), s.waiting(), s.completed(), s.rejected());
    }

    synchronized void say(String line) {
      System.out.println((terminal ? "\r\033[K" : "") + line);
      print();
    }

    private synchronized void print() {
      String text = "   " + format(pool.stats());
      System.out.print(terminal ? "\r\033[K" + text : text + "\n");
      System.out.flush();
    }

    private void loop() {
      while (running) {
        print();
        try {
          Thread.sleep(250);
        } catch (InterruptedException e) {
          return;
        }
      }
    }

    void stop() throws InterruptedException {
      running = false;
      thread.interrupt();
      thread.join();
      if (terminal) {
        System.out.println();
      }
    }
  }
}
