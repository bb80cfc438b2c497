package dev.warmpool.spring;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Overload is 503 (DESIGN section 6): with WebFlux or Spring MVC, a {@code PoolOverloadedException}
 * or {@code PoolClosedException} that reaches the framework, directly or in a cause chain (Reactor's
 * "Scheduler unavailable"), is answered 503 with {@code Retry-After}
 * ({@code warmpool.web.retry-after}, default 1 s) and an RFC 9457 problem body, never a 500.
 * {@code warmpool.web.enabled=false} turns it off; an application's own {@code @ExceptionHandler}
 * wins ({@link ReactiveRefusalHandler}, {@link ServletRefusalResolver}).
 */
@AutoConfiguration
@EnableConfigurationProperties(WarmpoolWebProperties.class)
@ConditionalOnProperty(name = "warmpool.web.enabled", havingValue = "true", matchIfMissing = true)
public class WarmpoolWebAutoConfiguration {

  /** WebFlux. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
  @ConditionalOnClass(name = "org.springframework.web.server.WebExceptionHandler")
  static class Reactive {
    @Bean
    ReactiveRefusalHandler warmpoolRefusalHandler(WarmpoolWebProperties properties) {
      return new ReactiveRefusalHandler(new PoolRefusal(properties.getRetryAfter()));
    }
  }

  /** Spring MVC. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  @ConditionalOnClass(name = "org.springframework.web.servlet.HandlerExceptionResolver")
  static class Servlet {
    @Bean
    ServletRefusalResolver warmpoolRefusalResolver(WarmpoolWebProperties properties) {
      return new ServletRefusalResolver(new PoolRefusal(properties.getRetryAfter()));
    }
  }
}
