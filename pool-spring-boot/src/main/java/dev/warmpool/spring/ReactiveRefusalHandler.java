package dev.warmpool.spring;

import java.util.concurrent.RejectedExecutionException;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;

/**
 * WebFlux: a pool's refusal that no {@code @ExceptionHandler} took becomes a 503 problem answer
 * ({@link PoolRefusal}).
 *
 * <p>Why a {@link WebExceptionHandler} at order -2: an application's {@code @ExceptionHandler} and
 * {@code @ControllerAdvice} run inside the {@code DispatcherHandler}, before any
 * {@code WebExceptionHandler}, so they win; Boot's own error handler sits at -1 and would answer
 * 500, so this one must come before it. An application's own {@code WebExceptionHandler} ordered
 * before -2 wins too. Any other failure, or a response already committed, passes on unchanged.
 */
final class ReactiveRefusalHandler implements WebExceptionHandler, Ordered {
  static final int ORDER = -2;

  private final PoolRefusal refusal;

  ReactiveRefusalHandler(PoolRefusal refusal) {
    this.refusal = refusal;
  }

  @Override
  public Mono<Void> handle(ServerWebExchange exchange, Throwable failure) {
    RejectedExecutionException found = PoolRefusal.find(failure);
    ServerHttpResponse response = exchange.getResponse();
    if (found == null || response.isCommitted()) {
      return Mono.error(failure);
    }
    byte[] body = PoolRefusal.body(found, exchange.getRequest().getPath().value());
    response.setStatusCode(HttpStatus.SERVICE_UNAVAILABLE);
    HttpHeaders headers = response.getHeaders();
    headers.set(HttpHeaders.CONTENT_TYPE, PoolRefusal.PROBLEM_JSON);
    headers.set(HttpHeaders.RETRY_AFTER, refusal.retryAfter());
    headers.setContentLength(body.length);
    return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(body)));
  }

  @Override
  public int getOrder() {
    return ORDER;
  }
}
