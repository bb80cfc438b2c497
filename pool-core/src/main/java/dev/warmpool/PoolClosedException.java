package dev.warmpool;

import java.util.concurrent.RejectedExecutionException;

/**
 * Thrown at the submitting call when the pool has been shut down, and to callers that were blocked
 * in the waiting line when it shut down. The task was not accepted and will never run.
 */
public class PoolClosedException extends RejectedExecutionException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with the given message. */
  public PoolClosedException(String message) {
    super(message);
  }
}
