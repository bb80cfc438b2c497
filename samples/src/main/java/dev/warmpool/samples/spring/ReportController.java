package dev.warmpool.samples.spring;

import dev.warmpool.WorkerPool;
import dev.warmpool.reactor.PoolSchedulers;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * {@code GET /reports/{id}}: a blocking lookup on the {@code reports} pool. The pool is nonblocking,
 * so a request that finds every seat taken is rejected by the pool at once; the starter answers that
 * rejection (Reactor's "Scheduler unavailable", caused by {@code PoolOverloadedException}) with 503,
 * {@code Retry-After} and a problem body naming the pool, with no handler here. Each 503 is one
 * {@code stats().rejected()} of the pool. The README shows this class as it is
 * ({@code ReadmeSnippetsTest}).
 */
// snippet:spring
@RestController
class ReportController {
  static final Duration LOOKUP_TIME = Duration.ofMillis(300);   // a stand-in for a slow JDBC call

  private final Scheduler reports;

  ReportController(@Qualifier("reports") WorkerPool reports) {   // the bean of warmpool.pools.reports
    this.reports = PoolSchedulers.from(reports);
  }

  @GetMapping("/reports/{id}")
  Mono<String> report(@PathVariable("id") int id) {
    return Mono.fromCallable(() -> slowLookup(id)).subscribeOn(reports);
  }

  private static String slowLookup(int id) throws InterruptedException {
    Thread.sleep(LOOKUP_TIME.toMillis());   // blocking: that is what the pool is for
    return "report " + id;
  }
}
// end:spring
