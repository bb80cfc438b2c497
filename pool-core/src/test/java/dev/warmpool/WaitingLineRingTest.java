package dev.warmpool;

import org.junit.jupiter.api.Test;

/**
 * The waiting line's ring (issue 33: an entry costs its envelope and one slot): withdrawals leave
 * stale slots that the ends drop and rebuilds sweep, positions wrap, the ring grows, is rebuilt in
 * place and is given back after a burst. Checked against {@link LineModel} over random operations
 * from fixed seeds, each checked at once: what each call returns, the size, the oldest entry, and
 * at the end the drain's order. (R18RingWrapTest runs the same model with the ring's own
 * invariants and positions across the int wrap.)
 */
@org.junit.jupiter.api.Timeout(120) // a position loop that runs past the tail shows as a hang (found so)
class WaitingLineRingTest {
  private static final LineModel.Hooks PUBLIC_FACE = (line, entries, at) -> { };

  @Test
  void aFifoLineMatchesTheModelThroughWrapsRebuildsAndBursts() {
    for (long seed = 1; seed <= PoolFixture.stress(6); seed++) {
      new LineModel().run(new WaitingLine(), false, false, seed, 20_000, PUBLIC_FACE);
    }
  }

  @Test
  void aStandingLifoLineMatchesTheModel() {
    for (long seed = 1; seed <= PoolFixture.stress(4); seed++) {
      new LineModel().run(new WaitingLine(1L, true, 0L), true, true, seed, 4_000, PUBLIC_FACE);
    }
  }

  @Test
  void aLineThatKeepsTimeButServesInOrderMatchesTheModel() {
    for (long seed = 1; seed <= PoolFixture.stress(4); seed++) {
      new LineModel().run(new WaitingLine(1L, false, 0L), true, false, seed, 4_000, PUBLIC_FACE);
    }
  }
}
