package dev.warmpool.spring;

import dev.warmpool.PoolStats;
import dev.warmpool.WorkerPool;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the {@code warmpool} health contributor says about one pool, apart from the Boot line's
 * health types (they moved package between Boot 3.5 and 4; {@code WarmpoolHealthAutoConfiguration}
 * is written once per line around this): {@code UP} while the pool runs, {@code OUT_OF_SERVICE}
 * once it is shut down, and its {@code capacity}, {@code busy}, {@code waiting}, {@code rejected}
 * and {@code expired} from one {@link PoolStats} snapshot.
 */
final class PoolHealth {
  static final String NAME = "warmpool";

  private PoolHealth() {}

  /** Whether the pool still takes work; false from {@code shutdown()} on. */
  static boolean running(WorkerPool pool) {
    return !pool.isShutdown();
  }

  static Map<String, Object> details(WorkerPool pool) {
    PoolStats stats = pool.stats();
    Map<String, Object> details = new LinkedHashMap<>();
    details.put("capacity", stats.capacity());
    details.put("busy", stats.busy());
    details.put("waiting", stats.waiting());
    details.put("rejected", stats.rejected());
    details.put("expired", stats.expired());
    return details;
  }
}
