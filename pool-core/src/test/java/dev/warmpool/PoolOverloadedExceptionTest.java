package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.Test;

/** {@link PoolOverloadedException#findIn}: one call to recognise a pool rejection, however wrapped. */
class PoolOverloadedExceptionTest {

  @Test
  void findsTheRejectionItselfAWrappedOneAndASuppressedOne() {
    PoolOverloadedException p = new PoolOverloadedException("pool 'x' is overloaded");
    assertThat(PoolOverloadedException.findIn(p)).containsSame(p);
    assertThat(PoolOverloadedException.findIn(new RuntimeException(new ExecutionException(
        new RejectedExecutionException("wrapped", p))))).containsSame(p);
    RuntimeException withSuppressed = new RuntimeException("other");
    withSuppressed.addSuppressed(p);
    assertThat(PoolOverloadedException.findIn(withSuppressed)).containsSame(p);
  }

  @Test
  void emptyForNullForOtherFailuresAndForACycle() {
    assertThat(PoolOverloadedException.findIn(null)).isEmpty();
    assertThat(PoolOverloadedException.findIn(new PoolClosedException("closed"))).isEmpty();
    RuntimeException a = new RuntimeException("a");
    RuntimeException b = new RuntimeException("b", a);
    a.initCause(b);
    assertThat(PoolOverloadedException.findIn(a)).isEmpty();
  }
}
