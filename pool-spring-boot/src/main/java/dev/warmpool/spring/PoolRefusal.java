package dev.warmpool.spring;

import dev.warmpool.PoolClosedException;
import dev.warmpool.PoolOverloadedException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * A pool's refusal as an HTTP answer: 503, {@code Retry-After}, and an RFC 9457 problem body
 * ({@code application/problem+json}) with {@code type}, {@code title}, {@code status},
 * {@code detail} (the exception's message), {@code instance} (the request path) and {@code pool}
 * (the refusing pool's name). Shared by the WebFlux and the Spring MVC handler, so both answer
 * alike.
 *
 * <p>The body is written by hand, not through the application's JSON codecs: Boot 3.5 and 4 bring
 * different Jackson generations, and a refusal must be answered even where none is configured.
 */
final class PoolRefusal {
  static final String RETRY_AFTER_KEY = "warmpool.web.retry-after";
  static final String PROBLEM_JSON = "application/problem+json";
  static final int STATUS = 503;

  private final String retryAfterSeconds;

  PoolRefusal(Duration retryAfter) {
    if (retryAfter.isNegative()) {
      throw new InvalidConfigurationPropertyValueException(RETRY_AFTER_KEY, retryAfter,
          "Retry-After cannot be negative");
    }
    long seconds = retryAfter.getSeconds() + (retryAfter.getNano() > 0 ? 1 : 0);
    this.retryAfterSeconds = Long.toString(seconds);
  }

  /** The Retry-After header's value: whole seconds, rounded up. */
  String retryAfter() {
    return retryAfterSeconds;
  }

  /**
   * The first {@link PoolOverloadedException} or {@link PoolClosedException} in {@code failure}'s
   * cause chain (the failure itself included, suppressed exceptions too, cycles tolerated), or null
   * when the failure is not a pool's refusal (then it is left to the framework).
   */
  static @Nullable RejectedExecutionException find(@Nullable Throwable failure) {
    return find(failure, Collections.newSetFromMap(new IdentityHashMap<>()));
  }

  private static @Nullable RejectedExecutionException find(@Nullable Throwable t, Set<Throwable> seen) {
    for (; t != null && seen.add(t); t = t.getCause()) {
      if (t instanceof PoolOverloadedException || t instanceof PoolClosedException) {
        return (RejectedExecutionException) t;
      }
      for (Throwable s : t.getSuppressed()) {
        RejectedExecutionException found = find(s, seen);
        if (found != null) {
          return found;
        }
      }
    }
    return null;
  }

  /** The problem body for {@code refusal} (one {@link #find} returned) on the request {@code path}. */
  static byte[] body(RejectedExecutionException refusal, String path) {
    String pool = refusal instanceof PoolOverloadedException o ? o.poolName()
        : ((PoolClosedException) refusal).poolName();
    StringBuilder json = new StringBuilder(256).append("{\"type\":\"about:blank\"")
        .append(",\"title\":\"Service Unavailable\",\"status\":").append(STATUS)
        .append(",\"detail\":");
    string(json, refusal.getMessage());
    json.append(",\"instance\":");
    string(json, path);
    json.append(",\"pool\":");
    string(json, pool);
    return json.append('}').toString().getBytes(StandardCharsets.UTF_8);
  }

  /** A JSON string (RFC 8259 escapes), or null. */
  private static void string(StringBuilder json, @Nullable String s) {
    if (s == null) {
      json.append("null");
      return;
    }
    json.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> json.append("\\\"");
        case '\\' -> json.append("\\\\");
        case '\n' -> json.append("\\n");
        case '\r' -> json.append("\\r");
        case '\t' -> json.append("\\t");
        default -> {
          if (c < 0x20) {
            json.append(String.format("\\u%04x", (int) c));
          } else {
            json.append(c);
          }
        }
      }
    }
    json.append('"');
  }
}
