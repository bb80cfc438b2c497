package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review r18 of the waiting line's ring (second pass), white-box: positions at and across the int
 * wrap (a line that never empties for 2^31 links is simulated by setting an empty line's positions
 * just below {@code Integer.MAX_VALUE} or just below 0), and the ring's own invariants checked
 * after every operation, which a model of the line's order alone does not see:
 * <ul>
 *   <li>{@code [head, tail)} spans at most the ring; the live slots in it are exactly
 *       {@code size}, the dead ones exactly {@code dead}; outside it every slot is null;</li>
 *   <li>{@code dead == 0} implies every slot in {@code [head, tail)} is live (the lazy claim);</li>
 *   <li>a stale slot's entry has given up its task (review r17, F2);</li>
 *   <li>after any departure, dead slots are at most {@code size + 16}, and a ring over 1,024 slots
 *       holds at least one entry per 8 slots (review r17, F1);</li>
 *   <li>in a LIFO line, the oldest-pinned pointer names exactly the first live pinned entry, at
 *       its position.</li>
 * </ul>
 * Checked against a plain list (FIFO; a standing LIFO line serves its oldest pinned entry, else
 * its newest) over random operations from fixed seeds, with bursts past the ring size that is
 * given back and shrunk.
 */
@Timeout(180)
class R18RingWrapTest {
  private static final Field RING = field("ring");
  private static final Field HEAD = field("head");
  private static final Field TAIL = field("tail");
  private static final Field DEAD = field("dead");
  private static final Field OLDEST_PINNED = field("oldestPinned");
  private static final Field OLDEST_PINNED_AT = field("oldestPinnedAt");

  private static Field field(String name) {
    try {
      Field f = WaitingLine.class.getDeclaredField(name);
      f.setAccessible(true);
      return f;
    } catch (NoSuchFieldException e) {
      throw new AssertionError(e);
    }
  }

  private static Object get(Field f, WaitingLine line) {
    try {
      return f.get(line);
    } catch (IllegalAccessException e) {
      throw new AssertionError(e);
    }
  }

  private static void set(Field f, WaitingLine line, Object v) {
    try {
      f.set(line, v);
    } catch (IllegalAccessException e) {
      throw new AssertionError(e);
    }
  }

  /** Checks that saw the live span cross a wrap (MAX to MIN, or -1 to 0). */
  private static int crossings;

  // One seed each in the build (each op checks the whole ring); CI's second pass runs two.
  @Test
  void aFifoLineKeepsItsInvariantsAcrossTheIntWrap() {
    for (long seed = 1; seed <= PoolFixture.stress(1); seed++) {
      run(new WaitingLine(), false, false, seed, 15_000);
    }
  }

  @Test
  void aStandingLifoLineKeepsItsInvariantsAcrossTheIntWrap() {
    for (long seed = 11; seed <= 10 + PoolFixture.stress(1); seed++) {
      run(new WaitingLine(1L, true, 0L), true, true, seed, 6_000);
    }
  }

  @Test
  void aTimeKeepingFifoLineKeepsItsInvariantsAcrossTheIntWrap() {
    for (long seed = 21; seed <= 20 + PoolFixture.stress(1); seed++) {
      run(new WaitingLine(1L, false, 0L), true, false, seed, 6_000);
    }
  }

