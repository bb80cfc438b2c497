package dev.warmpool.reactor;

import reactor.core.publisher.Flux;

/** TCK for {@code Flux.range(1, n).hide().publishOn(poolScheduler)}. */
public class PublishOnTckTest extends PublisherTckSupport {
  @Override
  Flux<Integer> crossThePool(Flux<Integer> source) {
    return source.publishOn(scheduler);
  }
}
