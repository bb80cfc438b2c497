package dev.warmpool.spring;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Spring MVC: a pool's refusal that no {@code @ExceptionHandler} took becomes a 503 problem answer
 * ({@link PoolRefusal}).
 *
 * <p>Why a {@link HandlerExceptionResolver} of lowest precedence: the {@code DispatcherServlet}
 * asks its resolvers in order, and the one that runs an application's {@code @ExceptionHandler}
 * and {@code @ControllerAdvice} methods (and Spring's own for its exceptions) comes first, so they
 * win; only what they leave would otherwise reach the container's error page as a 500. An
 * asynchronous request (a {@code Mono}, a {@code CompletableFuture}) that fails is resolved the
 * same way. Any other failure, or a response already committed, passes on unchanged.
 */
final class ServletRefusalResolver implements HandlerExceptionResolver, Ordered {
  private final PoolRefusal refusal;

  ServletRefusalResolver(PoolRefusal refusal) {
    this.refusal = refusal;
  }

  @Override
  public @Nullable ModelAndView resolveException(HttpServletRequest request,
      HttpServletResponse response, @Nullable Object handler, Exception failure) {
    RejectedExecutionException found = PoolRefusal.find(failure);
    if (found == null || response.isCommitted()) {
      return null;
    }
    byte[] body = PoolRefusal.body(found, request.getRequestURI());
    response.resetBuffer();
    response.setStatus(PoolRefusal.STATUS);
    response.setHeader(HttpHeaders.RETRY_AFTER, refusal.retryAfter());
    response.setContentType(PoolRefusal.PROBLEM_JSON);
    response.setContentLength(body.length);
    try {
      response.getOutputStream().write(body);
      response.flushBuffer();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new ModelAndView();
  }

  @Override
  public int getOrder() {
    return Ordered.LOWEST_PRECEDENCE;
  }
}
