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
    assertThat(PoolBeanRegistrar.ENTRY_KEYS.split(", "))
        .containsExactlyInAnyOrder(keys(WarmpoolProperties.Pool.class, ""));
  }

  /** The bindable keys of a properties class: its setters, and its nested groups' (getter only). */
  private static String[] keys(Class<?> type, String prefix) throws Exception {
    java.util.List<String> keys = new java.util.ArrayList<>();
    for (PropertyDescriptor p : Introspector.getBeanInfo(type, Object.class)
        .getPropertyDescriptors()) {
      String key = prefix + p.getName().replaceAll("([A-Z])", "-$1").toLowerCase();
      if (p.getWriteMethod() != null) {
        keys.add(key);
      } else if (p.getPropertyType().getEnclosingClass() == WarmpoolProperties.class) {
        keys.addAll(Arrays.asList(keys(p.getPropertyType(), key + ".")));
      }
    }
    return keys.toArray(String[]::new);
  }
}
