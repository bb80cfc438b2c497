package dev.warmpool.samples.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.warmpool.WorkerPool;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.boot.web.server.context.WebServerApplicationContext;

/**
 * The sample on a real Netty server on a random loopback port: a burst larger than the pool is
 * partly served and partly shed as 503 (the starter's problem answer), one 503 per pool rejection;
 * {@code @Async} and {@code @Scheduled} run on the adopted pool {@code jobs}; the pool closes with
 * the context, after the request in flight.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class OverloadSheddingApplicationTest {
  static final int BURST = 40;

  @LocalServerPort
  int port;

  @Autowired
  WorkerPool reports;

  @Autowired
  ReportJobs jobs;

  @Test
  void aBurstBeyondCapacityIsShedAs503OnePerPoolRejection() {
    assertThat(reports.name()).isEqualTo("reports");
    assertThat(reports.capacity()).isEqualTo(4);
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();
    List<CompletableFuture<HttpResponse<String>>> burst = new ArrayList<>();
    for (int i = 0; i < BURST; i++) {
      HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/reports/" + i))
          .timeout(Duration.ofSeconds(30)).build();
      burst.add(client.sendAsync(request, HttpResponse.BodyHandlers.ofString()));
    }
    int ok = 0;
    int shed = 0;
    String oneShed = "";
    for (CompletableFuture<HttpResponse<String>> response : burst) {
      HttpResponse<String> r = response.join();
      if (r.statusCode() == 200) {
        assertThat(r.body()).startsWith("report ");
        ok++;
      } else {
        // the starter's answer: the sample has no handler of its own
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(r.body()).contains("\"status\":503", "\"pool\":\"reports\"");
        oneShed = r.body();
        shed++;
      }
    }
    System.out.printf("sample overload: offered=%d ok=%d shed(503)=%d pool %s%n  a 503: %s%n", BURST,
        ok, shed, reports.stats(), oneShed);

    assertThat(ok + shed).isEqualTo(BURST);
    assertThat(ok).isGreaterThanOrEqualTo(reports.capacity());
    assertThat(shed).isPositive().isEqualTo(reports.stats().rejected());
    assertThat(reports.stats().completed()).isEqualTo(ok);
  }

  @Test
  void asyncAndScheduledRunOnTheAdoptedPoolJobs() throws Exception {
    assertThat(jobs.archive(7).get(10, TimeUnit.SECONDS)).startsWith("archived 7 on jobs-");
    assertThat(jobs.firstSweepThread()).startsWith("jobs-");
  }

  @Test
  void aRequestInFlightWhenTheContextClosesCompletesAndThenThePoolTerminates() throws Exception {
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(OverloadSheddingApplication.class)
        .properties("server.port=0").run()) {
      WorkerPool pool = app.getBean("reports", WorkerPool.class);
      int appPort = ((WebServerApplicationContext) app).getWebServer().getPort();
      CompletableFuture<HttpResponse<String>> inFlight = HttpClient.newHttpClient().sendAsync(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + appPort + "/reports/1")).build(),
          HttpResponse.BodyHandlers.ofString());
      await().atMost(Duration.ofSeconds(10)).until(() -> pool.stats().busy() == 1);
      app.close();
      assertThat(inFlight.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
      assertThat(pool.isTerminated()).isTrue();
      assertThat(pool.stats().completed()).isEqualTo(1);
    }
  }
}
