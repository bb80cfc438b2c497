package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The waiting line's ring (issue 33: an entry costs its envelope and one slot): withdrawals leave
 * stale slots that the ends drop and rebuilds sweep, positions wrap, the ring grows, is rebuilt in
 * place and is given back after a burst. Checked against a plain list that applies the line's rules
 * (FIFO; a standing LIFO line serves its oldest pinned entry first, else its newest), over random
 * operations from fixed seeds, each checked at once: what each call returns, the size, the oldest
 * entry, and at the end the drain's order.
 */
@org.junit.jupiter.api.Timeout(120) // a position loop that runs past the tail shows as a hang (found so)
class WaitingLineRingTest {
  /** Standing takes a nanosecond: spin until the clock has moved well past it. */
  private static void letItStand() {
    long t = System.nanoTime();
    while (System.nanoTime() - t < 1_000) {
      Thread.onSpinWait();
    }
  }

  /** A deadline timer the line compares by identity. */
  private static final class Deadline extends SharedTimer.Task {
    @Override
    void fire() { }
  }

  /** One entry of the model: the envelope and whether the line must not pass it over. */
  private record Entry(TaskEnvelope.Full e, boolean pinned) { }

  private final Random rnd = new Random();

  private TaskEnvelope.Full entry(int id, boolean caller) {
    return new TaskEnvelope.Full(null, TaskKind.RUNNABLE, id, caller ? Thread.currentThread() : null,
        TaskEnvelope.WAITING);
  }

  @Test
  void aFifoLineMatchesTheModelThroughWrapsRebuildsAndBursts() {
    for (long seed = 1; seed <= PoolFixture.stress(6); seed++) {
      run(new WaitingLine(), false, false, seed, 20_000);
    }
  }

  @Test
  void aStandingLifoLineMatchesTheModel() {
    for (long seed = 1; seed <= PoolFixture.stress(4); seed++) {
      run(new WaitingLine(1L, true, 0L), true, true, seed, 4_000);
    }
  }

  @Test
  void aLineThatKeepsTimeButServesInOrderMatchesTheModel() {
    for (long seed = 1; seed <= PoolFixture.stress(4); seed++) {
      run(new WaitingLine(1L, false, 0L), true, false, seed, 4_000);
    }
  }

