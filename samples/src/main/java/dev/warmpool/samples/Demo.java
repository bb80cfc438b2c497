package dev.warmpool.samples;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.TaskHandle;
import dev.warmpool.WorkerPool;
import dev.warmpool.reactor.PoolSchedulers;
import dev.warmpool.rxjava3.PoolTransformers;
import io.reactivex.rxjava3.core.Single;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;

/**
 * The README's demo: one line per claim, each shown by running it. FILO reuse, a rejection at the
 * call, a line deadline shedding work, each ecosystem's rejection as an error its user can handle,
 * and the pool shrinking to zero threads after {@code maxIdle}. It takes a few seconds; the
 * ecosystem samples ({@link ReactorSample}, {@link RxJavaSample}, {@code CoroutineSample}) show
 * more of each adapter.
 */
public final class Demo {
  private Demo() {}

  public static void main(String[] args) throws Exception {
    long start = System.nanoTime();
    try (WorkerPool pool = WorkerPool.builder().name("demo").capacity(4)
        .maxIdle(Duration.ofMillis(300)).nonblocking(true).build()) {
      filoReuse(pool);
      rejectionAtTheCall(pool);
      reactorRejection(pool);
      rxJavaRejection(pool);
      System.out.println("Kotlin       " + KotlinRejection.show(pool));
      shrinkToZero(pool);
    }
    lineDeadline();
    System.out.printf("done in %d ms%n", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
  }

  /** Three workers go idle in the order A, B, C: the next task runs on C, the warmest. */
  private static void filoReuse(WorkerPool pool) throws Exception {
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
      while (pool.stats().idle() < i + 1) {
        Thread.onSpinWait(); // until this worker is back on the idle stack
      }
    }
    String next = onPool(pool);
    System.out.println("FILO reuse   workers went idle " + String.join(", ", names) + "; the next"
        + " task ran on " + next + (next.equals(names[2]) ? " (the last to go idle)" : " (unexpected)"));
  }

  /** Every seat taken: the fifth task is refused by the call that submits it. */
  private static void rejectionAtTheCall(WorkerPool pool) throws Exception {
    try (Occupied full = Occupied.fill(pool)) {
      pool.execute(() -> { });
      System.out.println("rejection    unexpected: a task was accepted by a full pool");
    } catch (PoolOverloadedException e) {
      System.out.println("rejection    at the call: " + e.getMessage());
    }
  }

  /** Reactor: the pipeline ends with onError, whose cause chain holds the pool's exception. */
  private static void reactorRejection(WorkerPool pool) throws Exception {
    try (Occupied full = Occupied.fill(pool)) {
      Mono.fromCallable(() -> "never").subscribeOn(PoolSchedulers.from(pool))
          .onErrorResume(e -> Mono.just(PoolOverloadedException.findIn(e)
              .map(p -> "onError(" + e.getClass().getSimpleName() + ") caused by the pool: "
                  + p.getMessage())
              .orElse("onError without the pool's cause: " + e)))
          .doOnNext(line -> System.out.println("Reactor      " + line))
          .block(Duration.ofSeconds(10));
    }
  }

  /** RxJava: {@code PoolTransformers} deliver the rejection to the subscriber as onError. */
  private static void rxJavaRejection(WorkerPool pool) throws Exception {
    try (Occupied full = Occupied.fill(pool)) {
      String line = Single.fromCallable(() -> "never")
          .compose(PoolTransformers.subscribeOn(pool))
          .map(x -> "unexpected: " + x)
          .onErrorReturn(e -> "onError(" + e.getClass().getSimpleName() + "): " + e.getMessage())
          .blockingGet();
      System.out.println("RxJava       " + line);
    }
  }

  /** No work for longer than maxIdle: every worker expires, and the pool holds no thread. */
  private static void shrinkToZero(WorkerPool pool) throws Exception {
    int before = pool.stats().workers();
    long start = System.nanoTime();
    while (pool.stats().workers() > 0 && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10)) {
      Thread.sleep(10);
    }
    System.out.println("expiry       " + before + " idle workers -> " + pool.stats().workers()
        + " threads " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)
        + " ms later (maxIdle " + pool.maxIdle().toMillis() + " ms)");
  }

  /**
   * Twice the work a blocking pool can do: 2 seats, 20 tasks of 20 ms, each allowed 50 ms in line.
   * Those that would start too late leave the line unrun (their handles read expired); the rest
   * start within the deadline.
   */
  private static void lineDeadline() throws Exception {
    try (WorkerPool pool = WorkerPool.builder().name("deadline").capacity(2)
        .maxWaitInLine(Duration.ofMillis(50)).build()) {
      AtomicInteger ran = new AtomicInteger();
      List<TaskHandle> handles = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        handles.add(pool.enqueue(() -> {
          sleep(20);
          ran.incrementAndGet();
        }));
      }
      pool.shutdown();
      pool.awaitTermination(10, TimeUnit.SECONDS);
      long expired = handles.stream().filter(TaskHandle::isExpired).count();
      System.out.println("deadline     20 tasks of 20 ms on 2 seats, 50 ms allowed in line: " + ran
          + " ran, " + expired + " shed unrun (stats: " + pool.stats().expired() + " expired)");
    }
  }

  /** The name of the thread that runs a task on {@code pool}. */
  private static String onPool(WorkerPool pool) throws Exception {
    return pool.submit(() -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS);
  }

  static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Every seat of a pool held by a task that waits for {@link #close}. */
  static final class Occupied implements AutoCloseable {
    private final WorkerPool pool;
    private final CountDownLatch release = new CountDownLatch(1);

    private Occupied(WorkerPool pool) {
      this.pool = pool;
    }

    static Occupied fill(WorkerPool pool) throws InterruptedException {
      Occupied o = new Occupied(pool);
      CountDownLatch started = new CountDownLatch(pool.capacity());
      try {
        for (int i = 0; i < pool.capacity(); i++) {
          pool.execute(() -> {
            started.countDown();
            await(o.release);
          });
        }
      } catch (RuntimeException e) {
        o.close();
        throw e;
      }
      started.await();
      return o;
    }

    /** Lets the tasks end, and waits until their seats are free again. */
    @Override
    public void close() {
      release.countDown();
      while (pool.stats().busy() > 0) {
        Thread.onSpinWait();
      }
    }
  }
}
