package dev.warmpool;

import java.util.function.IntSupplier;

/**
 * The host of an engine under test: a running pool in nonblocking mode with an empty waiting line,
 * whose seats are a real {@link RunState}. Used by the model check and by tests that drive a real
 * {@link Engine} with their own timer.
 */
final class StubHost implements Engine.Host {
  private final RunState state;
  private final IntSupplier capacity;

  StubHost(RunState state, IntSupplier capacity) {
    this.state = state;
    this.capacity = capacity;
  }

  @Override
  public int capacity() {
    return capacity.getAsInt();
  }

  @Override
  public boolean isRunning() {
    return true;
  }

  @Override
  public boolean hasWaiters() {
    return false;
  }

  @Override
  public TaskEnvelope passSeat() {
    return null;
  }

  @Override
  public void releaseSeat() {
    state.releaseSeat();
  }

  @Override
  public int seats() {
    return state.seats();
  }

  @Override
  public void tryTerminate() {}
}
