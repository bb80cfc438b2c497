package dev.warmpool.spring;

import dev.warmpool.WorkerPool;
import java.util.Map;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;

/**
 * Health, for Spring Boot 4 ({@code WarmpoolBoot3HealthAutoConfiguration} is the same for Boot 3.5,
 * whose Actuator types live in other packages; the jar carries both, each compiled against its own
 * line's Actuator, and each switches on only with its own line's types): with Actuator,
 * the {@code warmpool} health contributor has one component per {@link WorkerPool} bean, named after
 * the bean: {@code UP} while the pool runs, {@code OUT_OF_SERVICE} once it is shut down, with
 * {@code capacity}, {@code busy}, {@code waiting}, {@code rejected} and {@code expired} as details
 * ({@link PoolHealth}). {@code management.health.warmpool.enabled=false} turns it off.
 */
@AutoConfiguration(after = WarmpoolAutoConfiguration.class)
@ConditionalOnClass(name = {"org.springframework.boot.health.contributor.HealthIndicator",
    "org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator"})
@ConditionalOnBean(WorkerPool.class)
public class WarmpoolHealthAutoConfiguration {

  @Bean
  @ConditionalOnEnabledHealthIndicator(PoolHealth.NAME)
  CompositeHealthContributor warmpoolHealthContributor(Map<String, WorkerPool> pools) {
    return CompositeHealthContributor.fromMap(pools, pool -> (HealthIndicator) () -> health(pool));
  }

  private static Health health(WorkerPool pool) {
    return Health.status(PoolHealth.running(pool) ? Status.UP : Status.OUT_OF_SERVICE)
        .withDetails(PoolHealth.details(pool)).build();
  }
}
