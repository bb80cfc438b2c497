package dev.warmpool.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.beans.Introspector;
import java.beans.PropertyDescriptor;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The generated configuration metadata lists every key, and the keys an entry of
 * {@code warmpool.pools} takes (what IDEs read from the map's value type) are the ones that strict
 * binding names when it refuses an unknown key.
 */
class ConfigurationMetadataTest {

  @Test
  void theMetadataListsEveryKey() throws Exception {
    try (InputStream metadata = getClass().getClassLoader()
        .getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
      assertThat(new String(metadata.readAllBytes(), StandardCharsets.UTF_8)).contains(
          "\"warmpool.pools\"", "java.util.Map<java.lang.String,dev.warmpool.spring.WarmpoolProperties$Pool>",
          "\"warmpool.spring.task-executor\"", "\"warmpool.spring.task-scheduler\"",
          "\"warmpool.reactor.bounded-elastic\"", "\"warmpool.rxjava.io\"",
          "\"warmpool.shutdown.await-termination\"", "\"warmpool.metrics.task-timers\"");
    }
  }

  @Test
  void theKeysOfAnEntryAreTheOnesStrictBindingNames() throws Exception {
    String[] keys = Arrays.stream(Introspector.getBeanInfo(WarmpoolProperties.Pool.class, Object.class)
            .getPropertyDescriptors())
        .filter(property -> property.getWriteMethod() != null)
        .map(PropertyDescriptor::getName)
        .map(name -> name.replaceAll("([A-Z])", "-$1").toLowerCase())
        .toArray(String[]::new);
    assertThat(PoolBeanRegistrar.ENTRY_KEYS.split(", ")).containsExactlyInAnyOrder(keys);
  }
}
