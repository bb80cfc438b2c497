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
 * Review r15: the hold protocol under Lincheck's model checker (white-box, as a lane's dispatcher
 * uses it: {@code hold()}, then {@code release()} once its dispatch landed) racing
 * {@code shutdown()}: a hold keeps the shut-down pool from terminating only while it is out; when
 * every call has returned, a shut-down pool with no work has terminated. Green on d81614a; with
 * {@code release()}'s look for termination removed it fails at once (checked, not committed).
 * Its reboot half fails: {@link R15HoldRebootLincheckTest} (F2).
 */
@Tag("model-check")
@Timeout(300)
public class R15HoldShutdownLincheckTest {
  private final BoundedPool pool = (BoundedPool) WorkerPool.builder().name("r15lcs").capacity(1)
      .maxIdle(Duration.ofHours(1)).build();

  /** A lane's dispatcher: hold, and give it back once landed (if the pool took it). */
  @Operation
  public void hold() {
    if (pool.admission.hold()) {
      pool.admission.release();
    }
  }

  @Operation
  public void shutdown() {
    pool.shutdown();
  }

  @Validate
  public void check() {
    if (pool.isShutdown() && !pool.isTerminated()) {
      throw new AssertionError("shut down, empty, holds " + pool.admission.unheld()
          + ", never terminates");
    }
  }

  @Test
  void guarantee4_holdsNeverKeepAShutDownPoolFromTerminating() {
    new ModelCheckingOptions()
        // A termination reached by a lane's release completes on ASYNC, a thread the model
        // checker cannot follow (where the stage completes is not what is checked here).
        .addGuarantee(ManagedStrategyGuaranteeKt.forClasses(Lifecycle.class.getName())
            .methods("endAsync").ignore())
        .threads(3)
        .actorsPerThread(1)
        .actorsBefore(0)
        .actorsAfter(0)
        .iterations(PoolFixture.stress(1))
        .invocationsPerIteration(PoolFixture.stress(200))
        .check(R15HoldShutdownLincheckTest.class);
  }
}
