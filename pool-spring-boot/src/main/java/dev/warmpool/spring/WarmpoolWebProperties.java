package dev.warmpool.spring;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code warmpool.web.*} properties: how a pool's refusal reaches an HTTP client.
 * <pre>{@code
 * warmpool:
 *   web:
 *     enabled: true        # PoolOverloadedException / PoolClosedException -> 503 problem details
 *     retry-after: 1s      # the Retry-After header, in whole seconds (rounded up)
 * }</pre>
 */
@ConfigurationProperties("warmpool.web")
public class WarmpoolWebProperties {
  /**
   * Whether a PoolOverloadedException or PoolClosedException that reaches WebFlux or Spring MVC
   * (also in a cause chain) becomes HTTP 503 with Retry-After and an RFC 9457 problem body. An
   * application's own exception handler wins either way.
   */
  private boolean enabled = true;

  /** The Retry-After header of a 503, in whole seconds, rounded up (>= 0). */
  private Duration retryAfter = Duration.ofSeconds(1);

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public Duration getRetryAfter() {
    return retryAfter;
  }

  public void setRetryAfter(Duration retryAfter) {
    this.retryAfter = retryAfter;
  }
}
