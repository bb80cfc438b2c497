package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.junit.jupiter.api.Test;

/**
 * The idle stack's stamp (the top 28 bits of its state word) guards the lock-free pop against ABA.
 * After 2^28 changes it wraps to zero; the wrap must leave the stack's size, bottom and FILO order
 * intact, also when the word turns negative and back.
 */
class IdleStackStampTest {
  private static final int STAMP_SHIFT = 2 * IdleStack.SIZE_BITS;

  private long clock;
  private final Ticker ticker = () -> ++clock;

  private static VarHandle ctl() throws ReflectiveOperationException {
    return MethodHandles.privateLookupIn(IdleStack.class, MethodHandles.lookup())
        .findVarHandle(IdleStack.class, "ctl", long.class);
  }

  @Test
  void stampWrapsWithoutDisturbingSizeBottomOrOrder() throws Exception {
    VarHandle ctl = ctl();
    IdleStack stack = new IdleStack(4);
    ctl.setVolatile(stack, -3L << STAMP_SHIFT); // stamp three changes short of wrapping
    Worker a = new Worker(null, null, null);
    Worker b = new Worker(null, null, null);
    Worker c = new Worker(null, null, null);
    stack.push(a, ticker);
    stack.push(b, ticker);
    assertThat((long) ctl.getVolatile(stack)).as("stamp at its last value").isNegative();
    stack.push(c, ticker); // the third change wraps the stamp to zero
    long wrapped = (long) ctl.getVolatile(stack);
    assertThat(wrapped >>> STAMP_SHIFT).as("stamp after wrapping").isZero();
    assertThat(stack.size()).isEqualTo(3);

    assertThat(stack.pop()).isSameAs(c);
    assertThat(stack.removeOldest(a.lastUsed)).containsExactly(a);
    assertThat(stack.pop()).isSameAs(b);
    assertThat(stack.pop()).isNull();
    assertThat((long) ctl.getVolatile(stack) >>> STAMP_SHIFT).as("stamp keeps counting").isEqualTo(3);
  }

  @Test
  void aPopThatReadTheStateBeforeAnyChangeFailsItsCas() throws Exception {
    // What the stamp buys: a pop that read ctl, then lost the CPU while another thread popped
    // and pushed the same worker back, sees a different word and retries instead of succeeding.
    VarHandle ctl = ctl();
    IdleStack stack = new IdleStack(4);
    Worker a = new Worker(null, null, null);
    stack.push(a, ticker);
    long before = (long) ctl.getVolatile(stack);
    assertThat(stack.pop()).isSameAs(a);
    stack.push(a, ticker);
    long after = (long) ctl.getVolatile(stack);
    assertThat(after & ((1L << STAMP_SHIFT) - 1)).as("same size and bottom")
        .isEqualTo(before & ((1L << STAMP_SHIFT) - 1));
    assertThat(after).as("but a different word").isNotEqualTo(before);
  }
}
