package dev.warmpool;

import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * Thrown at the submitting call when the pool has been shut down, and to callers that were blocked
 * in the waiting line when it shut down. The task was not accepted and will never run.
 * {@link #poolName()} says which pool (or subpool) refused.
 */
public class PoolClosedException extends RejectedExecutionException {
  private static final long serialVersionUID = 1L;

  private final @Nullable String poolName;

  /** Creates the exception with the given message and no pool name. */
  public PoolClosedException(String message) {
    this(null, message);
  }

  /**
   * Creates the exception for the pool named {@code poolName} with the given message.
   *
   * @param poolName the name of the pool (or subpool) that refused, or null if not known
   */
  public PoolClosedException(@Nullable String poolName, String message) {
    super(message);
    this.poolName = poolName;
  }

  /**
   * The {@link WorkerPool#name() name} of the pool or subpool that refused the task; null when the
   * exception was made without one (a sharded pool's shard is named {@code <name>-<i>}). Every refusal by a shut-down pool that warmpool makes carries it.
   */
  public @Nullable String poolName() {
    return poolName;
  }
}
