package dev.warmpool;

import java.util.IdentityHashMap;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * Thrown at the submitting call when a pool cannot take a task because every seat is taken: in
 * nonblocking mode at once, in blocking mode when the waiting line already holds {@code maxWaiting}
 * entries; or delivered when a task waited in line past its deadline ({@code maxWaitInLine}) or past
 * the {@code controlledDelay} target while the line stood. The
 * task was not accepted (or never ran) and will never run. The message says what was full in the
 * words of {@link PoolStats}: {@code pool "http" is full: 4 of 4 seats taken (2 running, 2 queued
 * for a worker), line 0 of 0}. A seat is held by a running task and by an accepted task queued for a
 * worker, so "running" may read below the capacity of a full pool. A full line adds {@code (the
 * waiting line is full)}; a passed line deadline says how long the task waited and what its
 * deadline was; a subpool whose parent is full names the parent and its seats.
 *
 * <p>Adapters deliver it wrapped (Reactor wraps a rejection in a {@code RejectedExecutionException}
 * or {@code Exceptions.propagate}); {@link #findIn(Throwable)} finds it in one call, for example to
 * answer 503 in a web handler; {@link #poolName()} says which pool (or subpool) refused.
 */
public class PoolOverloadedException extends RejectedExecutionException {
  private static final long serialVersionUID = 1L;

  private final @Nullable String poolName;

  /** Creates the exception with the given message and no pool name. */
  public PoolOverloadedException(String message) {
    this(null, message);
  }

  /**
   * Creates the exception for the pool named {@code poolName} with the given message.
   *
   * @param poolName the name of the pool (or subpool) that refused, or null if not known
   */
  public PoolOverloadedException(@Nullable String poolName, String message) {
    super(message);
    this.poolName = poolName;
  }

  /**
   * The {@link WorkerPool#name() name} of the pool or subpool that refused the task; null when the
   * exception was made without one (a sharded pool's shard is named {@code <name>-<i>}). Every rejection warmpool makes carries it.
   */
  public @Nullable String poolName() {
    return poolName;
  }

  /**
   * The first {@code PoolOverloadedException} in {@code failure}'s cause chain (the failure itself
   * included, and suppressed exceptions), or empty. Cycles in the chain are tolerated.
   *
   * @param failure any throwable, or null (then empty)
   */
  public static Optional<PoolOverloadedException> findIn(Throwable failure) {
    Set<Throwable> seen = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
    return find(failure, seen);
  }

  private static Optional<PoolOverloadedException> find(Throwable t, Set<Throwable> seen) {
    for (; t != null && seen.add(t); t = t.getCause()) {
      if (t instanceof PoolOverloadedException p) {
        return Optional.of(p);
      }
      for (Throwable s : t.getSuppressed()) {
        Optional<PoolOverloadedException> found = find(s, seen);
        if (found.isPresent()) {
          return found;
        }
      }
    }
    return Optional.empty();
  }

  /** Returns this exception without recording a stack trace. */
  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
