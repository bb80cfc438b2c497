package dev.warmpool.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

/** Which web stack gets the 503 handler, and the start-up check of {@code warmpool.web.retry-after}. */
class WebRefusalConfigurationTest {
  private final ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(WarmpoolWebAutoConfiguration.class));
  private final WebApplicationContextRunner servlet = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(WarmpoolWebAutoConfiguration.class));

  @Test
  void eachWebStackGetsItsHandlerAndANonWebContextNone() {
    reactive.run(context -> assertThat(context).hasSingleBean(ReactiveRefusalHandler.class)
        .doesNotHaveBean(ServletRefusalResolver.class));
    servlet.run(context -> assertThat(context).hasSingleBean(ServletRefusalResolver.class)
        .doesNotHaveBean(ReactiveRefusalHandler.class));
    Runners.warmpool().withConfiguration(AutoConfigurations.of(WarmpoolWebAutoConfiguration.class))
        .run(context -> assertThat(context).doesNotHaveBean(ReactiveRefusalHandler.class)
            .doesNotHaveBean(ServletRefusalResolver.class));
  }

  @Test
  void enabledFalseTurnsItOff() {
    reactive.withPropertyValues("warmpool.web.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(ReactiveRefusalHandler.class));
    servlet.withPropertyValues("warmpool.web.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(ServletRefusalResolver.class));
  }

  @Test
  void aNegativeRetryAfterStopsTheStartUpNamingTheKey() {
    reactive.withPropertyValues("warmpool.web.retry-after=-1s")
        .run(context -> Runners.assertRefused(context, "warmpool.web.retry-after"));
  }
}
