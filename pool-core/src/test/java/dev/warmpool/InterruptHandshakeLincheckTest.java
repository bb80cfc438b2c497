package dev.warmpool;

import java.lang.reflect.Field;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The interrupt handshake of a running task ({@link TaskEnvelope#interrupt},
 * {@link TaskEnvelope#finish}) under Lincheck's model checker: interrupters ({@code cancel(true)})
 * on several threads, asked again while one is on its way, against the runner finishing. Every
 * interleaving ends (no interrupter and no finishing runner waits for ever), the task ends DONE,
 * and no interrupt reaches the runner after {@code finish()} returned (it would hit the thread's
 * next task). Review r8's W1 added the ENDING and ENDED states this checks too. The runner is a
 * thread that is never started: its {@code interrupt()} only records.
 */
@Timeout(120)
public class InterruptHandshakeLincheckTest {
  private final TaskEnvelope task =
      new TaskEnvelope(null, TaskKind.RUNNABLE, (Runnable) () -> { }, TaskEnvelope.QUEUED);
  private final Runner runner = new Runner();
  private volatile boolean finished;
  private int lateInterrupts;

  /** Records interrupts, and those that came after the task's finish() returned. */
  private final class Runner extends Thread {
    @Override
    public void interrupt() {
      if (finished) {
        lateInterrupts++;
      }
    }
  }

  public InterruptHandshakeLincheckTest() throws ReflectiveOperationException {
    Field f = TaskEnvelope.class.getDeclaredField("runner");
    f.setAccessible(true);
    f.set(task, runner);
    if (!task.transition(TaskEnvelope.QUEUED, TaskEnvelope.STARTED)) {
      throw new AssertionError("not started");
    }
  }

  @Operation
  public boolean cancelTrue() {
    return task.cancel(true); // a started task: interrupts, reports false
  }

  @Operation(runOnce = true)
  public void finish() {
    task.finish();
    finished = true;
  }

  @Validate
  public void check() {
    if (lateInterrupts != 0) {
      throw new AssertionError(lateInterrupts + " interrupt(s) after finish() returned");
    }
    if (finished && task.state != TaskEnvelope.DONE) {
      throw new AssertionError("finished in state " + task.state);
    }
    if (!finished && task.state != TaskEnvelope.STARTED) {
      throw new AssertionError("an interrupter left the task in state " + task.state);
    }
  }

  @Test
  void theHandshakeEndsAndNoInterruptOutlivesTheTask() {
    new ModelCheckingOptions()
        .threads(3)
        .actorsPerThread(2)
        .actorsBefore(0)
        .actorsAfter(1)
        .iterations(PoolFixture.stress(10))
        .invocationsPerIteration(PoolFixture.stress(500))
        .check(InterruptHandshakeLincheckTest.class);
  }
}
