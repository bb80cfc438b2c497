package dev.warmpool.spring;

import static dev.warmpool.spring.Runners.assertRefused;
import static dev.warmpool.spring.Runners.warmpool;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * DESIGN section 6, strict binding: an unknown key inside an entry, a setting that cannot apply and
 * a {@code parent} that is no pool stop the start-up with a message naming the key and the value.
 */
class StrictBindingTest {

  @Test
  void strictBinding_anUnknownKeyInAnEntryStopsTheStartUpNamingKeyAndValue() {
    warmpool().withPropertyValues("warmpool.pools.db.capacity=4", "warmpool.pools.db.capasity=2")
        .run(context -> {
          assertRefused(context, "warmpool.pools.db.capasity");
          assertThat(rootMessage(context)).contains("'2'").contains("Unknown key")
              .contains("capacity, max-idle");
        });
  }

  @Test
  void strictBinding_anEntryWithOnlyAnUnknownKeyIsRefusedToo() {
    warmpool().withPropertyValues("warmpool.pools.db.capasity=2")
        .run(context -> assertRefused(context, "warmpool.pools.db.capasity"));
  }

  @Test
  void strictBinding_maxWaitInLineOnANonblockingPoolIsRefused() {
    warmpool().withPropertyValues("warmpool.pools.http.nonblocking=true",
        "warmpool.pools.http.max-wait-in-line=50ms").run(context -> {
          assertRefused(context, "warmpool.pools.http.max-wait-in-line");
          assertThat(rootMessage(context)).contains("'50ms'").contains("nonblocking");
        });
  }

  @Test
  void strictBinding_maxWaitingOnANonblockingPoolIsRefused() {
    warmpool().withPropertyValues("warmpool.pools.http.nonblocking=true",
        "warmpool.pools.http.max-waiting=10").run(context -> {
          assertRefused(context, "warmpool.pools.http.max-waiting");
          assertThat(rootMessage(context)).contains("'10'");
        });
  }

  @Test
  void strictBinding_aParentThatIsNoPoolIsRefused() {
    warmpool().withPropertyValues("warmpool.pools.app.capacity=4", "warmpool.pools.db.parent=nosuch",
        "warmpool.pools.db.capacity=2").run(context -> {
          assertRefused(context, "warmpool.pools.db.parent");
          assertThat(rootMessage(context)).contains("'nosuch'").contains("[app, db]");
        });
  }

  @Test
  void strictBinding_parentsThatFormACycleAreRefused() {
    warmpool().withPropertyValues("warmpool.pools.a.parent=b", "warmpool.pools.a.capacity=1",
        "warmpool.pools.b.parent=a", "warmpool.pools.b.capacity=1").run(context -> {
          assertRefused(context, ".parent");
          assertThat(rootMessage(context)).contains("cycle");
        });
  }

  @Test
  void strictBinding_threadAndDeadlineSettingsOnASubpoolAreRefused() {
    for (String setting : new String[] {"max-idle=5s", "virtual-threads=true", "max-wait-in-line=50ms"}) {
      warmpool().withPropertyValues("warmpool.pools.app.capacity=4", "warmpool.pools.db.parent=app",
          "warmpool.pools.db.capacity=2", "warmpool.pools.db." + setting)
          .run(context -> {
            assertRefused(context, "warmpool.pools.db." + setting.substring(0, setting.indexOf('=')));
            assertThat(rootMessage(context)).contains("subpool");
          });
    }
  }

  @Test
  void strictBinding_maxWaitingOnASubpoolThatInheritsNonblockingIsRefused() {
    warmpool().withPropertyValues("warmpool.pools.http.capacity=4", "warmpool.pools.http.nonblocking=true",
        "warmpool.pools.api.parent=http", "warmpool.pools.api.capacity=2",
        "warmpool.pools.api.max-waiting=5")
        .run(context -> assertRefused(context, "warmpool.pools.api.max-waiting"));
  }

  @Test
  void strictBinding_aSubpoolWithoutCapacityIsRefused() {
    warmpool().withPropertyValues("warmpool.pools.app.capacity=4", "warmpool.pools.db.parent=app")
        .run(context -> assertRefused(context, "warmpool.pools.db.capacity"));
  }

  @Test
  void strictBinding_aSubpoolsBadCapacityIsRefusedWithCoresReason() {
    warmpool().withPropertyValues("warmpool.pools.app.capacity=4", "warmpool.pools.db.parent=app",
        "warmpool.pools.db.capacity=0").run(context -> {
          assertRefused(context, "warmpool.pools.db.capacity");
          assertThat(rootMessage(context)).contains("capacity must be between 1 and 131072, was 0");
        });
  }

  @Test
  void strictBinding_controlledDelayNeedsBothKeys() {
    warmpool().withPropertyValues("warmpool.pools.db.capacity=4",
        "warmpool.pools.db.controlled-delay.target=5ms").run(context -> {
          assertRefused(context, "warmpool.pools.db.controlled-delay.target");
          assertThat(rootMessage(context)).contains("'5ms'")
              .contains("warmpool.pools.db.controlled-delay.interval is not set");
        });
  }

  @Test
  void strictBinding_aTargetNotBelowTheIntervalIsRefusedWithCoresReason() {
    warmpool().withPropertyValues("warmpool.pools.db.capacity=4",
        "warmpool.pools.db.controlled-delay.target=100ms",
        "warmpool.pools.db.controlled-delay.interval=100ms").run(context -> {
          assertRefused(context, "warmpool.pools.db.controlled-delay.target");
          assertThat(rootMessage(context)).contains("'100ms'").contains("interval");
        });
  }

  @Test
  void strictBinding_controlledDelayAndAdaptiveLifoDoNotApplyToANonblockingPoolNorASubpool() {
    for (String setting : new String[] {"controlled-delay.target=5ms",
        "controlled-delay.interval=100ms", "adaptive-lifo=true"}) {
      String key = setting.substring(0, setting.indexOf('='));
      warmpool().withPropertyValues("warmpool.pools.http.nonblocking=true",
          "warmpool.pools.http." + setting).run(context -> {
            assertRefused(context, "warmpool.pools.http." + key);
            assertThat(rootMessage(context)).contains("nonblocking");
          });
      warmpool().withPropertyValues("warmpool.pools.app.capacity=4",
          "warmpool.pools.db.parent=app", "warmpool.pools.db.capacity=2",
          "warmpool.pools.db." + setting).run(context -> {
            assertRefused(context, "warmpool.pools.db." + key);
            assertThat(rootMessage(context)).contains("subpool");
          });
    }
  }

  static String rootMessage(org.springframework.boot.test.context.assertj.AssertableApplicationContext context) {
    Throwable root = context.getStartupFailure();
    while (root.getCause() != null) {
      root = root.getCause();
    }
    return root.getMessage();
  }
}
