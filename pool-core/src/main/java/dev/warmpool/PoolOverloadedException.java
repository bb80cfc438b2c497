package dev.warmpool;

import java.util.concurrent.RejectedExecutionException;

/**
 * Thrown at the submitting call when a pool cannot take a task because every seat is taken: in
 * nonblocking mode at once, in blocking mode when the waiting line already holds {@code maxWaiting}
 * entries. The task was not accepted and will never run. The message names the pool (or subpool),
 * its capacity and the number of tasks running.
 */
public class PoolOverloadedException extends RejectedExecutionException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with the given message. */
  public PoolOverloadedException(String message) {
    super(message);
  }

  /** Returns this exception without recording a stack trace. */
  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
