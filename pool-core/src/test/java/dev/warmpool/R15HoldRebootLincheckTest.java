package dev.warmpool;

import java.time.Duration;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review r15, F2, under Lincheck's model checker (white-box: the window is a few instructions
 * inside {@code Admission.hold}, with no user code in it, so no latch through the public API
 * reaches it). A lane's dispatcher asks for a hold ({@code SerialLane.hold}) on a pool that
 * terminated after the call's {@code checkOpen}: {@code hold()} counts itself, reads the pool
 * terminated under the line's lock, and then takes its count back with a bare
 * {@code holds.decrementAndGet()}. If a {@code reboot()} and a {@code shutdown()} run between that
 * read and the decrement, the new generation's {@code tryTerminate} sees the count (not
 * {@code unheld()}) and does not terminate; the failed hold then gives it back without looking for
 * termination ({@code release()} would call {@code mayTerminate}), so the rebooted pool stays shut
 * down, empty and unheld, and never terminates: {@code awaitTermination} hangs. The same for each
 * shard a sharded lane's {@code hold()} tries. Found by the model checker within its first
 * invocations: failed 3/3 (and 1/1 before that, with result checking).
 */
@Tag("model-check")
@Timeout(300)
public class R15HoldRebootLincheckTest {
  private final BoundedPool pool;

  public R15HoldRebootLincheckTest() {
    pool = (BoundedPool) WorkerPool.builder().name("r15lc").capacity(1)
        .maxIdle(Duration.ofHours(1)).build();
    pool.shutdown();
    if (!pool.isTerminated()) {
      throw new AssertionError("not terminated");
    }
  }

  /** A lane's dispatcher (SerialLane.hold, then release once landed), on a maybe terminated pool. */
  @Operation
  public void hold() {
    if (pool.admission.hold()) {
      pool.admission.release();
    }
  }

  /** Another thread reboots the terminated pool and shuts it down again. */
  @Operation
  public void rebootAndShutdown() {
    try {
      pool.reboot();
    } catch (IllegalStateException notTerminated) {
      return;
    }
    pool.shutdown();
  }

  @Validate
  public void check() {
    if (pool.isShutdown() && pool.admission.unheld() && !pool.isTerminated()) {
      throw new AssertionError("shut down, empty, no hold out, and never terminates: "
          + pool.stats());
    }
  }

  @Test
  void guarantee4_aFailedHoldNeverKeepsARebootedPoolFromTerminating() {
    new ModelCheckingOptions()
        // A termination reached by a lane's release completes on ASYNC, a thread the model
        // checker cannot follow (where the stage completes is not what is checked here).
        .addGuarantee(ManagedStrategyGuaranteeKt.forClasses(Lifecycle.class.getName())
            .methods("endAsync").ignore())
        .threads(2)
        .actorsPerThread(1)
        .actorsBefore(0)
        .actorsAfter(0) // a later hold would look for termination and hide the stuck pool
        .iterations(PoolFixture.stress(1))
        .invocationsPerIteration(PoolFixture.stress(100)) // found it within its first; scale 5: 500
        .check(R15HoldRebootLincheckTest.class);
  }
}
