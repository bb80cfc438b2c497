package dev.warmpool.rxjava3;

import dev.warmpool.WorkerPool;
import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.core.CompletableSource;
import io.reactivex.rxjava3.core.CompletableTransformer;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.FlowableTransformer;
import io.reactivex.rxjava3.core.Maybe;
import io.reactivex.rxjava3.core.MaybeSource;
import io.reactivex.rxjava3.core.MaybeTransformer;
import io.reactivex.rxjava3.core.Observable;
import io.reactivex.rxjava3.core.ObservableSource;
import io.reactivex.rxjava3.core.ObservableTransformer;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.core.SingleSource;
import io.reactivex.rxjava3.core.SingleTransformer;
import org.reactivestreams.Publisher;

/**
 * {@code observeOn} or {@code subscribeOn} on a pool, for {@code compose} on any of RxJava's five
 * reactive types, delivering a rejection to the subscriber as {@code onError}. Obtained from {@link
 * PoolTransformers}; see there for the guarantees. Stateless and reusable: each subscription gets its
 * own {@link PoolScope}.
 *
 * @param <T> the item type (ignored for {@link Completable})
 */
public final class PoolTransformer<T> implements FlowableTransformer<T, T>,
    ObservableTransformer<T, T>, SingleTransformer<T, T>, MaybeTransformer<T, T>,
    CompletableTransformer {

  private final WorkerPool pool;
  private final boolean subscribeOn;

  PoolTransformer(WorkerPool pool, boolean subscribeOn) {
    this.pool = pool;
    this.subscribeOn = subscribeOn;
  }

  /** {@code upstream.observeOn(s)} or {@code upstream.subscribeOn(s)} inside a {@link PoolScope}. */
  @Override
  public Publisher<T> apply(Flowable<T> upstream) {
    return PoolScope.flowable(pool,
        s -> subscribeOn ? upstream.subscribeOn(s) : upstream.observeOn(s));
  }

  /** {@code upstream.observeOn(s)} or {@code upstream.subscribeOn(s)} inside a {@link PoolScope}. */
  @Override
  public ObservableSource<T> apply(Observable<T> upstream) {
    return PoolScope.observable(pool,
        s -> subscribeOn ? upstream.subscribeOn(s) : upstream.observeOn(s));
  }

  /** {@code upstream.observeOn(s)} or {@code upstream.subscribeOn(s)} inside a {@link PoolScope}. */
  @Override
  public SingleSource<T> apply(Single<T> upstream) {
    return PoolScope.single(pool,
        s -> subscribeOn ? upstream.subscribeOn(s) : upstream.observeOn(s));
  }

  /** {@code upstream.observeOn(s)} or {@code upstream.subscribeOn(s)} inside a {@link PoolScope}. */
  @Override
  public MaybeSource<T> apply(Maybe<T> upstream) {
    return PoolScope.maybe(pool,
        s -> subscribeOn ? upstream.subscribeOn(s) : upstream.observeOn(s));
  }

  /** {@code upstream.observeOn(s)} or {@code upstream.subscribeOn(s)} inside a {@link PoolScope}. */
  @Override
  public CompletableSource apply(Completable upstream) {
    return PoolScope.completable(pool,
        s -> subscribeOn ? upstream.subscribeOn(s) : upstream.observeOn(s));
  }

  @Override
  public String toString() {
    return "PoolTransformers." + (subscribeOn ? "subscribeOn" : "observeOn") + "(" + pool + ")";
  }
}
