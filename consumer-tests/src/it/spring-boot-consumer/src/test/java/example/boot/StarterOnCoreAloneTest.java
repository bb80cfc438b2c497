package example.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.warmpool.WorkerPool;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** A Boot application with the starter on warmpool-core alone: pools from properties, closed on exit. */
class StarterOnCoreAloneTest {
  @SpringBootApplication
  static class App {}

  @Test
  void poolsFromPropertiesWithoutAnyAdapter() throws Exception {
    assertFalse(present("reactor.core.scheduler.Schedulers"));
    assertFalse(present("io.micrometer.core.instrument.MeterRegistry"));
    WorkerPool db;
    try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
        .web(WebApplicationType.NONE)
        .properties("warmpool.pools.db.capacity=2", "warmpool.reactor.bounded-elastic=true")
        .run()) {
      db = context.getBean("db", WorkerPool.class);
      assertEquals(2, db.capacity());
      assertTrue(db.submit(() -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS)
          .startsWith("db-"));
    }
    assertTrue(db.isTerminated());
  }

  private static boolean present(String className) {
    try {
      Class.forName(className);
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }
}
