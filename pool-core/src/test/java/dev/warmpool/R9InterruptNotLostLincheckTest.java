package dev.warmpool;

import java.util.concurrent.atomic.AtomicLong;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review r9: the other half of the interrupt handshake under Lincheck's model checker, which
 * {@link InterruptHandshakeLincheckTest} does not check: an interrupt asked for while the task
 * runs is never lost (review r7, F1). The runner here is a worker, so every interrupt goes through
 * both handshakes: the envelope's ({@code cancel(true)}, a subpool's shutdownNow) and the worker's
 * shield ({@link Worker#interruptToStop}, which a pool's shutdownNow calls directly). Interrupters
 * of both kinds race each other on a task that keeps running (the runner finishing is
 * {@link InterruptHandshakeLincheckTest}'s); when they are all done, each request must have been
 * followed by an {@code interrupt()} call that began after it (a request that only joins an
 * interrupt begun before it could find that one landed and handled already).
 */
@Timeout(120)
public class R9InterruptNotLostLincheckTest {
  private final AtomicLong clock = new AtomicLong();
  /** The latest instant an interrupt() call began, and the latest a request began. */
  private final AtomicLong lastDelivery = new AtomicLong();
  private final AtomicLong lastRequest = new AtomicLong();
  private final Runner runner = new Runner();
  private final Worker worker = new Worker(null, null, null);
  private final TaskEnvelope task =
      new TaskEnvelope(null, TaskKind.RUNNABLE, (Runnable) () -> { }, TaskEnvelope.QUEUED);

  /** A runner thread that is never started: its interrupt() only records when it began. */
  private final class Runner extends Thread {
    @Override
    public void interrupt() {
      lastDelivery.accumulateAndGet(clock.incrementAndGet(), Math::max);
    }
  }

  public R9InterruptNotLostLincheckTest() {
    worker.thread = runner;
    if (!task.start(worker)) {
      throw new AssertionError("not started");
    }
  }

  private void requested() {
    lastRequest.accumulateAndGet(clock.incrementAndGet(), Math::max);
  }

  /** A handle's cancel(true), or a subpool's shutdownNow: through the envelope. */
  @Operation
  public boolean cancelTrue() {
    requested();
    return task.cancel(true);
  }

  /** A pool's shutdownNow: straight to the worker (ThreadStarter.interruptAll). */
  @Operation
  public void stopWorker() {
    requested();
    worker.interruptToStop();
  }

  @Validate
  public void check() {
    if (lastRequest.get() != 0 && lastDelivery.get() < lastRequest.get()) {
      throw new AssertionError("an interrupt asked for at " + lastRequest.get()
          + " while the task runs was never delivered (last interrupt() began at "
          + lastDelivery.get() + "); state " + task.state);
    }
  }

  @Test
  void anInterruptAskedWhileTheTaskRunsIsNeverLost() {
    new ModelCheckingOptions()
        .threads(3)
        .actorsPerThread(2)
        .actorsBefore(0)
        .actorsAfter(0) // a request after the race would deliver afresh and hide a lost one
        .iterations(PoolFixture.stress(10))
        .invocationsPerIteration(PoolFixture.stress(500))
        .check(R9InterruptNotLostLincheckTest.class);
  }
}