  /**
   * {@code ops} random operations; lines grow to bursts of up to ~2,000 entries (past the size at
   * which an emptied line gives its ring back) and shrink again.
   */
  private void run(WaitingLine line, boolean keepsTime, boolean lifo, long seed, int ops) {
    rnd.setSeed(seed);
    List<Entry> model = new ArrayList<>();
    List<TaskEnvelope.Full> gone = new ArrayList<>(); // left the line
    java.util.Set<TaskEnvelope> withdrawn = java.util.Collections.newSetFromMap(
        new java.util.IdentityHashMap<>()); // cancelled, expired or woken by close
    int ids = 0;
    boolean closed = false;
    int burst = 0;
    for (int op = 0; op < ops; op++) {
      String at = "seed " + seed + " op " + op;
      if (burst == 0 && rnd.nextInt(500) == 0) {
        burst = 200 + rnd.nextInt(2_000); // offers only, then back to random mixes
      }
      int r = burst > 0 ? 0 : rnd.nextInt(100);
      if (burst > 0) {
        burst--;
      }
      if (r < 45) { // offer: a task, admitted work, or a blocked caller
        boolean admitted = rnd.nextInt(4) == 0;
        boolean caller = !admitted && rnd.nextInt(6) == 0;
        boolean sheddable = !admitted && !caller && rnd.nextBoolean();
        int bound = rnd.nextInt(10) == 0 ? model.size() : Integer.MAX_VALUE; // sometimes full
        TaskEnvelope.Full e = entry(++ids, caller);
        WaitingLine.Offer o = line.offer(e, bound, admitted, sheddable);
        WaitingLine.Offer expected = closed && !admitted ? WaitingLine.Offer.REFUSED
            : model.size() >= bound ? WaitingLine.Offer.FULL : WaitingLine.Offer.LINKED;
        assertThat(o).as(at).isEqualTo(expected);
        if (o == WaitingLine.Offer.LINKED) {
          model.add(new Entry(e, !sheddable));
        }
      } else if (r < 70) { // a seat takes its entry
        if (lifo) {
          letItStand();
        }
        TaskEnvelope got = line.poll();
        Entry want = model.isEmpty() ? null : model.remove(served(model, lifo));
        assertThat(got).as(at).isSameAs(want == null ? null : want.e());
        if (got != null) {
          assertThat(got.state).isEqualTo(TaskEnvelope.QUEUED);
          gone.add(want.e());
        }
      } else if (r < 82) { // a handle's cancel, of an entry in line or one that left
        TaskEnvelope.Full e = pick(model, gone);
        if (e != null) {
          int i = indexOf(model, e);
          assertThat(line.cancel(e)).as(at).isEqualTo(i >= 0);
          if (i >= 0) {
            model.remove(i);
            gone.add(e);
            withdrawn.add(e);
            assertThat(e.state).isEqualTo(TaskEnvelope.CANCELLED);
          }
        }
      } else if (r < 90) { // a deadline passes
        TaskEnvelope.Full e = pick(model, gone);
        if (e != null) {
          Deadline d = new Deadline();
          int i = indexOf(model, e);
          if (i >= 0) {
            e.expiry(d);
          }
          int[] counted = {0};
          assertThat(line.expire(e, d, new ArrayList<>(), () -> counted[0]++)).as(at)
              .isEqualTo(i >= 0);
          assertThat(counted[0]).isEqualTo(i >= 0 ? 1 : 0);
          if (i >= 0) {
            model.remove(i);
            gone.add(e);
            withdrawn.add(e);
          }
        }
      } else if (r < 95 && keepsTime) { // a lane admitted while its entry waits
        TaskEnvelope.Full e = pick(model, gone);
        if (e != null) {
          int i = indexOf(model, e);
          assertThat(line.pin(e)).as(at).isEqualTo(i >= 0);
          if (i >= 0) {
            model.set(i, new Entry(e, true));
          }
        }
      } else if (r < 97) { // reuse of an entry that left: served or handed back, never withdrawn
        if (!gone.isEmpty()) {
          TaskEnvelope.Full e = gone.get(rnd.nextInt(gone.size()));
          if (e.state == TaskEnvelope.QUEUED) {
            e.state = TaskEnvelope.DONE; // its trip ran
          }
          boolean reset = e.reset();
          assertThat(reset).as(at + ": a withdrawn entry is never reused (its stale slot)")
              .isEqualTo(!withdrawn.contains(e));
          if (reset) {
            gone.remove(e);
            e.state = TaskEnvelope.WAITING;
            if (line.offer(e, Integer.MAX_VALUE, true, false) == WaitingLine.Offer.LINKED) {
              model.add(new Entry(e, true));
            }
          }
        }
      } else if (r < 98) { // shutdown: the callers are woken, in line order
        List<TaskEnvelope> woken = line.close();
        closed = true;
        List<TaskEnvelope> want = new ArrayList<>();
        model.removeIf(x -> {
          if (x.e().caller() != null) {
            want.add(x.e());
            gone.add(x.e());
            withdrawn.add(x.e());
            return true;
          }
          return false;
        });
        assertThat(woken).as(at).containsExactlyElementsOf(want);
      } else if (r < 99) { // shutdownNow, then a reboot
        List<TaskEnvelope> all = line.drain();
        assertThat(all).as(at).containsExactlyElementsOf(model.stream().map(Entry::e).toList());
        model.forEach(x -> gone.add(x.e()));
        model.clear();
        assertThat(line.terminateIfEmpty(() -> Boolean.TRUE)).isTrue();
        assertThat(line.offer(entry(++ids, false), Integer.MAX_VALUE, true, false))
            .isEqualTo(WaitingLine.Offer.REFUSED);
        line.reopen(() -> { });
        closed = false;
      } else { // termination is refused while anything waits
        assertThat(line.terminateIfEmpty(() -> Boolean.TRUE) != null).as(at)
            .isEqualTo(model.isEmpty());
        if (model.isEmpty()) {
          line.reopen(() -> { });
          closed = false;
        }
      }
      assertThat(line.size()).as(at).isEqualTo(model.size());
      assertThat(line.oldest()).as(at).isSameAs(model.isEmpty() ? null : model.get(0).e());
      if (gone.size() > 4_000) {
        withdrawn.removeAll(gone.subList(0, 2_000));
        gone.subList(0, 2_000).clear();
      }
    }
    assertThat(line.drain()).containsExactlyElementsOf(model.stream().map(Entry::e).toList());
    assertThat(line.size()).isZero();
  }

  /** The model's rule: FIFO; a standing LIFO line serves its oldest pinned entry, else its newest. */
  private static int served(List<Entry> model, boolean lifo) {
    if (!lifo || model.size() == 1) {
      return 0;
    }
    for (int i = 0; i < model.size(); i++) {
      if (model.get(i).pinned()) {
        return i; // every pinned entry has waited the whole (1 ns) interval
      }
    }
    return model.size() - 1;
  }

  private TaskEnvelope.Full pick(List<Entry> model, List<TaskEnvelope.Full> gone) {
    if (!model.isEmpty() && (gone.isEmpty() || rnd.nextInt(4) != 0)) {
      // near either end or anywhere: ends exercise the trimming, the middle the stale slots
      int n = model.size();
      int i = switch (rnd.nextInt(3)) {
        case 0 -> rnd.nextInt(Math.min(n, 3));
        case 1 -> n - 1 - rnd.nextInt(Math.min(n, 3));
        default -> rnd.nextInt(n);
      };
      return model.get(i).e();
    }
    return gone.isEmpty() ? null : gone.get(rnd.nextInt(gone.size()));
  }

  private static int indexOf(List<Entry> model, TaskEnvelope e) {
    for (int i = 0; i < model.size(); i++) {
      if (model.get(i).e() == e) {
        return i;
      }
    }
    return -1;
  }
}
