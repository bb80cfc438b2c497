package dev.warmpool.benchmarks;

import dev.warmpool.WorkerPool;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jboss.threads.EnhancedQueueExecutor;

/**
 * The executors warmpool is compared with, built by id so that JMH parameters and harness arguments
 * can name them. Every peer is built "blocking" (a caller waits when all {@code n} workers are busy,
 * where the peer can express that) or "nonblocking" (a submission is refused at once).
 */
final class Peers {
  static final String WARMPOOL = "warmpool";
  static final String TPE_CACHED = "tpe-cached";
  static final String TPE_HANDOFF = "tpe-handoff";
  static final String TPE_FIXED = "tpe-fixed";
  static final String FORK_JOIN = "forkjoin";
  static final String JBOSS = "jboss-eqe";
  static final String VIRTUAL = "virtual";
  /** warmpool with {@code virtualThreads(true)} (Java 21+). */
  static final String WARMPOOL_VIRTUAL = "warmpool-virtual";

  /** Peers of the blocking-mode scenarios, warmpool first. */
  static final List<String> BLOCKING =
      List.of(WARMPOOL, TPE_CACHED, TPE_HANDOFF, TPE_FIXED, FORK_JOIN, JBOSS, VIRTUAL);

  private static final long KEEP_ALIVE_SECONDS = 60;

  private Peers() {}

  /** How the report names a peer. */
  static String label(String id) {
    switch (id) {
      case WARMPOOL: return "warmpool";
      case TPE_CACHED: return "TPE cached";
      case TPE_HANDOFF: return "TPE(0,N,SynchronousQueue)+put";
      case TPE_FIXED: return "TPE fixed N+LinkedBlockingQueue";
      case FORK_JOIN: return "ForkJoinPool(N)";
      case JBOSS: return "jboss EnhancedQueueExecutor";
      case VIRTUAL: return "virtual threads+Semaphore(N)";
      case WARMPOOL_VIRTUAL: return "warmpool virtualThreads(true)";
      case IdleExpiry.BOUNDED_ELASTIC: return "Reactor boundedElastic";
      case "from-fixed": return "Reactor fromExecutorService(fixed)";
      case "rx-io": return "RxJava io()";
      case "rx-from-fixed": return "RxJava from(fixed)";
      case "io-limited": return "Dispatchers.IO.limitedParallelism(N)";
      case "fixed-dispatcher": return "fixed.asCoroutineDispatcher()";
      case OverloadGoodput.WP_DEADLINE: return "warmpool blocking, maxWaitInLine(50 ms), enqueue";
      case OverloadGoodput.WP_CODEL: return "warmpool blocking, controlledDelay(5 ms, 100 ms), enqueue";
      case OverloadGoodput.WP_CODEL_LIFO:
        return "warmpool blocking, controlledDelay(5 ms, 100 ms) + adaptiveLifo, enqueue";
      case OverloadGoodput.WP_LONG: return "warmpool blocking, maxWaitInLine(250 ms), enqueue";
      case OverloadGoodput.WP_LONG_LIFO:
        return "warmpool blocking, maxWaitInLine(250 ms) + adaptiveLifo, enqueue";
      case OverloadGoodput.WP_BLOCKING: return "warmpool blocking, no deadline (maxWaiting 100,000), enqueue";
      case OverloadGoodput.WP_NONBLOCKING: return "warmpool nonblocking, enqueue";
      case OverloadGoodput.TPE_ABQ: return "TPE(20) + ArrayBlockingQueue(1000) + AbortPolicy";
      case OverloadGoodput.ELASTIC: return "Reactor newBoundedElastic(20, 100000), direct schedule";
      default: return id;
    }
  }

  /** Whether the peer can run on this JVM (virtual threads need Java 21). */
  static boolean available(String id) {
    return !(VIRTUAL.equals(id) || WARMPOOL_VIRTUAL.equals(id)) || VirtualThreads.FACTORY != null;
  }

  /** The peers of {@code ids} that run on this JVM. */
  static List<String> availableOf(List<String> ids) {
    List<String> out = new ArrayList<>();
    for (String id : ids) {
      if (available(id)) {
        out.add(id);
      }
    }
    return out;
  }

