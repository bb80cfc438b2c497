package dev.warmpool;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Linearizability of the {@link IdleStack} against a sequential FILO stack ordered by last use:
 * lock-free {@code pop} racing with the locked {@code push}, {@code removeOldest} (the cleaner),
 * {@code removeOldestCount} (a shrinking resize), {@code takeAll} (shutdown) and {@code ensureLength}
 * (a growing resize). Lincheck checks it twice: by model checking (systematic interleavings of the
 * instrumented code) and by stress (real threads).
 *
 * <p>Each push stamps a fresh worker with the next tick of a counting ticker, so a worker is named by
 * its {@code lastUsed}: ids grow from bottom to top exactly as last-use times do in the pool. As in the
 * pool, the stack never holds more workers than the capacity its ring was sized for: pushes (which the
 * pool serializes anyway) check the size under a test lock, and only pushes make the stack grow.
 */
@Timeout(600) // seconds per test: a hang fails the test instead of stalling the build
@Param(name = "cutoff", gen = LongGen.class, conf = "0:7")
@Param(name = "count", gen = IntGen.class, conf = "1:3")
@Tag("model-check")
public class IdleStackLincheckTest {
  private static final int CAPACITY = 3; // a ring of 4 slots: positions wrap around quickly
  private static final int GROWN = 8;

  private final IdleStack stack = new IdleStack(CAPACITY);
  private final Object pushes = new Object();
  /** Guarded by {@code pushes}. */
  private int capacity = CAPACITY;
  /** Read only by push, under the stack's lock. */
  private long clock;
  private final Ticker ticker = () -> ++clock;

  /** Pushes a fresh worker and returns its id, or 0 if the stack is at capacity. */
  @Operation
  public long push() {
    synchronized (pushes) {
      if (stack.size() >= capacity) {
        return 0;
      }
      Worker w = new Worker(null, null, null);
      stack.push(w, ticker);
      return w.lastUsed;
    }
  }

  /** Returns the id of the popped worker, or 0 if the stack was empty. */
  @Operation
  public long pop() {
    Worker w = stack.pop();
    return w == null ? 0 : w.lastUsed;
  }

  @Operation
  public List<Long> removeOldest(@Param(name = "cutoff") long cutoff) {
    return ids(stack.removeOldest(cutoff));
  }

  @Operation
  public List<Long> removeOldestCount(@Param(name = "count") int count) {
    return ids(stack.removeOldestCount(count));
  }

  @Operation
  public List<Long> takeAll() {
    return ids(stack.takeAll());
  }

  @Operation
  public void grow() {
    synchronized (pushes) {
      stack.ensureLength(GROWN);
      capacity = GROWN;
    }
  }

  @Operation
  public int size() {
    return stack.size();
  }

  private static List<Long> ids(Worker[] workers) {
    List<Long> ids = new ArrayList<>(workers.length);
    for (Worker w : workers) {
      ids.add(w == null ? -1L : w.lastUsed); // -1: a slot that held no worker
    }
    return ids;
  }

  /**
   * Only the hot path: pushes and pops. With two operations instead of seven, nearly every scenario
   * has the shapes that break a lock-free stack (a pop preempted between reading the top and its CAS
   * while others pop and push the same slot: ABA), so model checking finds such bugs quickly.
   */
  public static class PushPop {
    private final IdleStackLincheckTest stack = new IdleStackLincheckTest();

    @Operation
    public long push() {
      return stack.push();
    }

    @Operation
    public long pop() {
      return stack.pop();
    }
  }

  /** The sequential specification: a stack of ids, bottom first. */
  public static final class Spec {
    private final ArrayDeque<Long> stack = new ArrayDeque<>();
    private int capacity = CAPACITY;
    private long clock;

    public long push() {
      if (stack.size() >= capacity) {
        return 0;
      }
      stack.addLast(++clock);
      return clock;
    }

    public long pop() {
      Long id = stack.pollLast();
      return id == null ? 0 : id;
    }

    public List<Long> removeOldest(long cutoff) {
      List<Long> out = new ArrayList<>();
      while (!stack.isEmpty() && stack.peekFirst() <= cutoff) {
        out.add(stack.pollFirst());
      }
      return out;
    }

    public List<Long> removeOldestCount(int count) {
      List<Long> out = new ArrayList<>();
      while (!stack.isEmpty() && out.size() < count) {
        out.add(stack.pollFirst());
      }
      return out;
    }

    public List<Long> takeAll() {
      return removeOldestCount(Integer.MAX_VALUE);
    }

    public void grow() {
      capacity = GROWN;
    }

    public int size() {
      return stack.size();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Spec s && capacity == s.capacity && clock == s.clock
          && List.copyOf(stack).equals(List.copyOf(s.stack));
    }

    @Override
    public int hashCode() {
      return Objects.hash(capacity, clock, List.copyOf(stack));
    }
  }

  // Budgets: each model-checking run explores short scenarios a hundred interleavings deep. Run
  // against seeded bugs in a copy of IdleStack, at twice the build's iterations (scale 2): a pop
  // not atomic with its read was found by all three checks; a CAS without the stamp (ABA) by
  // pushAndPop; removers that clear slots before their CAS by everyOperation. The build runs half
  // that (the class took 41 s of its budget on a slower machine); CI's deeper pass runs ten times
  // the build's (-Dwarmpool.stress.scale=10, see .ci/run).

  @Test
  void pushAndPopAreLinearizableUnderModelChecking() {
    new ModelCheckingOptions()
        .sequentialSpecification(Spec.class)
        .threads(3)
        .actorsPerThread(2)
        .actorsBefore(2)
        .actorsAfter(1)
        .iterations(PoolFixture.stress(10))
        .invocationsPerIteration(100)
        .check(PushPop.class);
  }

  @Test
  void everyOperationIsLinearizableUnderModelChecking() {
    new ModelCheckingOptions()
        .sequentialSpecification(Spec.class)
        .threads(3)
        .actorsPerThread(3)
        .actorsBefore(3)
        .actorsAfter(1)
        .iterations(PoolFixture.stress(5))
        .invocationsPerIteration(100)
        .check(IdleStackLincheckTest.class);
  }

  @Test
  void everyOperationIsLinearizableUnderStress() {
    new StressOptions()
        .sequentialSpecification(Spec.class)
        .threads(3)
        .actorsPerThread(4)
        .actorsBefore(3)
        .actorsAfter(2)
        .iterations(PoolFixture.stress(10))
        .invocationsPerIteration(2_000)
        .check(IdleStackLincheckTest.class);
  }
}
