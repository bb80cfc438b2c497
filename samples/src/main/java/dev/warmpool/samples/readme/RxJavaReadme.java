package dev.warmpool.samples.readme;

import static dev.warmpool.samples.readme.Stubs.httpCall;
import static dev.warmpool.samples.readme.Stubs.jdbcLookup;
import static dev.warmpool.samples.readme.Stubs.poll;
import static dev.warmpool.samples.readme.Stubs.shed;
import static dev.warmpool.samples.readme.Stubs.use;

import dev.warmpool.WorkerPool;
import dev.warmpool.rxjava3.PoolSchedulers;
import dev.warmpool.rxjava3.PoolScope;
import dev.warmpool.rxjava3.PoolTransformers;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.core.Single;
import java.util.concurrent.TimeUnit;

/** pool-rxjava/README.md's quick start ({@code ReadmeSnippetsTest} keeps them equal). */
final class RxJavaReadme {
  private RxJavaReadme() {}

  static void quickStart() {
    // snippet:quick-start
    WorkerPool pool = WorkerPool.builder().name("io").capacity(64).build();
    Scheduler scheduler = PoolSchedulers.from(pool);          // a conventional RxJava Scheduler

    Flowable.range(1, 100)
        .flatMap(id -> Flowable.fromCallable(() -> jdbcLookup(id)).subscribeOn(scheduler), 16)
        .observeOn(scheduler)
        .subscribe(row -> use(row));

    // The subscriber must learn that the pool refused the work? Use the transformers:
    Single.fromCallable(() -> httpCall())
        .compose(PoolTransformers.subscribeOn(pool))           // or PoolTransformers.observeOn(pool)
        .subscribe(v -> use(v), e -> shed(e));                 // e: PoolOverloadedException

    // Time operators on the pool, with rejections delivered to the subscriber too:
    Flowable<String> polls = PoolScope.flowable(pool, s ->
        Flowable.interval(1, TimeUnit.SECONDS, s)
            .concatMapSingle(i -> Single.fromCallable(() -> poll()).subscribeOn(s))
            .timeout(10, TimeUnit.SECONDS, s));
    // end:quick-start
  }
}
