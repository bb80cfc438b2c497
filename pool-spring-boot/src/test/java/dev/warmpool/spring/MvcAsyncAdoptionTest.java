package dev.warmpool.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.jayway.jsonpath.JsonPath;
import dev.warmpool.WorkerPool;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * DESIGN section 6, adoption: "MVC async requests ... run there, within its capacity". A Spring MVC
 * application on Tomcat on a random loopback port, driven by a real HTTP client, with
 * {@code warmpool.spring.task-executor=web} on a nonblocking pool of one seat: a controller's
 * {@code Callable} runs on the pool (MVC's async support takes {@code applicationTaskExecutor}), so
 * does an {@code @Async} method whose {@code CompletableFuture} the controller returns; with the one
 * seat held, both are answered 503 with the problem body, not 500.
 */
@SpringBootTest(classes = MvcAsyncAdoptionTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "spring.main.web-application-type=servlet", "server.address=127.0.0.1",
    "warmpool.pools.web.capacity=1", "warmpool.pools.web.nonblocking=true",
    "warmpool.spring.task-executor=web"})
class MvcAsyncAdoptionTest {
  private static final HttpClient CLIENT = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(10)).build();

  // no component scan: the other tests' configurations live in this package
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @EnableAsync
  @Import(Endpoints.class)
  static class App {
    @Bean
    Seat seat() {
      return new Seat();
    }

    @Bean
    Work work() {
      return new Work();
    }
  }

  /** {@code hold} keeps its thread until {@code release} opens. */
  static class Seat {
    volatile CountDownLatch held = new CountDownLatch(1);
    volatile CountDownLatch release = new CountDownLatch(1);

    String hold() {
      held.countDown();
      Runners.block(release);
      return "held";
    }
  }

  /** An {@code @Async} method (the bean is a proxy). */
  static class Work {
    @Async
    public CompletableFuture<String> asyncThread() {
      return CompletableFuture.completedFuture(Thread.currentThread().getName());
    }
  }

  @RestController
  static class Endpoints {
    private final Seat seat;
    private final Work work;

    Endpoints(Seat seat, Work work) {
      this.seat = seat;
      this.work = work;
    }

    @GetMapping("/callable/hold")
    Callable<String> hold() {
      return seat::hold;
    }

    @GetMapping("/callable/thread")
    Callable<String> callableThread() {
      return () -> Thread.currentThread().getName();
    }

    @GetMapping("/future/thread")
    CompletableFuture<String> futureThread() {
      return work.asyncThread();
    }
  }

  @Value("${local.server.port}") int port;
  @Autowired Seat seat;
  @Autowired @Qualifier("web") WorkerPool web;

  @Test
  void adoption_mvcCallableAndAsyncFutureRunOnTheAdoptedPool() throws Exception {
    HttpResponse<String> callable = get("/callable/thread");
    assertThat(callable.statusCode()).as(callable.body()).isEqualTo(200);
    assertThat(callable.body()).startsWith("web-");
    HttpResponse<String> future = get("/future/thread");
    assertThat(future.statusCode()).as(future.body()).isEqualTo(200);
    assertThat(future.body()).startsWith("web-");
  }

  @Test
  void adoption_mvcAsyncOnAFullNonblockingPoolIs503Problem() throws Exception {
    seat.held = new CountDownLatch(1);
    seat.release = new CountDownLatch(1);
    // an earlier request's task may still be giving its seat back after its answer went out
    await().atMost(Duration.ofSeconds(10)).until(() -> web.stats().busy() == 0);
    CompletableFuture<HttpResponse<String>> holding =
        CLIENT.sendAsync(request("/callable/hold"), HttpResponse.BodyHandlers.ofString());
    try {
      assertThat(seat.held.await(20, TimeUnit.SECONDS))
          .as("the seat is held (%s)", holding.isDone() ? holding.join().body() : "").isTrue();
      assertProblem(get("/callable/thread"), "/callable/thread");
      assertProblem(get("/future/thread"), "/future/thread");
    } finally {
      seat.release.countDown();
    }
    HttpResponse<String> held = holding.get(20, TimeUnit.SECONDS);
    assertThat(held.statusCode()).isEqualTo(200);
    assertThat(held.body()).isEqualTo("held");
  }

  private static void assertProblem(HttpResponse<String> answer, String path) {
    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(503);
    assertThat(answer.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(answer.headers().firstValue("Retry-After")).hasValue("1");
    assertThat(JsonPath.<Integer>read(answer.body(), "$.status")).isEqualTo(503);
    assertThat(JsonPath.<String>read(answer.body(), "$.pool")).isEqualTo("web");
    assertThat(JsonPath.<String>read(answer.body(), "$.instance")).isEqualTo(path);
  }

  private HttpResponse<String> get(String path) throws Exception {
    return CLIENT.send(request(path), HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest request(String path) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(20)).build();
  }
}
