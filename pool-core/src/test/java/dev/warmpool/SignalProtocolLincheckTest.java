package dev.warmpool;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Model check of the wake-up protocol of {@link BoundedPool} ("signal only when needed", DESIGN.md
 * section 7): the queue and spinner-count publish/check pairs lose no wake-up, and the seat count
 * never exceeds the capacity.
 *
 * <h2>What is modelled</h2>
 * Real worker threads park and cannot run under Lincheck, {@code BoundedPool.signalWork} starts
 * threads through a {@link ThreadStarter} and schedules the {@link Cleaner} on the shared timer
 * thread, and {@code parkIdle} ends in a park; so the pool's methods cannot be called directly.
 * {@link Model} instead drives the <em>real</em> {@link RunState}, {@link RunQueue}, {@link IdleStack}
 * and {@link Worker} objects (its constructor, its {@code spinner} and {@code holdsSeat} flags, and
 * the worker itself as the {@link TaskSlot} the queue polls into), plus an {@link AtomicInteger}
 * spinner count, and transcribes each protocol method step for step, citing the method it mirrors:
 * {@code dispatch}/{@code place}, {@code signalWork}, {@code tryStartSpinning}, {@code stopSpinning},
 * {@code foundWork}, {@code finishTask}/{@code giveBackSeat}, {@code parkIdle} (BoundedPool);
 * {@code findTask}, {@code takeFrom}, {@code dropSpinner}, {@code wake}/{@code awaitSignal} (Worker);
 * {@code tryReserve} (ThreadStarter). Left out, because they are off in a running pool that is not
 * resized: the waiting line (blocking mode), shutdown ({@code mayExitIdle}, {@code retireAllIdle}),
 * shrinking ({@code trimSurplus}, surplus exit), expiry and worker exit (so the third pair of the
 * class notes, slot release / queue check in {@code workerExited}, is not covered), failed thread
 * starts and starts off the timer thread ({@code mayStartHere} is true). Worker slots are capped at
 * the capacity as in {@code ThreadStarter.tryReserve}; workers never exit, so slot n is worker n.
 *
 * <p>Operations, each finishing in a bounded number of steps:
 * <ul>
 *   <li>{@link Model#submit}: {@code dispatch} (take a seat; nonblocking, so no line) then
 *       {@code place} (start a worker with the task as its first if nobody spins, nobody is idle and
 *       a slot is free; else queue it and {@code signalWork}).</li>
 *   <li>{@link Model#worker0}, {@link Model#worker1}: one step of that worker, each in its own
 *       non-parallel group so that one Lincheck thread drives each worker, as its own thread would.
 *       A step runs the first task the worker was started with, or does half a turn of
 *       {@code findTask}: first the look at the queue ({@code takeFrom}); in the next step the rest:
 *       spin if a spinner or {@code tryStartSpinning} (one poll stands for the spin loop; a poll
 *       that sees nothing also covers zero spins), {@code dropSpinner} and re-check the queue
 *       ({@code continue}: the next step starts at the top), else {@code parkIdle}: push on the idle
 *       stack, re-check the queue, wait. Splitting the turn after the look is sound (a thread may be
 *       preempted there for any time) and lets a scenario's init part put a worker just past it.
 *       Parking is a flag: later steps do nothing until a waker popped the worker and set its
 *       {@code woken} flag ({@code Worker.wake}); then it resumes as a spinner ({@code findTask} on
 *       WAKE). A task taken runs at once and gives its seat back ({@code finishTask}).</li>
 * </ul>
 * {@link Model#check} (@Validate, at quiescence) asserts: seats never exceeded the capacity; every
 * seat is a queued task or a worker's {@code holdsSeat}; the spinner count equals the workers counted
 * in it (spinners plus woken workers, whose waker took the count for them); the idle stack holds
 * exactly the parked, unwoken workers; and <b>no lost wake-up</b>: if a task is queued, some started
 * worker is not parked or was woken, so someone will look at the queue. Every operation returns
 * nothing, so any sequential order explains the results: the invariants are what is checked.
 *
 * <p>Random scenarios find little here: a later submission repairs an earlier lost wake-up, and the
 * bad windows need several context switches. So the teeth are custom scenarios of the racy shapes,
 * with a pool of capacity 1 ({@link OneWorker}) where each window needs only two or three switches.
 *
 * <h2>Mutation check</h2>
 * Each edit below, made temporarily to the model, made {@code oneWorkerLosesNoWakeUp} fail within
 * about 3 s with "LOST WAKE-UP ... seats=1 queued=1 spinning=0 idle=1, worker0 parked":
 * <ul>
 *   <li>no re-check of the queue after the push in {@code parkIdle}: the worker spun, dropped its
 *       count, re-read an empty queue and is inside {@code idle.push}; the submitter sees spinning 0
 *       and no idle worker, finds no free slot, offers, and in {@code signalWork} takes the count,
 *       pops nothing (the push has not landed), fails {@code tryReserve}, gives the count back and
 *       sees the stack empty; the push lands and the worker parks for good. Also found by the
 *       capacity-2 shapes and the random OneSpinner and TwoSpinners runs;</li>
 *   <li>{@code place} reading the spinner count before publishing (read spinning, offer, signal only
 *       if it was 0): the worker takes the count, the submitter reads 1 and will not signal, then the
 *       worker polls, drops the count, re-reads the queue and parks before the offer lands. Also
 *       found by the capacity-2 shapes; not by random scenarios;</li>
 *   <li>{@code signalWork} returning after giving the count back, without re-reading the idle stack:
 *       the submitter holds the count and popped nothing; the worker fails {@code tryStartSpinning}
 *       (count 1 = MAX_SPINNERS), pushes, re-checks the queue and calls {@code signalWork}, which sees
 *       the count held and returns; the submitter fails {@code tryReserve} and gives the count back.
 *       The capacity-2 shape (two workers parking in the window) found it only with 5,000
 *       invocations, not within this class's budget.</li>
 * </ul>
 * Removing only the re-check after {@code dropSpinner} in {@code findTask} is not a lost wake-up (the
 * {@code parkIdle} re-check covers the window, at the cost of a park) and passed; removing both failed.
 */
@Timeout(300) // seconds: a hang fails the test instead of stalling the build
@Tag("model-check")
public class SignalProtocolLincheckTest {
  /** Worker operations in the model: worker0 and worker1; a pool of capacity 1 uses one. */
  static final int WORKERS = 2;
  private static final Runnable TASK = () -> { };

  /** The protocol state of one pool, driven by submitters and two workers. */
  public abstract static class Model {
    final int capacity;
    final RunState state = new RunState();
    final RunQueue runQueue;
    final IdleStack idle;
    /** {@code BoundedPool.spinning}. */
    final AtomicInteger spinning = new AtomicInteger();
    /** {@code ThreadStarter.slots}: worker slots reserved. */
    final AtomicInteger slots = new AtomicInteger();
    /** The worker in each slot, published by its starter ({@code Thread.start}). */
    final Worker[] workers = new Worker[WORKERS];
    /** Per slot, 1 while the worker is in {@code awaitSignal} (pushed and waiting). */
    final AtomicIntegerArray parked = new AtomicIntegerArray(WORKERS);
    /** Per slot, 1 between a worker's failed look at the queue and the rest of its turn. */
    final AtomicIntegerArray looked = new AtomicIntegerArray(WORKERS);
    /** Per slot, {@code Worker.signal == WAKE}: written by the worker's owner after its pop. */
    final AtomicIntegerArray woken = new AtomicIntegerArray(WORKERS);
    final AtomicInteger maxSeats = new AtomicInteger();
    private final int maxSpinners;
    private final Ticker ticker = () -> 0L;

    /**
     * @param warm whether to start from a pool whose workers have all started: {@code capacity}
     *     tasks submitted (each starting a worker with it) and run, so every worker is looking
     */
    Model(int capacity, int maxSpinners, boolean warm) {
      this.capacity = capacity;
      this.maxSpinners = maxSpinners;
      this.runQueue = new RunQueue(capacity);
      this.idle = new IdleStack(capacity);
      if (warm) {
        for (int i = 0; i < capacity; i++) {
          submit();
        }
        for (int i = 0; i < capacity; i++) {
          step(i); // each runs its first task and is back at the top of findTask
        }
      }
    }

    // ---------------------------------------------------------------------------------------------
    // Submission

    /** {@code BoundedPool.dispatch} with mode EXECUTE in nonblocking mode and an empty line. */
    @Operation
    public void submit() {
      if (state.tryTakeSeat(capacity, false)) {
        maxSeats.accumulateAndGet(state.seats(), Math::max);
        place();
      }
      // else: rejected (overloaded); nothing else happens on this path
    }

    /** {@code BoundedPool.place}: start a worker with the task, or queue it and signal. */
    private void place() {
      if (spinning.get() == 0 && idle.size() == 0) { // && ThreadStarter.mayStartHere()
        int slot = tryReserve();
        if (slot >= 0) {
          start(slot, new Worker(null, TaskKind.RUNNABLE, TASK)); // starter.start succeeds
          return; // cleaner.update(): not modelled
        }
      }
      runQueue.offer(TaskKind.RUNNABLE, TASK);
      signalWork();
    }

    /** {@code ThreadStarter.tryReserve(capacity)}, returning the slot reserved or -1. */
    private int tryReserve() {
      for (int n = slots.get(); n < capacity; n = slots.get()) {
        if (slots.compareAndSet(n, n + 1)) {
          return n;
        }
      }
      return -1;
    }

    /** {@code ThreadStarter.start}: the thread starts; its run() reads the worker after this. */
    private void start(int slot, Worker w) {
      synchronized (workers) { // the happens-before of Thread.start
        workers[slot] = w;
      }
    }

    // ---------------------------------------------------------------------------------------------
    // Wake-up protocol

    /** {@code BoundedPool.signalWork}. */
    void signalWork() {
      for (;;) {
        if (spinning.get() != 0 || runQueue.isEmpty() || !spinning.compareAndSet(0, 1)) {
          return;
        }
        Worker w = idle.pop();
        if (w != null) {
          wake(w); // w.wake(Worker.WAKE): the spinner count goes with it
          return;
        }
        int slot = tryReserve();
        if (slot >= 0) { // ThreadStarter.mayStartHere() is true; the start succeeds
          start(slot, new Worker(null, null, null)); // a new worker starts as a spinner
          return; // cleaner.update(): not modelled
        } else {
          spinning.decrementAndGet();
        }
        if (idle.size() == 0) {
          return;
        }
      }
    }

    /** {@code BoundedPool.tryStartSpinning}, with {@code maxSpinners} for MAX_SPINNERS. */
    boolean tryStartSpinning() {
      for (int n = spinning.get(); n < maxSpinners; n = spinning.get()) {
        if (spinning.compareAndSet(n, n + 1)) {
          return true;
        }
      }
      return false;
    }

    /** {@code BoundedPool.stopSpinning}. */
    void stopSpinning() {
      spinning.decrementAndGet();
    }

    /** {@code BoundedPool.foundWork}. */
    void foundWork() {
      if (spinning.decrementAndGet() == 0 && !runQueue.isEmpty()) {
        signalWork();
      }
    }

    /** {@code Worker.wake(WAKE)}: the owner that popped the worker writes its signal. */
    private void wake(Worker w) {
      woken.set(slotOf(w), 1);
    }

    // ---------------------------------------------------------------------------------------------
    // Worker side

    @Operation(nonParallelGroup = "worker0")
    public void worker0() {
      step(0);
    }

    @Operation(nonParallelGroup = "worker1")
    public void worker1() {
      step(1);
    }

    /** One step of the worker in {@code slot}: see the class notes. */
    private void step(int slot) {
      Worker w;
      synchronized (workers) {
        w = workers[slot];
      }
      if (w == null) {
        return; // not started
      }
      if (parked.get(slot) != 0) {
        // Worker.awaitSignal: parked until the signal is set, then returns and clears it
        if (woken.get(slot) == 0) {
          return;
        }
        woken.set(slot, 0);
        parked.set(slot, 0);
        w.spinner = true; // findTask: case WAKE, the waker took the spinner count for us
      } else if (w.kind != null) {
        runTask(w); // Worker.loop: a worker started with its first task runs it
        return;
      }
      findTaskOnce(slot, w);
    }

    /**
     * One turn of {@code Worker.findTask}'s loop, in two steps: the look at the queue, then the
     * rest of the turn. Returns where the real loop would run the task or {@code continue}; a later
     * step resumes at the loop's top.
     */
    private void findTaskOnce(int slot, Worker w) {
      if (looked.get(slot) == 0) {
        if (takeFrom(w)) {
          runTask(w);
        } else {
          looked.set(slot, 1); // found nothing; the worker may be preempted here for any time
        }
        return;
      }
      looked.set(slot, 0);
      // pool.mayExitIdle() is false while the pool runs
      if (w.spinner || (w.spinner = tryStartSpinning())) {
        // the spin loop, one iteration
        if (runQueue.size() != 0 && takeFrom(w)) {
          runTask(w);
          return;
        }
        dropSpinner(w);
        // Publish (the count dropped), then check
        if (!runQueue.isEmpty() && (w.spinner = tryStartSpinning())) {
          return; // continue
        }
      }
      parkIdle(slot, w);
    }

    /** {@code Worker.takeFrom}. */
    private boolean takeFrom(Worker w) {
      if (!runQueue.poll(w)) {
        return false;
      }
      w.holdsSeat = true;
      if (w.spinner) {
        w.spinner = false;
        foundWork();
      }
      return true;
    }

    /** {@code Worker.dropSpinner}. */
    private void dropSpinner(Worker w) {
      if (w.spinner) {
        w.spinner = false;
        stopSpinning();
      }
    }

    /**
     * {@code Worker.loop} around a task: clear the slot, run the task (instantly), then
     * {@code BoundedPool.finishTask} with no surplus and an empty line: give the seat back
     * ({@code giveBackSeat}: {@code state.releaseSeat()}; no line to drain, still running).
     */
    private void runTask(Worker w) {
      w.clear();
      w.holdsSeat = false;
      state.releaseSeat();
    }

    /** {@code BoundedPool.parkIdle} up to {@code w.awaitSignal()}, which the next step continues. */
    private void parkIdle(int slot, Worker w) {
      idle.push(w, ticker);
      // Publish, then check: work queued after our last look
      if (!runQueue.isEmpty()) {
        signalWork();
      }
      // !state.isRunning() and starter.workers() > capacity are false here
      parked.set(slot, 1);
    }

    private int slotOf(Worker w) {
      synchronized (workers) {
        for (int i = 0; i < WORKERS; i++) {
          if (workers[i] == w) {
            return i;
          }
        }
      }
      throw new AssertionError("popped a worker that was never started");
    }

    // ---------------------------------------------------------------------------------------------
    // Invariants, at quiescence

    @Validate
    public void check() {
      if (maxSeats.get() > capacity) {
        throw new AssertionError("seats reached " + maxSeats.get() + " > capacity " + capacity);
      }
      int holding = 0;
      int counted = 0;
      int waiting = 0;
      boolean someoneLooks = false;
      for (int i = 0; i < WORKERS; i++) {
        Worker w = workers[i];
        if (w == null) {
          continue;
        }
        boolean isParked = parked.get(i) != 0;
        boolean isWoken = woken.get(i) != 0;
        if (w.holdsSeat) {
          holding++;
        }
        if (w.spinner || isWoken) {
          counted++;
        }
        if (isParked && !isWoken) {
          waiting++;
        } else {
          someoneLooks = true;
        }
      }
      check(state.seats() == runQueue.size() + holding, "seats != queued + held");
      check(spinning.get() == counted, "spinner count != spinners + woken workers");
      check(idle.size() == waiting, "idle stack != parked, unwoken workers");
      check(runQueue.isEmpty() || someoneLooks, "LOST WAKE-UP: a task is queued and nobody looks");
    }

    private void check(boolean ok, String what) {
      if (!ok) {
        throw new AssertionError(what + ": " + describe());
      }
    }

    private String describe() {
      StringBuilder sb = new StringBuilder();
      sb.append("seats=").append(state.seats()).append(" queued=").append(runQueue.size())
          .append(" spinning=").append(spinning.get()).append(" idle=").append(idle.size())
          .append(" slots=").append(slots.get());
      for (int i = 0; i < WORKERS; i++) {
        Worker w = workers[i];
        sb.append(" | worker").append(i);
        if (w == null) {
          sb.append(" not started");
        } else {
          sb.append(w.spinner ? " spinner" : "").append(w.holdsSeat ? " holdsSeat" : "")
              .append(parked.get(i) != 0 ? " parked" : looked.get(i) != 0 ? " looked" : " looking")
              .append(woken.get(i) != 0 ? " woken" : "");
        }
      }
      return sb.toString();
    }
  }

  /** MAX_SPINNERS = 1 (up to 3 CPUs): tryStartSpinning can fail while another worker spins. */
  public static class OneSpinner extends Model {
    public OneSpinner() {
      super(2, 1, true);
    }
  }

  /** MAX_SPINNERS = 2: both workers may spin at once. */
  public static class TwoSpinners extends Model {
    public TwoSpinners() {
      super(2, 2, true);
    }
  }

  /** From an empty pool: workers start with their first task or as spinners. */
  public static class Fresh extends Model {
    public Fresh() {
      super(2, 1, false);
    }
  }

  /** Capacity 1: one seat, one worker; the shapes above need fewer context switches. */
  public static class OneWorker extends Model {
    public OneWorker() {
      super(1, 1, true);
    }
  }

  private static final int INVOCATIONS = 200;

  /** An actor calling the model operation {@code name}. */
  private static Actor op(String name) {
    try {
      return new Actor(Model.class.getMethod(name), List.of(), false, false, false, false, false);
    } catch (NoSuchMethodException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * The two shapes behind a lost wake-up, each a submitter racing the workers' last looks:
   * <ol>
   *   <li>worker0 parked; worker1 spins, drops its count and parks while a task is submitted
   *       (the queue / spinner-count pair);</li>
   *   <li>both workers found the queue empty; both park while a task is submitted that finds
   *       neither an idle worker nor a free slot (the spinner-count / idle-stack pair).</li>
   * </ol>
   */
  private static ModelCheckingOptions criticalShapes() {
    return new ModelCheckingOptions()
        .iterations(0)
        .invocationsPerIteration(INVOCATIONS)
        .addCustomScenario(new ExecutionScenario(List.of(op("worker0"), op("worker0")),
            List.of(List.of(op("worker1"), op("worker1")), List.of(op("submit"))), List.of(), null))
        .addCustomScenario(new ExecutionScenario(List.of(op("worker0"), op("worker1")),
            List.of(List.of(op("worker0")), List.of(op("worker1")), List.of(op("submit"))),
            List.of(), null));
  }

  /**
   * Capacity 1: the worker found the queue empty and now spins, drops its count and parks while a
   * task is submitted. Every check of the protocol is on this path; with one worker the windows
   * between them need only two or three context switches.
   */
  private static ModelCheckingOptions oneWorkerShape() {
    return new ModelCheckingOptions()
        .iterations(0)
        .invocationsPerIteration(INVOCATIONS)
        .addCustomScenario(new ExecutionScenario(List.of(op("worker0")),
            List.of(List.of(op("worker0")), List.of(op("submit"))), List.of(), null));
  }

  /** Random scenarios: short ones, since a later submission repairs an earlier lost wake-up. */
  private static ModelCheckingOptions randomScenarios() {
    return new ModelCheckingOptions()
        .threads(3)
        .actorsPerThread(2)
        .actorsBefore(3)
        .actorsAfter(0)
        .iterations(7)
        .invocationsPerIteration(100);
  }

  @Test
  void criticalShapesLoseNoWakeUpWithOneSpinner() {
    criticalShapes().check(OneSpinner.class);
  }

  @Test
  void criticalShapesLoseNoWakeUpWithTwoSpinners() {
    criticalShapes().check(TwoSpinners.class);
  }

  @Test
  void oneWorkerLosesNoWakeUp() {
    oneWorkerShape().check(OneWorker.class);
  }

  @Test
  void randomScenariosLoseNoWakeUpWithOneSpinner() {
    randomScenarios().check(OneSpinner.class);
  }

  @Test
  void randomScenariosLoseNoWakeUpWithTwoSpinners() {
    randomScenarios().check(TwoSpinners.class);
  }

  @Test
  void randomScenariosLoseNoWakeUpFromAnEmptyPool() {
    randomScenarios().check(Fresh.class);
  }

  @Test
  void randomScenariosLoseNoWakeUpUnderStress() {
    new StressOptions()
        .threads(3)
        .actorsPerThread(3)
        .actorsBefore(3)
        .actorsAfter(0)
        .iterations(10)
        .invocationsPerIteration(500)
        .check(OneSpinner.class);
  }
}
