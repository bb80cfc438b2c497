package dev.warmpool;

/** How a submission behaves when no seat is free: the one place where the submitting calls differ. */
enum Mode {
  /** {@code execute}: blocking mode waits in line with the caller's thread blocked. */
  EXECUTE,
  /** {@code tryExecute}: never waits; answers {@code false} (counted as a rejection) when full. */
  TRY,
  /** {@code enqueue}, {@code submit}: blocking mode puts the task itself in line; the caller returns. */
  ENQUEUE,
  /**
   * Work admitted earlier (a lane's later burst, a due timer): never rejected for being full, in
   * either mode, and not bounded by {@code maxWaiting}; it waits in line instead, also while the pool
   * shuts down.
   */
  ADMITTED,
  /**
   * Like {@link #TRY}, but a refusal is not a rejection: a sharded pool's {@code enqueue} or
   * {@code submit} probing its shards (never starts a thread on the caller's thread).
   */
  PROBE,
  /**
   * Like {@link #PROBE}, for a sharded pool's {@code execute} or {@code tryExecute}: may start a
   * worker on the caller's thread, and a failed start is a refusal too, so the next shard is tried.
   */
  PROBE_EXECUTE
}
