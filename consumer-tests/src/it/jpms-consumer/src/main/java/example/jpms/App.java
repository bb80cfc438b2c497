package example.jpms;

import dev.warmpool.WorkerPool;
import dev.warmpool.micrometer.WorkerPoolMetrics;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.TimeUnit;

/** Runs one task on a pool from a named module; exits non-zero if anything is off. */
public final class App {
  public static void main(String[] args) throws Exception {
    if (!WorkerPool.class.getModule().isNamed() || !"dev.warmpool.core".equals(WorkerPool.class.getModule().getName())) {
      throw new AssertionError("warmpool-core is not the module dev.warmpool.core: " + WorkerPool.class.getModule());
    }
    WorkerPool pool = WorkerPool.builder().name("jpms").capacity(1).build();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new WorkerPoolMetrics(pool, Tags.empty()).bindTo(registry);
    String worker = pool.submit(() -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS);
    pool.shutdown();
    if (!pool.awaitTermination(10, TimeUnit.SECONDS) || !worker.equals("jpms-1")) {
      throw new AssertionError("unexpected worker " + worker);
    }
    System.out.println("jpms consumer ran on " + worker + " in module " + WorkerPool.class.getModule().getName()
        + "; executor.completed=" + registry.get("executor.completed").functionCounter().count());
  }
}
