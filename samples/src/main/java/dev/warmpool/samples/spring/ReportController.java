package dev.warmpool.samples.spring;

import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import dev.warmpool.reactor.PoolSchedulers;
import java.time.Duration;
import java.util.Optional;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * {@code GET /reports/{id}}: a blocking lookup on the {@code reports} pool. The pool is nonblocking,
 * so a request that finds every seat taken is rejected by the pool at once; Reactor delivers the
 * rejection as {@code onError} (wrapped), and {@link #overloaded} maps it to 503 with
 * {@code Retry-After}. Each 503 is one {@code stats().rejected()} of the pool.
 */
@RestController
class ReportController {
  /** How long one report takes to build: a stand-in for a slow JDBC call. */
  static final Duration LOOKUP_TIME = Duration.ofMillis(300);

  private final Scheduler reports;

  ReportController(WorkerPool reports) {
    this.reports = PoolSchedulers.from(reports);
  }

  @GetMapping("/reports/{id}")
  Mono<String> report(@PathVariable("id") int id) {
    return Mono.fromCallable(() -> slowLookup(id)).subscribeOn(reports);
  }

  private static String slowLookup(int id) throws InterruptedException {
    Thread.sleep(LOOKUP_TIME.toMillis());
    return "report " + id;
  }

  /** A pool rejection, however Reactor wrapped it, is a 503; anything else goes on as it was. */
  @ExceptionHandler(Exception.class)
  ResponseEntity<String> overloaded(Exception failure) throws Exception {
    Optional<PoolOverloadedException> overload = PoolOverloadedException.findIn(failure);
    if (overload.isEmpty()) {
      throw failure;
    }
    return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).header("Retry-After", "1")
        .body(overload.get().getMessage());
  }
}
