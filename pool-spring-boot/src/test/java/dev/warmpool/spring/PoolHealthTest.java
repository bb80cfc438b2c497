package dev.warmpool.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.jayway.jsonpath.JsonPath;
import dev.warmpool.PoolOverloadedException;
import dev.warmpool.WorkerPool;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

/**
 * DESIGN section 6, "Health": {@code /actuator/health/warmpool} over HTTP on a real WebFlux server,
 * one component per pool bean, {@code UP} while it runs and {@code OUT_OF_SERVICE} once shut down,
 * with {@code capacity}, {@code busy}, {@code waiting}, {@code rejected} and {@code expired}.
 */
class PoolHealthTest {

  /**
   * The jar carries the contributor of both Boot lines (each compiled against its own line's
   * Actuator, as in the published jar), and on this line only this line's switches on; the other
   * line's is never loaded (its Actuator types are not there).
   */
  @Test
  void bothBootLinesContributorsAreThereAndOnlyThisLinesSwitchesOn() {
    String boot4 = "dev.warmpool.spring.WarmpoolHealthAutoConfiguration";
    String boot3 = "dev.warmpool.spring.WarmpoolBoot3HealthAutoConfiguration";
    boolean onBoot3 = SpringBootVersion.getVersion().startsWith("3.");
    for (String contributor : new String[] {boot4, boot3}) {
      assertThat(getClass().getClassLoader().getResource(contributor.replace('.', '/') + ".class"))
          .as(contributor).isNotNull();
    }
    new ApplicationContextRunner().withUserConfiguration(App.class)
        .withPropertyValues("warmpool.pools.db.capacity=2")
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.containsBean(boot4)).isEqualTo(!onBoot3);
          assertThat(context.containsBean(boot3)).isEqualTo(onBoot3);
          assertThat(context).hasBean("warmpoolHealthContributor");
        });
  }

  @Test
  void onePerPoolUpWhileRunningOutOfServiceOnceShutDownWithItsCounters() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    try (RealServer server = RealServer.webflux(App.class,
        "management.endpoints.web.exposure.include=health",
        "management.endpoint.health.show-details=always",
        "warmpool.pools.db.capacity=1", "warmpool.pools.db.max-wait-in-line=20ms",
        "warmpool.pools.db.max-waiting=1",
        "warmpool.pools.http.capacity=3", "warmpool.pools.http.nonblocking=true")) {
      WorkerPool db = server.context.getBean("db", WorkerPool.class);
      WorkerPool http = server.context.getBean("http", WorkerPool.class);
      try {
        CountDownLatch started = new CountDownLatch(1);
        db.execute(() -> {
          started.countDown();
          Runners.block(release);
        });
        started.await();
        db.enqueue(() -> {}); // waits in line, then expires
        await().atMost(Duration.ofSeconds(20)).until(() -> db.stats().expired() == 1);
        db.enqueue(() -> {}, Duration.ofDays(1)); // waits in line until the seat frees
        assertThatThrownBy(() -> db.enqueue(() -> {})).isInstanceOf(PoolOverloadedException.class);
        http.shutdown();

        HttpResponse<String> answer = server.get("/actuator/health/warmpool");
        String body = answer.body();
        assertThat(JsonPath.<String>read(body, "$.status")).as(body).isEqualTo("OUT_OF_SERVICE");
        assertThat(answer.statusCode()).isEqualTo(503);
        assertThat(JsonPath.<String>read(body, "$.components.db.status")).isEqualTo("UP");
        assertThat(JsonPath.<Object>read(body, "$.components.db.details")).isEqualTo(
            JsonPath.parse("{\"capacity\":1,\"busy\":1,\"waiting\":1,\"rejected\":1,\"expired\":1}")
                .json());
        assertThat(JsonPath.<String>read(body, "$.components.http.status"))
            .isEqualTo("OUT_OF_SERVICE");
        assertThat(JsonPath.<Integer>read(body, "$.components.http.details.capacity")).isEqualTo(3);
      } finally {
        release.countDown();
      }
      assertThat(http.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
      http.reboot();
      await().atMost(Duration.ofSeconds(20)).until(() -> db.stats().waiting() == 0);
      HttpResponse<String> answer = server.get("/actuator/health/warmpool/db");
      assertThat(JsonPath.<String>read(answer.body(), "$.status")).isEqualTo("UP");
      assertThat(server.get("/actuator/health/warmpool").statusCode()).isEqualTo(200);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class App {}
}
