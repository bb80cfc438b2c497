package dev.warmpool.samples.readme;

import static dev.warmpool.samples.readme.Stubs.slowLookup;

import dev.warmpool.WorkerPool;
import dev.warmpool.reactor.PoolSchedulers;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

// The README's Spring Boot quick start (ReadmeSnippetsTest keeps them equal). Not component-scanned:
// the runnable application is dev.warmpool.samples.spring.
// snippet:spring
@RestController
class ReportController {
  private final Scheduler reports;

  ReportController(@Qualifier("reports") WorkerPool reports) {   // the bean of warmpool.pools.reports
    this.reports = PoolSchedulers.from(reports);
  }

  @GetMapping("/reports/{id}")
  Mono<String> report(@PathVariable("id") int id) {
    return Mono.fromCallable(() -> slowLookup(id)).subscribeOn(reports);
  }
}
// end:spring