  /**
   * A LIFO line across the wrap: the oldest pinned entry taken at the head, at the tail and from
   * the middle, a shrink while the pointer is set (its position remapped), then growth right after.
   */
  @Test
  void aLifoLinesOldestPinnedEntryAtEitherEndAndThroughAShrinkAcrossTheWrap() {
    WaitingLine line = new WaitingLine(1L, true, 0L);
    List<LineModel.Entry> model = new ArrayList<>();
    // positions just below the wrap
    set(RING, line, new TaskEnvelope[16]);
    set(HEAD, line, Integer.MAX_VALUE - 2);
    set(TAIL, line, Integer.MAX_VALUE - 2);
    // pinned at the head (admitted), then sheddable ones: the head is the oldest pinned
    offer(line, model, true, false);
    for (int i = 0; i < 5; i++) {
      offer(line, model, false, true);
    }
    check(line, model, true, "pinned at head");
    pollAndCheck(line, model, true, "take pinned at head");
    // pinned at the tail only: it is the oldest pinned, taken from the tail
    offer(line, model, true, false);
    check(line, model, true, "pinned at tail");
    assertThat((int) get(TAIL, line)).as("across the wrap").isNegative();
    pollAndCheck(line, model, true, "take pinned at tail");
    // a burst past 1,024 slots with a pinned entry in the middle, then withdrawals down to a few:
    // the ring shrinks while the pointer is set
    List<TaskEnvelope.Full> shed = new ArrayList<>();
    for (int i = 0; i < 1_500; i++) {
      offer(line, model, false, true);
      shed.add(model.get(model.size() - 1).e());
    }
    offer(line, model, true, false);
    TaskEnvelope pinned = model.get(model.size() - 1).e();
    for (int i = 0; i < 1_500; i++) {
      offer(line, model, false, true);
      shed.add(model.get(model.size() - 1).e());
    }
    check(line, model, true, "burst");
    assertThat(((Object[]) get(RING, line)).length).isGreaterThan(1024);
    for (int i = 0; i < shed.size() - 6; i++) {
      TaskEnvelope.Full e = shed.get(i);
      assertThat(line.cancel(e)).isTrue();
      model.removeIf(x -> x.e() == e);
      check(line, model, true, "withdrawal " + i);
    }
    assertThat(((Object[]) get(RING, line)).length).as("shrunk").isLessThanOrEqualTo(1024);
    assertThat(get(OLDEST_PINNED, line)).isSameAs(pinned);
    // growth right after the shrink
    for (int i = 0; i < 200; i++) {
      offer(line, model, false, true);
      check(line, model, true, "regrowth " + i);
    }
    while (!model.isEmpty()) {
      pollAndCheck(line, model, true, "drain by polls");
    }
    assertThat(line.size()).isZero();
  }

  private static void offer(WaitingLine line, List<LineModel.Entry> model, boolean admitted,
      boolean sheddable) {
    TaskEnvelope.Full e = new TaskEnvelope.Full(null, TaskKind.RUNNABLE, (Runnable) () -> { },
        null, TaskEnvelope.WAITING);
    assertThat(line.offer(e, Integer.MAX_VALUE, admitted, sheddable))
        .isEqualTo(WaitingLine.Offer.LINKED);
    model.add(new LineModel.Entry(e, !sheddable));
  }

  private static void pollAndCheck(WaitingLine line, List<LineModel.Entry> model, boolean lifo, String at) {
    if (lifo) {
      LineModel.letItStand();
    }
    TaskEnvelope got = line.poll();
    LineModel.Entry want = model.remove(LineModel.served(model, lifo));
    assertThat(got).as(at).isSameAs(want.e());
    check(line, model, lifo, at);
  }

  private void run(WaitingLine line, boolean keepsTime, boolean lifo, long seed, int ops) {
    int[] wraps = {0};
    int crossed = crossings;
    new LineModel().run(line, keepsTime, lifo, seed, ops, new LineModel.Hooks() {
      @Override
      public void before(WaitingLine l, LineModel m) {
        if (m.entries.isEmpty() && m.rnd.nextInt(3) != 0) {
          // An empty line resets its positions to 0; move them next to a wrap instead, as if
          // the line had not emptied for 2^31 links (or 2^32). Within half a ring of it, so that
          // the wrap is crossed before the ring next grows (a rebuild starts at 0 again).
          if (((Object[]) get(RING, l)).length == 0) {
            set(RING, l, new TaskEnvelope[16]);
          }
          int base = m.rnd.nextBoolean() ? Integer.MAX_VALUE : -1;
          int p = base - m.rnd.nextInt(((Object[]) get(RING, l)).length / 2);
          set(HEAD, l, p);
          set(TAIL, l, p);
          wraps[0]++;
        }
        if (!m.entries.isEmpty() && m.rnd.nextInt(40) == 0) {
          relocate(l, m.rnd);
          wraps[0]++;
        }
      }

      @Override
      public void check(WaitingLine l, List<LineModel.Entry> entries, String at) {
        R18RingWrapTest.check(l, entries, lifo, at);
      }
    });
    assertThat(wraps[0]).isPositive();
    assertThat(crossings - crossed).as("checks with the line across a wrap").isGreaterThan(50);
  }

