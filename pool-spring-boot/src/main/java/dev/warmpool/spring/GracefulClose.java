package dev.warmpool.spring;

import dev.warmpool.WorkerPool;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * How the starter closes pools with the context, pool beans and the pools Reactor's factory made
 * alike: {@code shutdown()} (no new tasks; running and waiting tasks go on), then up to
 * {@code warmpool.shutdown.await-termination} for them to finish, then {@code shutdownNow()}, which
 * interrupts the running ones and hands back the rest (logged, never silent).
 */
final class GracefulClose {
  private static final Log log = LogFactory.getLog(GracefulClose.class);

  private GracefulClose() {}

  /**
   * Shuts every pool down first and then waits for them together, so several pools take at most
   * {@code await} in all, not {@code await} each.
   */
  static void close(Collection<WorkerPool> pools, Duration await) {
    pools.forEach(WorkerPool::shutdown);
    long deadline = System.nanoTime() + await.toNanos();
    boolean interrupted = false;
    for (WorkerPool pool : pools) {
      try {
        if (!interrupted && pool.awaitTermination(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
          continue;
        }
      } catch (InterruptedException e) {
        interrupted = true;
      }
      if (!interrupted) {
        log.warn("Pool '" + pool.name() + "' did not finish its tasks within " + await
            + " (warmpool.shutdown.await-termination); interrupting them with shutdownNow()");
      }
      List<Runnable> notRun = pool.shutdownNow();
      if (!notRun.isEmpty()) {
        log.warn("Pool '" + pool.name() + "' closed with " + notRun.size() + " task(s) not run");
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
