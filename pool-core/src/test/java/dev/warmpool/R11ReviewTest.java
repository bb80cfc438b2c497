package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review r11: an adversarial look at today's fixes to interrupt delivery (a request made from
 * inside a delivery joins it, {@link Worker#delivering}) and to the one-object timer
 * ({@link DelayedTask}: cancel(true) whose interrupt throws, compareTo, the first hand-off's CAS
 * bind, a re-arm that cannot start the timer thread). Each fault's test failed 3/3 before
 * its fix; the rest held.
 */
@Timeout(120)
class R11ReviewTest {
  private static final Duration HOUR = Duration.ofHours(1);
  @AutoClose final PoolFixture fixture = new PoolFixture();

  /** What cancels the task running on a thread: {@code cancel(true)} of its handle or future. */
  private interface Canceller {
    boolean cancelTrue();
  }

  /**
   * A worker thread whose {@code interrupt()}, called by another thread, interrupts it and then
   * asks for {@code cancel(true)} of the task every OTHER thread of the map runs (a listener that
   * propagates a cancellation to sibling work, as a structured-concurrency scope does).
   */
  private static ThreadFactory propagatingToSiblings(String name, Map<Thread, Canceller> running,
      AtomicLong interrupts) {
    AtomicInteger ids = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + ids.incrementAndGet()) {
        @Override
        public void interrupt() {
          super.interrupt();
          if (Thread.currentThread() == this) {
            return;
          }
          interrupts.incrementAndGet();
          for (Map.Entry<Thread, Canceller> e : running.entrySet()) {
            if (e.getKey() != this) {
              e.getValue().cancelTrue();
            }
          }
        }
      };
      t.setDaemon(true);
      return t;
    };
  }

  /**
   * Two tasks on two threads whose {@code interrupt()} cancels each other's task; the tasks end only
   * once the first {@code cancel(true)} has returned (or the test gives up). Returns whether that
   * cancel returned while they ran, and the interrupt() calls made meanwhile.
   */
  private static boolean crossCancelReturns(Function<Runnable, Canceller> start,
      Map<Thread, Canceller> running, AtomicLong interrupts) throws Exception {
    return crossCancelReturns(start, running, interrupts, null);
  }

  /** As above; {@code outer}, if not null, is the first call (else cancel(true) of task 0). */
  private static boolean crossCancelReturns(Function<Runnable, Canceller> start,
      Map<Thread, Canceller> running, AtomicLong interrupts, Canceller outer) throws Exception {
    AtomicBoolean cancelReturned = new AtomicBoolean();
    AtomicBoolean giveUp = new AtomicBoolean();
    CountDownLatch started = new CountDownLatch(2);
    CountDownLatch registered = new CountDownLatch(1);
    Thread[] threads = new Thread[2];
    Canceller[] cancellers = new Canceller[2];
    for (int i = 0; i < 2; i++) {
      int me = i;
      cancellers[i] = start.apply(() -> {
        threads[me] = Thread.currentThread();
        started.countDown();
        while (registered.getCount() > 0 && !giveUp.get()) {
          Thread.onSpinWait(); // uninterruptibly: the cancel may come as soon as both are known
        }
        while (!cancelReturned.get() && !giveUp.get()) {
          Thread.onSpinWait(); // ends once its canceller has moved on
        }
        Thread.interrupted();
      });
    }
    PoolFixture.await(started);
    running.put(threads[0], cancellers[0]);
    running.put(threads[1], cancellers[1]);
    registered.countDown();
    FutureTaskCaller canceller = new FutureTaskCaller(() -> {
      (outer != null ? outer : cancellers[0]).cancelTrue();
      cancelReturned.set(true);
    });
    boolean returned = PoolFixture.waitUntil(Duration.ofSeconds(5), canceller::isDone);
    long calls = interrupts.get();
    giveUp.set(true);
    running.clear();
    assertThat(PoolFixture.waitUntil(Duration.ofSeconds(20), canceller::isDone))
        .as("the cancel returns once the tasks end").isTrue();
    assertThat(returned)
        .as("cancel(true) returned while the tasks ran (interrupt() calls meanwhile: %d)", calls)
        .isTrue();
    return returned;
  }

  /** A call on a thread of its own (no fixture: the JDK row shares the helper). */
  private static final class FutureTaskCaller {
    private final Thread thread;
    private final AtomicBoolean done = new AtomicBoolean();

    FutureTaskCaller(Runnable body) {
      thread = new Thread(() -> {
        body.run();
        done.set(true);
      }, "r11-canceller");
      thread.setDaemon(true);
      thread.start();
    }

    boolean isDone() {
      return done.get();
    }
  }

  /** The JDK row: two FutureTasks whose threads cancel each other's: cancel(true) returns. */
  @Test
  void jdkRow_crossCancelOfTwoThreadPoolExecutorTasksReturns() throws Exception {
    Map<Thread, Canceller> running = new ConcurrentHashMap<>();
    AtomicLong interrupts = new AtomicLong();
    ExecutorService tpe = new ThreadPoolExecutor(2, 2, 1, TimeUnit.MINUTES,
        new LinkedBlockingQueue<>(), propagatingToSiblings("r11-tpe-", running, interrupts));
    try {
      crossCancelReturns(task -> {
        Future<?> f = tpe.submit(task);
        return () -> f.cancel(true);
      }, running, interrupts);
    } finally {
      tpe.shutdownNow();
      assertThat(tpe.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  /**
   * F1 (r9's F1 across two threads; attack 1a/1b of the brief): a request made inside a delivery
   * joins it only if it asks for the very thread this thread is delivering to, and
   * {@link Worker#delivering} remembers only the innermost delivery. Thread A's {@code interrupt()}
   * cancels(true) task B (on thread B), whose {@code interrupt()} cancels(true) task A: the inner
   * request for A is made while this thread delivers to B, so it does not join A's delivery but
   * marks it INTERRUPTING_AGAIN; A's interrupter delivers again, which cancels B again (B's handle
   * went back to STARTED), which asks for A again: the first {@code cancel(true)} never returns
   * while the tasks run (millions of interrupt() calls), and tasks that wait for it never end.
   * {@code FutureTask} interrupts once (JDK row). Public API.
   */
  @Test
  void guarantee9_cancelTrueReturnsWhenTwoThreadsInterruptCancelsEachOthersTask()
      throws Exception {
    Map<Thread, Canceller> running = new ConcurrentHashMap<>();
    AtomicLong interrupts = new AtomicLong();
    WorkerPool pool = fixture.pool("r11cross", b -> b.capacity(2).maxIdle(HOUR)
        .threadFactory(propagatingToSiblings("r11cross-w", running, interrupts)));
    crossCancelReturns(task -> {
      TaskHandle h = pool.enqueue(task);
      return () -> h.cancel(true);
    }, running, interrupts);
  }

  /**
   * F1's second form, through the worker's shield ({@link Worker#interruptToStop}'s AGAIN): the
   * pool's {@code shutdownNow()} interrupts thread A, whose {@code interrupt()} cancels(true) task
   * B, whose thread's {@code interrupt()} cancels(true) task A: A's shield goes AGAIN (the request
   * is made while this thread delivers to B), and shutdownNow delivers to A again, for ever.
   */
  @Test
  void guarantee9_shutdownNowReturnsWhenTwoThreadsInterruptCancelsEachOthersTask()
      throws Exception {
    Map<Thread, Canceller> running = new ConcurrentHashMap<>();
    AtomicLong interrupts = new AtomicLong();
    WorkerPool pool = fixture.pool("r11crossn", b -> b.capacity(2).maxIdle(HOUR)
        .threadFactory(propagatingToSiblings("r11crossn-w", running, interrupts)));
    crossCancelReturns(task -> {
      TaskHandle h = pool.enqueue(task);
      return () -> h.cancel(true);
    }, running, interrupts, () -> {
      pool.shutdownNow();
      return true;
    });
    assertThat(pool.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
  }

  /**
   * HELD: the same cycle where one side is a timer's future ({@code schedule}, due at once): its
   * {@code cancel(true)} moves the future out of PENDING/DUE once, so the second request through
   * the cycle returns false and the first returns.
   */
  @Test
  void guarantee9_cancelTrueReturnsWhenAThreadsInterruptCancelsATimerOnAnotherThread()
      throws Exception {
    Map<Thread, Canceller> running = new ConcurrentHashMap<>();
    AtomicLong interrupts = new AtomicLong();
    WorkerPool pool = fixture.pool("r11crosst", b -> b.capacity(2).maxIdle(HOUR)
        .threadFactory(propagatingToSiblings("r11crosst-w", running, interrupts)));
    AtomicInteger n = new AtomicInteger();
    crossCancelReturns(task -> {
      if (n.getAndIncrement() == 0) {
        ScheduledFuture<?> f = pool.schedule(task, 0, TimeUnit.NANOSECONDS);
        return () -> f.cancel(true);
      }
      TaskHandle h = pool.enqueue(task);
      return () -> h.cancel(true);
    }, running, interrupts);
  }

  // -----------------------------------------------------------------------------------------------
  // The timer

  /**
   * F2 (attack: an OOM-ing timer thread on the first schedule). A schedule whose timer thread
   * cannot start throws to its caller (SharedTimer takes the entry off its heap), but
   * {@link DelayedTask#start} registered the timer with the pool's timers (and a lane's) before it
   * armed it, and nobody forgets it: the pool keeps a timer nobody holds (one per failed schedule,
   * until shutdown), and the pool's shutdown later cancels it: a {@link CancellationAware} task
   * whose schedule threw hears {@code onCancel} at the shutdown, a second answer to one call
   * (an adapter already rejected it on the throw). Public API but for the injected failure and the
   * count of registered timers.
   */
  @Test
  void guarantee5_aScheduleThatThrowsLeavesNoTimerBehindAndIsNeverCancelledLater()
      throws Exception {
    WorkerPool pool = fixture.pool("r11oom1", b -> b.capacity(1));
    AbstractWorkerPool p = (AbstractWorkerPool) pool;
    AtomicInteger ran = new AtomicInteger();
    AtomicInteger toldCancel = new AtomicInteger();
    CancellationAware task = new CancellationAware() {
      @Override
      public void run() {
        ran.incrementAndGet();
      }

      @Override
      public void onCancel() {
        toldCancel.incrementAndGet();
      }
    };
    TimerThreadFailure.whileUnstartable(pool, "r11", () ->
        assertThatThrownBy(() -> pool.schedule(task, 1, TimeUnit.HOURS))
            .isInstanceOf(OutOfMemoryError.class));
    int left = p.delayedCount();
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ran).hasValue(0);
    assertThat(toldCancel).as("onCancel calls for a schedule that threw").hasValue(0);
    assertThat(left).as("timers the pool keeps after the schedule threw").isZero();
  }

  /**
   * F3 (attack: an OOM-ing timer thread on a re-arm; a judgment on today's r10-F5 fix). A
   * periodic re-arm that cannot start the timer thread now completes the future exceptionally,
   * but that is the only place the error goes: the run that re-armed returned, so the pool counts
   * it completed ({@code failed} stays 0) and the pool's failure handler never hears of it. A
   * fire-and-forget {@code scheduleAtFixedRate} (nobody calls {@code get} on a periodic future
   * that never ends normally) stops silently (guarantee 4: nothing is dropped silently; guarantee
   * 8: delayed and periodic tasks follow the failure rule). A schedule call that fails so throws
   * to its caller; a re-arm has no caller, and the handler is the pool's way to tell.
   */
  @Test
  void guarantee8_aPeriodicReArmThatCannotStartTheTimerIsReportedToTheFailureHandler()
      throws Exception {
    java.util.List<Throwable> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
    WorkerPool pool = fixture.pool("r11oom2", b -> b.capacity(1)
        .failureHandler((t, e) -> heard.add(e)));
    CountDownLatch inRun = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger runs = new AtomicInteger();
    ScheduledFuture<?> f = pool.scheduleAtFixedRate(() -> {
      if (runs.incrementAndGet() == 1) {
        inRun.countDown();
        PoolFixture.await(release);
      }
    }, 0, 1, TimeUnit.MILLISECONDS);
    PoolFixture.await(inRun);
    TimerThreadFailure.whileUnstartable(pool, "r11", () -> {
      release.countDown();
      assertThat(PoolFixture.waitUntil(Duration.ofSeconds(10), f::isDone)).isTrue();
    });
    assertThatThrownBy(f::get).hasCauseInstanceOf(OutOfMemoryError.class);
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    PoolStats s = pool.stats();
    assertThat(runs).hasValue(1);
    assertThat(heard).as("the failure handler hears why the periodic task stopped; %s", s)
        .hasSize(1);
    assertThat(s.failed() + s.completed()).as("one run: %s", s).isEqualTo(1);
  }

  /** One row of the periodic table: what a {@code ScheduledExecutorService} gives for a script. */
  private record Outcome(boolean cancelResult, boolean cancelled, boolean done, String get,
      int runs) { }

  private static String getOf(Future<?> f) {
    try {
      f.get(10, TimeUnit.SECONDS);
      return "value";
    } catch (CancellationException e) {
      return "cancelled";
    } catch (java.util.concurrent.ExecutionException e) {
      return "failed: " + e.getCause().getClass().getSimpleName();
    } catch (java.util.concurrent.TimeoutException e) {
      return "pending";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted";
    }
  }

  /**
   * A periodic task due at once (rate or delay), whose first run is held; {@code during} acts on
   * the service or the future while it is held; then the run is released and the service drains.
   */
  private static Outcome periodicScript(ScheduledExecutorService ses, boolean fixedRate,
      Function<ScheduledFuture<?>, Boolean> during) throws Exception {
    CountDownLatch inRun = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger runs = new AtomicInteger();
    Runnable task = () -> {
      if (runs.incrementAndGet() == 1) {
        inRun.countDown();
        PoolFixture.awaitQuietly(release, Duration.ofSeconds(30));
      }
    };
    ScheduledFuture<?> f = fixedRate
        ? ses.scheduleAtFixedRate(task, 0, 1, TimeUnit.HOURS)
        : ses.scheduleWithFixedDelay(task, 0, 1, TimeUnit.HOURS);
    PoolFixture.await(inRun);
    boolean r = during.apply(f);
    release.countDown();
    ses.shutdown();
    assertThat(ses.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    return new Outcome(r, f.isCancelled(), f.isDone(), getOf(f), runs.get());
  }

  /**
   * HELD (table against {@link ScheduledThreadPoolExecutor}): a periodic task due at once, rate
   * and delay, with cancel(false), cancel(true), shutdown and shutdownNow during its first run:
   * the future's outcome and the runs are the JDK's; the pool's counters are exact after each.
   */
  @Test
  void guarantee7_periodicDueAtOnceWithCancelOrShutdownDuringTheFirstRunEndsAsTheJdks()
      throws Exception {
    java.util.List<String> scripts = java.util.List.of("cancelFalse", "cancelTrue", "shutdown",
        "shutdownNow");
    for (boolean rate : new boolean[] {true, false}) {
      for (String script : scripts) {
        java.util.function.BiFunction<ScheduledExecutorService, ScheduledFuture<?>, Boolean> act =
            (ses, f) -> switch (script) {
              case "cancelFalse" -> f.cancel(false);
              case "cancelTrue" -> f.cancel(true);
              case "shutdown" -> {
                ses.shutdown();
                yield false;
              }
              default -> {
                ses.shutdownNow();
                yield false;
              }
            };
        ScheduledThreadPoolExecutor stpe = new ScheduledThreadPoolExecutor(1);
        Outcome jdk = periodicScript(stpe, rate, f -> act.apply(stpe, f));
        WorkerPool pool = fixture.pool("r11table", b -> b.capacity(1));
        Outcome ours = periodicScript(pool, rate, f -> act.apply(pool, f));
        assertThat(ours).as("%s, %s", rate ? "rate" : "delay", script).isEqualTo(jdk);
        PoolStats s = pool.stats();
        assertThat(s.completed() + s.failed()).as("%s %s: %s", rate, script, s)
            .isEqualTo(ours.runs());
        assertThat(((AbstractWorkerPool) pool).delayedCount()).isZero();
      }
    }
  }
}
