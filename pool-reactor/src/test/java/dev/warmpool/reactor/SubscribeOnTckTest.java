package dev.warmpool.reactor;

import reactor.core.publisher.Flux;

/** TCK for {@code Flux.range(1, n).hide().subscribeOn(poolScheduler)}. */
public class SubscribeOnTckTest extends PublisherTckSupport {
  @Override
  Flux<Integer> crossThePool(Flux<Integer> source) {
    return source.subscribeOn(scheduler);
  }
}
