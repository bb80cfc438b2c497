package dev.warmpool.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import dev.warmpool.WorkerPool;
import dev.warmpool.reactor.PoolSchedulers;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * DESIGN section 6, "Overload is 503": a real server on a loopback port, a real HTTP client, and a
 * real overload (a nonblocking pool of capacity 1 whose one seat a request holds on a latch).
 */
class OverloadIs503Test {
  private static final String[] POOLS = {"warmpool.pools.http.capacity=1",
      "warmpool.pools.http.nonblocking=true", "warmpool.pools.closed.capacity=1"};

  @Test
  void webfluxOverloadIs503ProblemWithRetryAfterAlsoThroughReactorsSchedulerUnavailable()
      throws Exception {
    try (RealServer server = RealServer.webflux(App.class, with("warmpool.web.retry-after=1500ms"))) {
      whileTheOneSeatIsHeld(server, () -> {
        // Reactor's "Scheduler unavailable", caused by PoolOverloadedException
        assertProblem(server.get("/mono"), "/mono", "http", "2");
        // thrown by the handler itself
        assertProblem(server.get("/execute"), "/execute", "http", "2");
      });
      server.context.getBean("closed", WorkerPool.class).shutdown();
      HttpResponse<String> closed = server.get("/closed");
      assertProblem(closed, "/closed", "closed", "2");
      assertThat(JsonPath.<String>read(closed.body(), "$.detail")).contains("shut down");
    }
  }

  @Test
  void mvcOverloadIs503ProblemWithRetryAfterDirectAndAsync() throws Exception {
    try (RealServer server = RealServer.mvc(App.class, POOLS)) {
      whileTheOneSeatIsHeld(server, () -> {
        assertProblem(server.get("/execute"), "/execute", "http", "1");
        assertProblem(server.get("/mono"), "/mono", "http", "1");
      });
    }
  }

  @Test
  void webfluxTheApplicationsOwnHandlersWin() throws Exception {
    try (RealServer server = RealServer.webflux(App.class, POOLS)) {
      whileTheOneSeatIsHeld(server, () -> {
        assertThat(server.get("/own/mono").statusCode()).isEqualTo(429);
        assertThat(server.get("/advised/mono").statusCode()).isEqualTo(418);
        assertThat(server.get("/mono").statusCode()).isEqualTo(503);
      });
    }
  }

  @Test
  void mvcTheApplicationsOwnHandlersWin() throws Exception {
    try (RealServer server = RealServer.mvc(App.class, POOLS)) {
      whileTheOneSeatIsHeld(server, () -> {
        assertThat(server.get("/own/mono").statusCode()).isEqualTo(429);
        assertThat(server.get("/advised/mono").statusCode()).isEqualTo(418);
        assertThat(server.get("/execute").statusCode()).isEqualTo(503);
      });
    }
  }

  @Test
  void webEnabledFalseLeavesTheFailureToTheFramework() throws Exception {
    try (RealServer server = RealServer.webflux(App.class, with("warmpool.web.enabled=false"))) {
      whileTheOneSeatIsHeld(server, () -> {
        HttpResponse<String> answer = server.get("/mono");
        assertThat(answer.statusCode()).isEqualTo(500);
        assertThat(answer.headers().firstValue("Retry-After")).isEmpty();
      });
    }
  }

  // ---------------------------------------------------------------------------------------------

  private static String[] with(String property) {
    String[] all = java.util.Arrays.copyOf(POOLS, POOLS.length + 1);
    all[POOLS.length] = property;
    return all;
  }

  interface Requests {
    void run() throws Exception;
  }

  /** Holds the pool "http"'s one seat with a request, runs {@code requests}, then frees it. */
  private static void whileTheOneSeatIsHeld(RealServer server, Requests requests) throws Exception {
    Holder holder = server.context.getBean(Holder.class);
    holder.reset();
    CompletableFuture<HttpResponse<String>> holding = server.getLater("/hold");
    try {
      assertThat(holder.held.await(20, TimeUnit.SECONDS)).as("the seat is held").isTrue();
      requests.run();
    } finally {
      holder.release.countDown();
    }
    HttpResponse<String> held = holding.get(20, TimeUnit.SECONDS);
    assertThat(held.statusCode()).isEqualTo(200);
    assertThat(held.body()).isEqualTo("held");
  }

