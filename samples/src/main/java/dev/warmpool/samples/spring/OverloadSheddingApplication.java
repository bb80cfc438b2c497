package dev.warmpool.samples.spring;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * A WebFlux service whose blocking work runs on a nonblocking warmpool pool from
 * {@code application.yml} ({@code warmpool.pools.reports}): when every seat is taken, a request is
 * refused at once with {@code 503 Service Unavailable} (the starter's problem answer) instead of
 * queueing behind the others ({@link ReportController}). Spring's own executors are adopted onto the
 * pool {@code jobs}: {@code @Async} and {@code @Scheduled} run there ({@link ReportJobs}).
 *
 * <pre>{@code
 * ./mvnw -pl samples -am install -DskipTests
 * ./mvnw -pl samples exec:java -Dexec.mainClass=dev.warmpool.samples.spring.OverloadSheddingApplication
 * curl -i http://127.0.0.1:8080/reports/7
 * }</pre>
 */
// snippet:app
@SpringBootApplication
@EnableAsync
@EnableScheduling
public class OverloadSheddingApplication {
  public static void main(String[] args) {
    SpringApplication.run(OverloadSheddingApplication.class, args);
  }
}
// end:app
