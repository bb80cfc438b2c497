package dev.warmpool.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.assertj.ApplicationContextAssertProvider;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The context runner every test starts from, and the check for a start-up refused over a key. */
final class Runners {
  private Runners() {}

  static ApplicationContextRunner warmpool() {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(WarmpoolAutoConfiguration.class));
  }

  /** The context failed to start, and the reason names {@code key} (and says what is wrong). */
  static void assertRefused(ApplicationContextAssertProvider<?> context, String key) {
    assertThat(context).hasFailed();
    Throwable root = context.getStartupFailure();
    while (root.getCause() != null) {
      root = root.getCause();
    }
    assertThat(root)
        .isInstanceOf(InvalidConfigurationPropertyValueException.class)
        .hasMessageContaining(key);
  }

  /** Holds a pool thread until {@code latch} opens (10 s at most). */
  static void block(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
