package dev.warmpool.spring;

import static dev.warmpool.spring.Runners.warmpool;
import static org.assertj.core.api.Assertions.assertThat;

import dev.warmpool.WorkerPool;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.FilteredClassLoader;

/** The starter needs only warmpool-core; generated metadata lists the keys. */
class OptionalDependenciesTest {

  @Test
  void withCoreAloneThePoolsStartAndTheAdapterKeysAreIgnored() {
    warmpool().withClassLoader(new FilteredClassLoader("reactor", "io.reactivex", "io.micrometer",
            "dev.warmpool.reactor", "dev.warmpool.rxjava3", "dev.warmpool.micrometer"))
        .withPropertyValues("warmpool.pools.db.capacity=3", "warmpool.reactor.bounded-elastic=true",
            "warmpool.rxjava.io=db")
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean("db", WorkerPool.class).capacity()).isEqualTo(3);
          assertThat(context).doesNotHaveBean(ReactorBoundedElastic.class);
          assertThat(context).doesNotHaveBean(RxJavaIo.class);
          assertThat(context).doesNotHaveBean(PoolMetricsBinder.class);
        });
  }

  @Test
  void theAutoConfigurationIsRegisteredAndTheMetadataListsTheKeys() throws Exception {
    ClassLoader loader = getClass().getClassLoader();
    try (InputStream imports = loader.getResourceAsStream(
        "META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports");
        InputStream metadata = loader.getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
      assertThat(new String(imports.readAllBytes(), StandardCharsets.UTF_8))
          .contains(WarmpoolAutoConfiguration.class.getName());
      assertThat(new String(metadata.readAllBytes(), StandardCharsets.UTF_8))
          .contains("\"warmpool.pools\"", "\"warmpool.reactor.bounded-elastic\"",
              "\"warmpool.rxjava.io\"", "\"warmpool.shutdown.await-termination\"");
    }
  }
}
