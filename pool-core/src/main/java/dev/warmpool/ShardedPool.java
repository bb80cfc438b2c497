package dev.warmpool;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * A {@link WorkerPool} made of N independent sub-pools (ants' {@code MultiPool}), to spread
 * contention on one idle stack and one waiting line over several. Each task goes to one shard chosen
 * by the {@link Placement}.
 *
 * <p><b>Rejects only when every shard is full</b> (guarantee 14), for every submitting call, serial
 * lanes included. When the chosen shard cannot take a task at once, the others are tried before the
 * task waits (blocking mode) or is rejected (nonblocking mode). A serial lane takes its seat in
 * whichever shard has one free when it activates: it is not tied to one shard (its tasks are counted
 * in one shard's {@code stats}, chosen when the lane is made). In blocking mode a caller waits in a
 * shard's line only when every shard was full when it looked, and a seat freed in a shard whose own
 * line is empty serves a waiter of a sibling's line before it goes idle: no entry waits (or expires)
 * while another shard has a free seat. A waiter so moved runs in the shard that had the seat and
 * counts there, once; its handle, deadline and cancel work as before it moved.
 *
 * <p>For {@code execute} and {@code tryExecute} a shard that cannot start a thread refuses, and the
 * next is tried. A task that {@code enqueue} or {@code submit} placed stays in its shard: if that
 * shard cannot start a thread, the start is retried there (the task is not moved to another shard).
 * A waiter moves only to a shard with a worker at hand, so a move never waits for a thread start.
 * Stats are the sum of the shards'; {@link #resize} spreads the new capacity evenly.
 */
public final class ShardedPool extends AbstractWorkerPool {
  /** How a task picks its shard. */
  public enum Placement {
    /** Shards in turn. */
    ROUND_ROBIN,
    /** The shard with the fewest busy workers at the moment of the call. */
    LEAST_BUSY
  }

  private final String name;
  private final BoundedPool[] shards;
  /** The shards' admissions, in shard order. */
  private final Admission[] admissions;
  private final Placement placement;
  private final AtomicInteger turn = new AtomicInteger();

  private ShardedPool(String name, BoundedPool[] shards, Placement placement,
      UnaryOperator<Runnable> decorator) {
    super(decorator); // tasks are decorated at this pool's door; the shards' doors are not used
    this.name = name;
    this.shards = shards;
    this.placement = placement;
    this.admissions = new Admission[shards.length];
    for (int i = 0; i < shards.length; i++) {
      admissions[i] = shards[i].admission;
    }
    if (shards.length > 1) {
      Admission.Siblings siblings = new SiblingSeats();
      for (Admission a : admissions) {
        a.siblings = siblings; // before this pool is published: final-field freeze covers it
      }
    }
  }

  /**
   * Moves waiters between shards (guarantee 14): a seat freed in a shard whose own line is empty
   * serves the head of a sibling's line, and an entry that joins a line is taken at once by a
   * sibling with a free seat. Each side publishes, then checks (see {@link Admission.Siblings}).
   *
   * <p>A shard takes a sibling's waiter only while it has a worker at hand (a live worker that
   * holds no seat: idle, spinning, or the one that just gave its seat back), so a moved entry never
   * needs a thread start: a shard whose thread factory fails never strands a waiter that its own
   * shard's worker would have run (guarantee 11). A seat is freed by a worker that finished its
   * task, so there is one at hand when it matters.
   */
  private final class SiblingSeats implements Admission.Siblings {
    @Override
    public void seatFreed(Admission shard) {
      int me = indexOf(shard);
      int n = shards.length;
      int start = Math.floorMod(turn.get(), n); // spread which sibling is served first
      for (int i = 0; i < n; i++) {
        int other = (start + i) % n;
        if (other != me) {
          while (workerAtHand(me) && shard.serveFrom(admissions[other])) {
            // one entry per seat, while seats, workers at hand and waiters last
          }
          // A freed seat that finds the sibling's line empty too: its pool caught up (controlled
          // delay's "empty"), also while the sibling's own seats stay busy (review r8, C1).
          admissions[other].line.seatLookedIn();
        }
      }
    }

    @Override
    public void joined(Admission shard) {
      int n = shards.length;
      int start = Math.floorMod(turn.get(), n);
      for (int i = 0; i < n && shard.line.size() > 0; i++) {
        int other = (start + i) % n;
        if (admissions[other] != shard) {
          while (workerAtHand(other) && admissions[other].serveFrom(shard)) {
            // one entry per seat, while seats, workers at hand and waiters last
          }
        }
      }
    }

    private boolean workerAtHand(int shard) {
      return shards[shard].workers() > admissions[shard].state.seats();
    }

    private int indexOf(Admission shard) {
      for (int i = 0; i < admissions.length; i++) {
        if (admissions[i] == shard) {
          return i;
        }
      }
      throw new IllegalStateException("not a shard of " + name);
    }
  }

  /**
   * Builds {@code shards} sub-pools from {@code shardConfig}, each with the builder's capacity (so
   * the total capacity is {@code shards x capacity}) and named {@code <name>-<i>}.
   *
   * @throws IllegalArgumentException if {@code shards < 1}
   * @throws NullPointerException if an argument is null
   */
  public static ShardedPool of(int shards, Placement placement, WorkerPool.Builder shardConfig) {
    if (shards < 1) {
      throw new IllegalArgumentException("shards must be >= 1, was " + shards);
    }
    Objects.requireNonNull(placement, "placement must not be null");
    Objects.requireNonNull(shardConfig, "shardConfig must not be null");
    String name = shardConfig.name;
    BoundedPool[] pools = new BoundedPool[shards];
    try {
      for (int i = 0; i < shards; i++) {
        shardConfig.name(name + "-" + i);
        pools[i] = (BoundedPool) shardConfig.build();
      }
    } finally {
      shardConfig.name(name);
    }
    return new ShardedPool(name, pools, placement, shardConfig.taskDecorator);
  }

  /** The number of shards. */
  public int shards() {
    return shards.length;
  }

  private int pick() {
    if (placement == Placement.ROUND_ROBIN) {
      return Math.floorMod(turn.getAndIncrement(), shards.length);
    }
    int best = 0;
    int bestBusy = Integer.MAX_VALUE;
    for (int i = 0; i < shards.length; i++) {
      int busy = shards[i].busy();
      if (busy < bestBusy) {
        best = i;
        bestBusy = busy;
      }
    }
    return best;
  }

  @Override
  boolean dispatch(TaskKind kind, Object arg, Mode mode) {
    int first = pick();
    if (shards.length == 1 || mode == Mode.ADMITTED) {
      return shards[first].dispatch(kind, arg, mode);
    }
    int taker = probe(first, kind, arg, Mode.PROBE_EXECUTE);
    return taker >= 0 || shards[first].dispatch(kind, arg, mode);
  }

  @Override
  TaskHandle enqueue(TaskKind kind, Object arg, Mode mode, long maxWaitNanos) {
    int first = pick();
    if (shards.length > 1) {
      // Every shard is offered the task before it waits or is rejected in the first one: a free
      // seat anywhere takes it (guarantee 14), as the probe does for execute. Admitted work too (a
      // due timer): it waits in the first one's line only if no running shard has a free seat.
      for (int i = 0; i < shards.length; i++) {
        TaskHandle h = shards[(first + i) % shards.length].tryEnqueue(kind, arg);
        if (h != null) {
          return h;
        }
      }
    }
    return shards[first].enqueue(kind, arg, mode, maxWaitNanos);
  }

  @Override
  boolean dispatchTimed(TaskKind kind, Object arg, long nanos) throws InterruptedException {
    int first = pick();
    return probe(first, kind, arg, Mode.PROBE_EXECUTE) >= 0
        || shards[first].dispatchTimed(kind, arg, nanos);
  }

  /**
   * Offers the task to each shard once, in placement order from {@code first}; returns the taker
   * or -1. With {@link Mode#PROBE_EXECUTE} a shard may start a worker on the caller's thread, and a
   * shard whose start fails refuses, so the next shard (perhaps one with an idle worker) is tried.
   */
  private int probe(int first, TaskKind kind, Object arg, Mode probe) {
    for (int i = 0; i < shards.length; i++) {
      int s = (first + i) % shards.length;
      if (shards[s].dispatch(kind, arg, probe)) {
        return s;
      }
    }
    return -1;
  }

  @Override
  void checkOpen() {
    for (BoundedPool p : shards) {
      p.checkOpen();
    }
  }

  @Override
  PoolClosedException closed() {
    return shards[0].closed();
  }

  /**
   * A lane counted in one shard (chosen by placement), that takes its seat in whichever shard has
   * one free each time it activates: it is rejected only when every shard is full.
   */
  @Override
  public SerialExecutor newSerialExecutor() {
    BoundedPool home = shards[pick()];
    return shards.length == 1 ? home.newSerialExecutor() : new SerialLane(this, home.admission);
  }

  /** What a lane of this pool sees of the shards (its pool is this one: see SerialLane). */
  SerialLane.Shards laneShards() {
    return laneShards;
  }

  /** What a lane sees of the shards. */
  private final SerialLane.Shards laneShards = new SerialLane.Shards() {
    @Override
    public Admission[] admissions() {
      return admissions;
    }

    @Override
    public int first() {
      return pick();
    }

    @Override
    public boolean hasWaiters() {
      for (Admission a : admissions) {
        if (a.line.size() > 0) {
          return true;
        }
      }
      return false;
    }
  };

  @Override
  public String name() {
    return name;
  }

  @Override
  public int capacity() {
    int sum = 0;
    for (BoundedPool p : shards) {
      sum += p.capacity();
    }
    return sum;
  }

  @Override
  public Duration maxIdle() {
    return shards[0].maxIdle();
  }

  @Override
  public boolean isNonblocking() {
    return shards[0].isNonblocking();
  }

  /**
   * Spreads {@code capacity} over the shards (the first {@code capacity % shards} get one more).
   *
   * @throws IllegalArgumentException if {@code capacity < shards()}
   */
  @Override
  public void resize(int capacity) {
    if (capacity < shards.length) {
      throw new IllegalArgumentException("capacity must be >= shards (" + shards.length + "), was "
          + capacity);
    }
    for (int i = 0; i < shards.length; i++) {
      shards[i].resize(capacity / shards.length + (i < capacity % shards.length ? 1 : 0));
    }
  }

  @Override
  public PoolStats stats() {
    List<PoolStats> parts = new ArrayList<>(shards.length);
    for (BoundedPool p : shards) {
      parts.add(p.stats());
    }
    return PoolStats.sum(parts);
  }

  /** A snapshot of one shard's stats. */
  public PoolStats stats(int shard) {
    return shards[Objects.checkIndex(shard, shards.length)].stats();
  }

  @Override
  public void shutdown() {
    timers.close(); // first, waiting out fires in flight: the shards then still take their tasks
    for (BoundedPool p : shards) {
      p.shutdown();
    }
  }

  @Override
  public List<Runnable> shutdownNow() {
    timers.close();
    List<Runnable> all = new ArrayList<>();
    for (BoundedPool p : shards) {
      all.addAll(p.shutdownNow());
    }
    return all;
  }

  @Override
  public boolean isShutdown() {
    for (BoundedPool p : shards) {
      if (!p.isShutdown()) {
        return false;
      }
    }
    return true;
  }

  /** Every shard terminated, and no timer of this pool is being handed to one. */
  @Override
  public boolean isTerminated() {
    for (BoundedPool p : shards) {
      if (!p.isTerminated()) {
        return false;
      }
    }
    return timers.isQuiet();
  }

  /** Completed when every shard has terminated (this pool's timers are quiet by then). */
  @Override
  public CompletionStage<Void> whenTerminated() {
    CompletableFuture<?>[] all = new CompletableFuture<?>[shards.length];
    for (int i = 0; i < shards.length; i++) {
      all[i] = shards[i].whenTerminated().toCompletableFuture();
    }
    return CompletableFuture.allOf(all).minimalCompletionStage();
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    long deadline = System.nanoTime() + Math.min(unit.toNanos(timeout), Long.MAX_VALUE / 4);
    for (BoundedPool p : shards) {
      if (!p.awaitTermination(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
        return false;
      }
    }
    // Shutdown closes this pool's timers, and waits out their fires in flight, before it shuts the
    // shards down; a reboot may race us, so read the state rather than assume it.
    while (!timers.isQuiet()) {
      if (deadline - System.nanoTime() <= 0) {
        return false;
      }
      Thread.onSpinWait();
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
    }
    return true;
  }

  @Override
  public void reboot() {
    if (!isTerminated()) {
      throw new IllegalStateException("pool '" + name + "' is not terminated");
    }
    for (BoundedPool p : shards) {
      p.reboot();
    }
    timers.reopen();
  }

  /** Not supported: shards terminate one by one, so a subpool could outlive the shard it needs. */
  @Override
  public WorkerPool newSubpool(String name, int capacity) {
    return newSubpool(name, capacity, isNonblocking(), 0);
  }

  /** Not supported: shards terminate one by one, so a subpool could outlive the shard it needs. */
  @Override
  public WorkerPool newSubpool(String name, int capacity, boolean nonblocking, int maxWaiting) {
    throw new UnsupportedOperationException("a sharded pool has no subpools; make a subpool of one"
        + " pool instead (pool '" + this.name + "')");
  }

  @Override
  public String toString() {
    return "shardedPool(\"" + name + "\",shards=" + shards.length + ",capacity=" + capacity()
        + ",maxIdle=" + formatDuration(maxIdle()) + ")";
  }

}
