package example.boot35;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.warmpool.WorkerPool;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A Spring Boot 3.5 application on Tomcat, on a random loopback port, with the starter's published
 * jar: {@code /actuator/health/warmpool} has the pool's component, UP while it runs and
 * OUT_OF_SERVICE once it is shut down.
 */
class Boot35HealthTest {
  @SpringBootApplication
  static class App {}

  @Test
  void theWarmpoolHealthComponentOnBoot35() throws Exception {
    assertTrue(SpringBootVersion.getVersion().startsWith("3.5."), SpringBootVersion.getVersion());
    try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
        .web(WebApplicationType.SERVLET)
        .properties("server.port=0", "server.address=127.0.0.1", "spring.main.banner-mode=off",
            "warmpool.pools.db.capacity=2", "management.endpoint.health.show-details=always")
        .run()) {
      String base = "http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port");
      HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
      HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/actuator/health/warmpool"))
          .timeout(Duration.ofSeconds(20)).build();

      HttpResponse<String> up = client.send(request, HttpResponse.BodyHandlers.ofString());
      assertEquals(200, up.statusCode(), up.body());
      String body = up.body().replace(" ", "");
      assertTrue(body.startsWith("{\"status\":\"UP\""), body);
      assertTrue(body.contains("\"db\":{\"status\":\"UP\",\"details\":{\"capacity\":2,"), body);

      context.getBean("db", WorkerPool.class).shutdown();
      HttpResponse<String> out = client.send(request, HttpResponse.BodyHandlers.ofString());
      assertEquals(503, out.statusCode(), out.body());
      assertTrue(out.body().replace(" ", "").contains("\"db\":{\"status\":\"OUT_OF_SERVICE\""),
          out.body());
    }
  }
}
