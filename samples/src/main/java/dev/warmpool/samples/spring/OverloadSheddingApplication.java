package dev.warmpool.samples.spring;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A WebFlux service whose blocking work runs on a nonblocking warmpool pool from
 * {@code application.yml} ({@code warmpool.pools.reports}): when every seat is taken, a request is
 * refused at once with {@code 503 Service Unavailable} instead of queueing behind the others
 * ({@link ReportController}).
 *
 * <pre>{@code
 * ./mvnw -pl samples -am install -DskipTests
 * ./mvnw -pl samples exec:java -Dexec.mainClass=dev.warmpool.samples.spring.OverloadSheddingApplication
 * curl -i http://127.0.0.1:8080/reports/7
 * }</pre>
 */
@SpringBootApplication
public class OverloadSheddingApplication {
  public static void main(String[] args) {
    SpringApplication.run(OverloadSheddingApplication.class, args);
  }
}
