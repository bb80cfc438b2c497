package dev.warmpool.rxjava3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.disposables.Disposable;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Contract 6: deep recursion, cancelled tasks are released. */
class ResourceTest {
  @RegisterExtension
  final RxFixture fx = new RxFixture();

  /** A task object of its own, so that a weak reference to it tracks exactly one task. */
  private static final class Noop implements Runnable {
    @Override
    public void run() {}
  }

  private static boolean collected(List<WeakReference<Runnable>> refs) {
    System.gc();
    return refs.stream().allMatch(r -> r.get() == null);
  }

  @Test
  void aMillionRecursiveSchedulesOnOneWorkerNeitherOverflowNorRetain() throws InterruptedException {
    Scheduler.Worker w = PoolSchedulers.from(fx.pool(b -> b.capacity(2))).createWorker();
    int total = 1_000_000;
    AtomicInteger count = new AtomicInteger();
    AtomicInteger deepest = new AtomicInteger();
    List<WeakReference<Runnable>> samples = new ArrayList<>();
    CountDownLatch done = new CountDownLatch(1);
    AtomicReference<Runnable> step = new AtomicReference<>();
    step.set(() -> {
      int n = count.incrementAndGet();
      if (n % 100_000 == 0) {
        deepest.accumulateAndGet(Thread.currentThread().getStackTrace().length, Math::max);
        Runnable sample = new Noop();
        synchronized (samples) {
          samples.add(new WeakReference<>(sample));
        }
        w.schedule(sample);
      }
      if (n < total) {
        w.schedule(step.get());
      } else {
        done.countDown();
      }
    });
    w.schedule(step.get());
    assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
    assertThat(deepest.get()).isLessThan(100); // each task runs from the lane's loop, not nested
    // the live worker keeps nothing of what it ran
    await().until(() -> {
      synchronized (samples) {
        return samples.size() == 10 && collected(samples);
      }
    });
    w.dispose();
  }

  @Test
  void cancelledDayLongTasksAreReleasedAfterTheWorkerIsDisposed() {
    Scheduler.Worker w = PoolSchedulers.from(fx.pool(b -> b)).createWorker();
    List<WeakReference<Runnable>> refs = new ArrayList<>();
    for (int i = 0; i < 100_000; i++) {
      Runnable r = new Noop();
      refs.add(new WeakReference<>(r));
      w.schedule(r, 1, TimeUnit.DAYS);
    }
    assertThat(collected(refs)).isFalse(); // pending: held by the timer
    w.dispose();
    await().until(() -> collected(refs));
  }

  @Test
  void individuallyDisposedDayLongTasksAreReleased() {
    PoolScheduler s = PoolScheduler.conventional(fx.pool(b -> b), false);
    Scheduler.Worker w = s.createWorker();
    List<WeakReference<Runnable>> refs = new ArrayList<>();
    List<Disposable> handles = new ArrayList<>();
    for (int i = 0; i < 50_000; i++) {
      Runnable r = new Noop();
      refs.add(new WeakReference<>(r));
      handles.add(w.schedule(r, 1, TimeUnit.DAYS));
      Runnable d = new Noop();
      refs.add(new WeakReference<>(d));
      handles.add(s.scheduleDirect(d, 1, TimeUnit.DAYS));
    }
    assertThat(s.liveCount()).isEqualTo(50_001); // the worker and the direct tasks
    handles.forEach(Disposable::dispose);
    handles.clear();
    assertThat(s.liveCount()).isEqualTo(1);
    await().until(() -> collected(refs));
    w.dispose();
    assertThat(s.liveCount()).isZero();
  }
}