  private static void assertProblem(HttpResponse<String> answer, String path, String pool,
      String retryAfter) {
    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(503);
    assertThat(answer.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(answer.headers().firstValue("Retry-After")).hasValue(retryAfter);
    String body = answer.body();
    assertThat(JsonPath.<Integer>read(body, "$.status")).isEqualTo(503);
    assertThat(JsonPath.<String>read(body, "$.title")).isEqualTo("Service Unavailable");
    assertThat(JsonPath.<String>read(body, "$.pool")).isEqualTo(pool);
    assertThat(JsonPath.<String>read(body, "$.instance")).isEqualTo(path);
    assertThat(JsonPath.<String>read(body, "$.detail")).contains("pool \"" + pool + "\"");
  }

  /** The latches of the request that holds the seat; fresh for each test. */
  static final class Holder {
    volatile CountDownLatch held = new CountDownLatch(1);
    volatile CountDownLatch release = new CountDownLatch(1);

    void reset() {
      held = new CountDownLatch(1);
      release = new CountDownLatch(1);
    }

    String hold() {
      held.countDown();
      Runners.block(release);
      return "held";
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  @Import({Endpoints.class, OwnHandlerEndpoints.class, AdvisedEndpoints.class, Advice.class})
  static class App {
    @Bean
    Holder holder() {
      return new Holder();
    }

    @Bean
    Scheduler httpScheduler(@Qualifier("http") WorkerPool http) {
      return PoolSchedulers.from(http);
    }
  }

  @RestController
  static class Endpoints {
    private final Holder holder;
    private final WorkerPool http;
    private final WorkerPool closed;
    private final Scheduler scheduler;

    Endpoints(Holder holder, @Qualifier("http") WorkerPool http,
        @Qualifier("closed") WorkerPool closed, Scheduler scheduler) {
      this.holder = holder;
      this.http = http;
      this.closed = closed;
      this.scheduler = scheduler;
    }

    @GetMapping("/hold")
    Mono<String> hold() {
      return Mono.fromCallable(holder::hold).subscribeOn(scheduler);
    }

    @GetMapping("/mono")
    Mono<String> mono() {
      return Mono.fromCallable(() -> "ran").subscribeOn(scheduler);
    }

    @GetMapping("/execute")
    String execute() {
      http.execute(() -> {});
      return "ran";
    }

    @GetMapping("/closed")
    String closed() {
      closed.execute(() -> {});
      return "ran";
    }
  }

  /** A controller with its own {@code @ExceptionHandler} for rejections. */
  @RestController
  static class OwnHandlerEndpoints {
    private final Scheduler scheduler;

    OwnHandlerEndpoints(Scheduler scheduler) {
      this.scheduler = scheduler;
    }

    @GetMapping("/own/mono")
    Mono<String> mono() {
      return Mono.fromCallable(() -> "ran").subscribeOn(scheduler);
    }

    @ExceptionHandler(RejectedExecutionException.class)
    ResponseEntity<String> tooMany(RejectedExecutionException e) {
      return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS).body("own handler");
    }
  }

  @RestController
  static class AdvisedEndpoints {
    private final Scheduler scheduler;

    AdvisedEndpoints(Scheduler scheduler) {
      this.scheduler = scheduler;
    }

    @GetMapping("/advised/mono")
    Mono<String> mono() {
      return Mono.fromCallable(() -> "ran").subscribeOn(scheduler);
    }
  }

  /** The application's own advice, for {@link AdvisedEndpoints} only. */
  @RestControllerAdvice(assignableTypes = AdvisedEndpoints.class)
  static class Advice {
    @ExceptionHandler(RejectedExecutionException.class)
    ResponseEntity<String> teapot(RejectedExecutionException e) {
      return ResponseEntity.status(HttpStatus.I_AM_A_TEAPOT).body("advice");
    }
  }
}