  /**
   * A peer in blocking mode: at most {@code n} workers (the cached pool has no bound); a caller
   * waits when all are busy, except for the queue-backed peers (fixed TPE, ForkJoinPool, jboss),
   * whose unbounded queue takes the task.
   */
  static ExecutorService blocking(String id, int n, String name) {
    ThreadFactory threads = named(name);
    switch (id) {
      case WARMPOOL:
        return WorkerPool.builder().name(name).capacity(n).maxIdle(Duration.ofSeconds(KEEP_ALIVE_SECONDS))
            .maxWaiting(Integer.MAX_VALUE).build();
      case WARMPOOL_VIRTUAL:
        return WorkerPool.builder().name(name).capacity(n).maxIdle(Duration.ofSeconds(KEEP_ALIVE_SECONDS))
            .maxWaiting(Integer.MAX_VALUE).virtualThreads(true).build();
      case TPE_CACHED:
        return new ThreadPoolExecutor(0, Integer.MAX_VALUE, KEEP_ALIVE_SECONDS, TimeUnit.SECONDS,
            new SynchronousQueue<>(), threads);
      case TPE_HANDOFF:
        return new ThreadPoolExecutor(0, n, KEEP_ALIVE_SECONDS, TimeUnit.SECONDS,
            new SynchronousQueue<>(), threads, Peers::putInQueue);
      case TPE_FIXED:
        return new ThreadPoolExecutor(n, n, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), threads);
      case FORK_JOIN:
        return new ForkJoinPool(n);
      case JBOSS:
        return new EnhancedQueueExecutor.Builder().setCorePoolSize(n).setMaximumPoolSize(n)
            .setKeepAliveTime(Duration.ofSeconds(KEEP_ALIVE_SECONDS)).setThreadFactory(threads)
            .setRegisterMBean(false).build();
      case VIRTUAL:
        return new VirtualThreads(n, true);
      default:
        throw new IllegalArgumentException("unknown peer " + id);
    }
  }

  /**
   * A peer in nonblocking mode: at most {@code n} workers and no queue; a submission when all are
   * busy throws {@link RejectedExecutionException} at once.
   */
  static ExecutorService nonblocking(String id, int n, String name) {
    switch (id) {
      case WARMPOOL:
        return WorkerPool.builder().name(name).capacity(n).nonblocking(true)
            .maxIdle(Duration.ofSeconds(KEEP_ALIVE_SECONDS)).build();
      case TPE_HANDOFF:
        return new ThreadPoolExecutor(0, n, KEEP_ALIVE_SECONDS, TimeUnit.SECONDS,
            new SynchronousQueue<>(), named(name), new ThreadPoolExecutor.AbortPolicy());
      case JBOSS:
        return new EnhancedQueueExecutor.Builder().setCorePoolSize(n).setMaximumPoolSize(n)
            .setMaximumQueueSize(0).setKeepAliveTime(Duration.ofSeconds(KEEP_ALIVE_SECONDS))
            .setThreadFactory(named(name)).setRegisterMBean(false).build();
      case VIRTUAL:
        return new VirtualThreads(n, false);
      default:
        throw new IllegalArgumentException("peer " + id + " has no nonblocking mode");
    }
  }

  /** The blocking rejection handler of the hand-off twin: the caller waits for a worker to poll. */
  private static void putInQueue(Runnable task, ThreadPoolExecutor executor) {
    if (executor.isShutdown()) {
      throw new RejectedExecutionException("shut down");
    }
    try {
      executor.getQueue().put(task);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RejectedExecutionException("interrupted", e);
    }
  }

  static ThreadFactory named(String name) {
    AtomicInteger number = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + number.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  static void close(ExecutorService executor) {
    executor.shutdownNow();
    try {
      executor.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * One new virtual thread per task, at most {@code n} running: a {@link Semaphore} admits the task
   * (the caller waits, or is refused in nonblocking mode). Virtual threads are created through a
   * method handle so that this class compiles for Java 17; on older JVMs the peer is unavailable.
   */
  static final class VirtualThreads extends AbstractExecutorService {
    static final ThreadFactory FACTORY = virtualThreadFactory();

    private final Semaphore permits;
    private final boolean blocking;
    private volatile boolean shutdown;

    VirtualThreads(int n, boolean blocking) {
      if (FACTORY == null) {
        throw new UnsupportedOperationException("virtual threads need Java 21+");
      }
      this.permits = new Semaphore(n);
      this.blocking = blocking;
    }

    private static ThreadFactory virtualThreadFactory() {
      try {
        Class<?> builder = Class.forName("java.lang.Thread$Builder");
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        MethodHandle ofVirtual = lookup.findStatic(Thread.class, "ofVirtual",
            MethodType.methodType(Class.forName("java.lang.Thread$Builder$OfVirtual")));
        MethodHandle factory = lookup.findVirtual(builder, "factory",
            MethodType.methodType(ThreadFactory.class));
        return (ThreadFactory) factory.invoke(ofVirtual.invoke());
      } catch (Throwable unavailable) {
        return null;
      }
    }

    @Override
    public void execute(Runnable task) {
      if (shutdown) {
        throw new RejectedExecutionException("shut down");
      }
      if (blocking) {
        permits.acquireUninterruptibly();
      } else if (!permits.tryAcquire()) {
        throw new RejectedExecutionException("all permits taken");
      }
      FACTORY.newThread(() -> {
        try {
          task.run();
        } finally {
          permits.release();
        }
      }).start();
    }

    @Override
    public void shutdown() {
      shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
      shutdown = true;
      return List.of();
    }

    @Override
    public boolean isShutdown() {
      return shutdown;
    }

    @Override
    public boolean isTerminated() {
      return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return true;
    }
  }
}
