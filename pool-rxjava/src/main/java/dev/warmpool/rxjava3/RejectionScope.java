package dev.warmpool.rxjava3;

import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.functions.Function;
import io.reactivex.rxjava3.subjects.CompletableSubject;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One subscription's view of the pool: a scheduler whose rejections, instead of going to
 * {@code RxJavaPlugins.onError}, fail {@link #rejection()}, which the stream is {@code takeUntil}-ed
 * with. So the first rejection cancels the stream's upstream (disposing its workers) and reaches the
 * subscriber as its one {@code onError}; later rejections of the same subscription are dropped,
 * because the subscriber already knows, and so are rejections after the stream ended, because nobody
 * listens any more.
 */
final class RejectionScope implements PoolScheduler.Rejections {
  private final CompletableSubject rejection = CompletableSubject.create();
  private final AtomicBoolean failed = new AtomicBoolean();
  private final PoolScheduler scheduler;

  RejectionScope(WorkerPool pool) {
    this.scheduler = new PoolScheduler(pool, false, this, null, "PoolScope");
  }

  /** Builds the stream of one subscription; a null one is refused like a null task. */
  <S> S open(Function<? super Scheduler, ? extends S> body, String type) throws Throwable {
    return Objects.requireNonNull(body.apply(scheduler), "the body returned a null " + type);
  }

  Scheduler scheduler() {
    return scheduler;
  }

  /** Never completes; fails with the first rejection. */
  Completable rejection() {
    return rejection;
  }

  @Override
  public void accept(RejectedExecutionException e) {
    if (failed.compareAndSet(false, true)) {
      rejection.onError(e);
    }
  }

  /** A timer of the stream that the pool's shutdown cancelled: the stream must hear of it. */
  @Override
  public boolean reportsClosedTimers() {
    return true;
  }
}
