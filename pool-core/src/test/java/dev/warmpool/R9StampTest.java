package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Review r9 on issue 33's side stamp ({@link WaitingLine.Stamp}): an entry's standing record is made
 * by the first line that keeps time, and an entry that travels again (a serial lane's reused place
 * entry, an entry of a line that keeps no time) must be judged by this trip's record only. White
 * box: the reuse and the lines are driven directly, as a lane and its shards drive them.
 */
class R9StampTest {
  private static TaskEnvelope entry() {
    return new TaskEnvelope.Full(null, TaskKind.RUNNABLE, (Runnable) () -> { }, null,
        TaskEnvelope.WAITING);
  }

  /** A LIFO line that stands as soon as it holds two entries, with no quiet period. */
  private static WaitingLine standingLifo() {
    return new WaitingLine(1L, true, 0L);
  }

  private static void join(WaitingLine line, TaskEnvelope e, boolean sheddable) {
    e.state = TaskEnvelope.WAITING;
    assertThat(line.offer(e, 100, false, sheddable)).isEqualTo(WaitingLine.Offer.LINKED);
  }

  /** Standing takes a nanosecond: spin until the clock has moved past it. */
  private static void letItStand() {
    long t = System.nanoTime();
    while (System.nanoTime() - t < 1_000) {
      Thread.onSpinWait();
    }
  }

  @Test
  void aReusedEntryPinnedOnOneTripIsSheddableOnTheNextAndServedNewestFirst() {
    WaitingLine line = standingLifo();
    TaskEnvelope reused = entry();
    join(line, reused, false); // admitted: pinned on this trip
    letItStand();
    assertThat(line.poll()).isSameAs(reused);
    assertThat(reused.stamp().pinned).isTrue();
    reused.state = TaskEnvelope.DONE;

    // next trip: a sheddable entry waits first, then the reused one joins sheddable
    TaskEnvelope older = entry();
    join(line, older, true);
    join(line, reused, true);
    letItStand();
    assertThat(line.poll()).as("a standing LIFO line serves its newest sheddable entry")
        .isSameAs(reused);
    assertThat(line.poll()).isSameAs(older);
  }

  @Test
  void aReusedEntryKeepsItsStampObjectAndTakesThisTripsTimes() {
    WaitingLine line = standingLifo();
    TaskEnvelope reused = entry();
    join(line, reused, true);
    WaitingLine.Stamp first = reused.stamp();
    long joined = first.joined;
    assertThat(line.poll()).isSameAs(reused);
    letItStand();
    join(line, reused, true);
    assertThat(reused.stamp()).as("reused, not made again").isSameAs(first);
    assertThat(reused.stamp().joined - joined).as("this trip's join time").isPositive();
  }

  @Test
  void aLineThatKeepsNoTimeMakesNoStampAndPinsWithoutOne() {
    WaitingLine fifo = new WaitingLine();
    TaskEnvelope e = entry();
    join(fifo, e, true);
    assertThat(e.stamp()).isNull();
    assertThat(fifo.pin(e)).as("linked here: pinned (a no-op without a stamp)").isTrue();
    assertThat(fifo.poll()).isSameAs(e);

    // the same entry later joins a line that keeps time (a shard's, a later trip): stamped there
    WaitingLine lifo = standingLifo();
    TaskEnvelope older = entry();
    join(lifo, older, true);
    join(lifo, e, true);
    assertThat(e.stamp()).isNotNull();
    assertThat(e.stamp().pinned).isFalse();
    assertThat(lifo.pin(e)).isTrue();
    assertThat(e.stamp().pinned).isTrue();
    letItStand();
    // pinned, and it has waited the whole (1 ns) interval: it goes first, as the oldest pinned
    assertThat(lifo.poll()).isSameAs(e);
    assertThat(lifo.poll()).isSameAs(older);
  }

  @Test
  void pinningAnEntryAheadOfTheOldestPinnedOneMovesThePointerBack() {
    WaitingLine line = new WaitingLine(1L, true, 0L);
    TaskEnvelope a = entry();
    TaskEnvelope b = entry();
    TaskEnvelope c = entry();
    join(line, a, true);
    join(line, b, false); // pinned as it joins
    join(line, c, true);
    assertThat(line.pin(a)).isTrue(); // a lane admitted while its entry waits
    // a waited longest and is pinned: once it has stood a whole interval, it goes first
    letItStand();
    assertThat(line.poll()).isSameAs(a);
    // then b, the next pinned one, before the newest sheddable c
    assertThat(line.poll()).isSameAs(b);
    assertThat(line.poll()).isSameAs(c);
  }
}
