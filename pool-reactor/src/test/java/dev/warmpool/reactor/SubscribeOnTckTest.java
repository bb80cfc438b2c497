package dev.warmpool.reactor;

import org.testng.annotations.Test;
import reactor.core.publisher.Flux;

/** TCK for {@code Flux.range(1, n).hide().subscribeOn(poolScheduler)}. */
// TestNG groups are JUnit tags on the JUnit Platform: -Pquick leaves the TCK out by this one
@Test(groups = "tck")
public class SubscribeOnTckTest extends PublisherTckSupport {
  @Override
  Flux<Integer> crossThePool(Flux<Integer> source) {
    return source.subscribeOn(scheduler);
  }
}
