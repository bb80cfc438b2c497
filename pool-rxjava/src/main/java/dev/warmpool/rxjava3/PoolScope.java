package dev.warmpool.rxjava3;

import dev.warmpool.PoolClosedException;
import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.core.CompletableSource;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Maybe;
import io.reactivex.rxjava3.core.MaybeSource;
import io.reactivex.rxjava3.core.Observable;
import io.reactivex.rxjava3.core.ObservableSource;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.core.SingleSource;
import io.reactivex.rxjava3.functions.Function;
import java.util.Objects;
import org.reactivestreams.Publisher;

/**
 * Runs a stream body against the pool so that <b>any rejection of any task the body schedules
 * reaches the subscriber</b>: the general form of {@link PoolTransformers}, for bodies that use the
 * pool's scheduler with time operators ({@code delay}, {@code interval}, {@code timeout},
 * {@code timer}, {@code sample}...) or with several {@code observeOn}/{@code subscribeOn} at once.
 *
 * <pre>{@code
 * Flowable<Long> ticks = PoolScope.flowable(pool, s ->
 *     Flowable.interval(100, TimeUnit.MILLISECONDS, s)
 *         .concatMapSingle(i -> Single.fromCallable(() -> blockingCall(i)).subscribeOn(s))
 *         .timeout(5, TimeUnit.SECONDS, s));
 * }</pre>
 *
 * <h2>Guarantees</h2>
 * <ul>
 *   <li>Each subscription calls {@code body} once (as {@code defer} does) with a fresh {@link
 *       Scheduler} over {@code pool}; the scheduler behaves like {@link PoolSchedulers#from} (serial
 *       workers, {@code RxJavaPlugins.onSchedule}, never blocks the caller, never throws from
 *       {@code schedule}), except for rejections.</li>
 *   <li>The first time the pool rejects a task of that scheduler ({@link PoolOverloadedException}
 *       when the pool is full in nonblocking mode or its waiting line is full, {@link
 *       PoolClosedException} when it is shut down), the body's subscription is cancelled, which
 *       disposes its workers and timers, and the subscriber receives exactly that exception as its
 *       one {@code onError}. Nothing is thrown from {@code subscribe()} and nothing is passed to
 *       {@code RxJavaPlugins.onError}; later rejections in the same subscription are dropped.</li>
 *   <li>What can be rejected is what needs a pool thread now and has not been admitted: an
 *       immediate direct task ({@code Single/Maybe/Completable} {@code subscribeOn}/{@code observeOn},
 *       {@code Observable.subscribeOn}), or the first immediate task of a worker
 *       ({@code observeOn}, {@code Flowable.subscribeOn}). Delayed and periodic tasks ({@code delay},
 *       {@code interval}, {@code timeout}) are admitted when scheduled and wait their turn when due;
 *       so is every later task of an admitted worker. A stream admitted before the pool filled up
 *       therefore completes normally.</li>
 *   <li>In blocking mode no call blocks the emitting thread: a task that finds every seat taken waits
 *       in the pool's line without a thread.</li>
 * </ul>
 * The scheduler passed to the body belongs to that one subscription: using it after the stream ended
 * still runs tasks, but their rejections are dropped.
 */
public final class PoolScope {
  private PoolScope() {}

  /**
   * A {@link Flowable} over the publisher that {@code body} builds, for each subscription, with a
   * scheduler over {@code pool}; a rejection ends it with {@code onError}.
   *
   * @param pool the pool whose workers run the body's scheduled tasks; not closed by this
   * @param body builds the stream for one subscription; if it throws or returns null the subscriber
   *     receives that error (a {@link NullPointerException} for null)
   * @param <T> the item type
   * @return the stream; cold: each subscription calls the body anew
   * @throws NullPointerException if {@code pool} or {@code body} is null
   */
  public static <T> Flowable<T> flowable(WorkerPool pool,
      Function<? super Scheduler, ? extends Publisher<? extends T>> body) {
    check(pool, body);
    return Flowable.defer(() -> {
      RejectionScope scope = new RejectionScope(pool);
      Publisher<? extends T> p = scope.open(body, "Publisher");
      return Flowable.<T>fromPublisher(p).takeUntil(scope.rejection().toFlowable());
    });
  }

  /**
   * As {@link #flowable}, for an {@link Observable}.
   *
   * @throws NullPointerException if {@code pool} or {@code body} is null
   */
  public static <T> Observable<T> observable(WorkerPool pool,
      Function<? super Scheduler, ? extends ObservableSource<? extends T>> body) {
    check(pool, body);
    return Observable.defer(() -> {
      RejectionScope scope = new RejectionScope(pool);
      ObservableSource<T> o = narrow(scope.open(body, "ObservableSource"));
      return Observable.wrap(o).takeUntil(scope.rejection().toObservable());
    });
  }

  /**
   * As {@link #flowable}, for a {@link Single}.
   *
   * @throws NullPointerException if {@code pool} or {@code body} is null
   */
  public static <T> Single<T> single(WorkerPool pool,
      Function<? super Scheduler, ? extends SingleSource<? extends T>> body) {
    check(pool, body);
    return Single.defer(() -> {
      RejectionScope scope = new RejectionScope(pool);
      SingleSource<T> s = narrow(scope.open(body, "SingleSource"));
      return Single.wrap(s).takeUntil(scope.rejection());
    });
  }

  /**
   * As {@link #flowable}, for a {@link Maybe}.
   *
   * @throws NullPointerException if {@code pool} or {@code body} is null
   */
  public static <T> Maybe<T> maybe(WorkerPool pool,
      Function<? super Scheduler, ? extends MaybeSource<? extends T>> body) {
    check(pool, body);
    return Maybe.defer(() -> {
      RejectionScope scope = new RejectionScope(pool);
      MaybeSource<T> m = narrow(scope.open(body, "MaybeSource"));
      return Maybe.wrap(m).takeUntil(scope.rejection().<T>toMaybe());
    });
  }

  /**
   * As {@link #flowable}, for a {@link Completable}.
   *
   * @throws NullPointerException if {@code pool} or {@code body} is null
   */
  public static Completable completable(WorkerPool pool,
      Function<? super Scheduler, ? extends CompletableSource> body) {
    check(pool, body);
    return Completable.defer(() -> {
      RejectionScope scope = new RejectionScope(pool);
      return Completable.wrap(scope.open(body, "CompletableSource")).takeUntil(scope.rejection());
    });
  }

  private static void check(WorkerPool pool, Object body) {
    Objects.requireNonNull(pool, "pool is null");
    Objects.requireNonNull(body, "body is null");
  }

  /** Sources only produce values, so a source of a subtype is a source of the type. */
  @SuppressWarnings("unchecked")
  private static <S> S narrow(Object source) {
    return (S) source;
  }
}
