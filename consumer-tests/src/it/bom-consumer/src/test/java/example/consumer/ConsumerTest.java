package example.consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.warmpool.WorkerPool;
import dev.warmpool.micrometer.WorkerPoolMetrics;
import dev.warmpool.reactor.PoolSchedulers;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/** What a user does first: a pool, a Reactor scheduler over it, and its meters. */
class ConsumerTest {
  @Test
  void runsReactorWorkOnAPoolAndReportsItsMeters() throws Exception {
    WorkerPool pool = WorkerPool.builder().name("consumer").capacity(4).build();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new WorkerPoolMetrics(pool, Tags.of("app", "consumer")).bindTo(registry);
    Scheduler scheduler = PoolSchedulers.from(pool);

    Long count = Flux.range(1, 100)
        .flatMap(i -> Mono.fromCallable(() -> Thread.currentThread().getName()).subscribeOn(scheduler), 8)
        .filter(name -> name.startsWith("consumer-"))
        .count()
        .block();
    assertEquals(100L, count);

    scheduler.dispose();
    pool.shutdown();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    double completed = registry.get("executor.completed").tag("name", "consumer").functionCounter().count();
    assertTrue(completed >= 100, "executor.completed = " + completed);
    assertEquals(4.0, registry.get("executor.pool.max").tag("app", "consumer").gauge().value());
  }
}