  /**
   * Moves a non-empty line's positions by a multiple of the ring's length (every entry keeps its
   * slot, the oldest-pinned pointer and the entries' stamps move with them), so that its live span now straddles
   * {@code Integer.MAX_VALUE} or -1: as if that many links had passed without the line emptying.
   */
  private static void relocate(WaitingLine line, Random rnd) {
    TaskEnvelope[] ring = (TaskEnvelope[]) get(RING, line);
    int head = (int) get(HEAD, line);
    int tail = (int) get(TAIL, line);
    int span = tail - head;
    int target = (rnd.nextBoolean() ? Integer.MAX_VALUE : -1) - rnd.nextInt(Math.max(1, span));
    int newHead = target - ((target - head) & (ring.length - 1));
    int delta = newHead - head;
    set(HEAD, line, head + delta);
    set(TAIL, line, tail + delta);
    set(OLDEST_PINNED_AT, line, (int) get(OLDEST_PINNED_AT, line) + delta);
    for (TaskEnvelope e : ring) { // and each entry's recorded place (WaitingLine.Stamp#at)
      if (e != null && e.stamp() != null) {
        e.stamp().at += delta;
      }
    }
  }

  /** The ring's invariants and the model's order, under the line's lock (a quiet line). */
  private static void check(WaitingLine line, List<LineModel.Entry> model, boolean lifo, String at) {
    TaskEnvelope[] ring = (TaskEnvelope[]) get(RING, line);
    int head = (int) get(HEAD, line);
    int tail = (int) get(TAIL, line);
    int dead = (int) get(DEAD, line);
    int size = line.size();
    assertThat(size).as(at + ": size").isEqualTo(model.size());
    int span = tail - head;
    assertThat(span).as(at + ": span").isBetween(0, ring.length);
    if (span > 0 && (head < 0) != (tail < 0)) {
      crossings++;
    }
    int mask = ring.length - 1;
    int live = 0;
    List<TaskEnvelope> order = new ArrayList<>();
    TaskEnvelope firstPinned = null;
    int firstPinnedAt = 0;
    for (int p = head; p != tail; p++) {
      TaskEnvelope x = ring[p & mask];
      if (x != null && x.state == TaskEnvelope.WAITING) {
        live++;
        order.add(x);
        if (lifo && firstPinned == null && x.stamp().pinned) {
          firstPinned = x;
          firstPinnedAt = p;
        }
      } else {
        assertThat(dead).as(at + ": dead == 0 yet a dead slot at offset " + (p - head))
            .isPositive();
        if (x != null) {
          assertThat(x.arg).as(at + ": a stale slot keeps its task").isNull();
        }
      }
    }
    assertThat(live).as(at + ": live slots").isEqualTo(size);
    assertThat(span - live).as(at + ": dead slots").isEqualTo(dead);
    assertThat(order).as(at + ": order")
        .containsExactlyElementsOf(model.stream().map(x -> (TaskEnvelope) x.e()).toList());
    for (int p = tail; p != head + ring.length; p++) {
      assertThat(ring[p & mask]).as(at + ": a slot outside [head, tail) is cleared").isNull();
    }
    assertThat(dead).as(at + ": dead slots bounded").isLessThanOrEqualTo(size + 16);
    if (ring.length > 1024) {
      assertThat(size).as(at + ": a big ring holds 1 entry per 8 slots")
          .isGreaterThanOrEqualTo(ring.length >>> 3);
    }
    if (lifo) {
      assertThat(get(OLDEST_PINNED, line)).as(at + ": oldest pinned").isSameAs(firstPinned);
      if (firstPinned != null) {
        assertThat((int) get(OLDEST_PINNED_AT, line)).as(at + ": oldest pinned at")
            .isEqualTo(firstPinnedAt);
      }
    }
  }
}
