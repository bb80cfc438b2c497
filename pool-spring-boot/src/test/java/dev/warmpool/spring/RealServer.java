package dev.warmpool.spring;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.DefaultResourceLoader;

/**
 * A real application on a random loopback port, driven by {@link HttpClient}: WebFlux on Reactor
 * Netty, or Spring MVC on Tomcat. Tomcat is hidden from a WebFlux application (both are on the test
 * class path, and Boot 3.5 would prefer Tomcat for WebFlux too).
 */
final class RealServer implements AutoCloseable {
  private static final HttpClient CLIENT = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(10)).build();

  final ConfigurableApplicationContext context;
  private final String base;

  private RealServer(ConfigurableApplicationContext context) {
    this.context = context;
    this.base = "http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port");
  }

  static RealServer webflux(Class<?> application, String... properties) {
    return start(application, WebApplicationType.REACTIVE,
        new FilteredClassLoader("org.apache.catalina", "org.apache.tomcat"), properties);
  }

  static RealServer mvc(Class<?> application, String... properties) {
    return start(application, WebApplicationType.SERVLET,
        RealServer.class.getClassLoader(), properties);
  }

  private static RealServer start(Class<?> application, WebApplicationType type,
      ClassLoader classLoader, String... properties) {
    List<String> all = new ArrayList<>(List.of("server.port=0", "server.address=127.0.0.1",
        "spring.main.banner-mode=off", "spring.jmx.enabled=false"));
    all.addAll(List.of(properties));
    return new RealServer(new SpringApplicationBuilder(application).web(type)
        .resourceLoader(new DefaultResourceLoader(classLoader))
        .properties(all.toArray(String[]::new)).run());
  }

  HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return CLIENT.send(request(path), HttpResponse.BodyHandlers.ofString());
  }

  CompletableFuture<HttpResponse<String>> getLater(String path) {
    return CLIENT.sendAsync(request(path), HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest request(String path) {
    return HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(20)).build();
  }

  @Override
  public void close() {
    context.close();
  }
}
