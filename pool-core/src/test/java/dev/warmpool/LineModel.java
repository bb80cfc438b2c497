package dev.warmpool;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * A plain list that applies the waiting line's rules (FIFO; a standing LIFO line serves its
 * oldest pinned entry first, else its newest), driven with a {@link WaitingLine} through random
 * operations from a fixed seed: offers (tasks, admitted work, blocked callers; sometimes into a
 * full line), polls, cancels, expiries, pins, reuse of entries that left, close, drain with
 * termination and reopen, and bursts past the ring size that a line gives back. Each operation's
 * result is checked at once against the model; {@link Hooks} add checks and moves of their own
 * (WaitingLineRingTest reads the public face, R18RingWrapTest the ring's fields).
 */
final class LineModel {
  /** One entry of the model: the envelope and whether the line must not pass it over. */
  record Entry(TaskEnvelope.Full e, boolean pinned) { }

  /** What a test adds around each operation. */
  interface Hooks {
    /** Before operation {@code op}: may move the line's positions (white-box). */
    default void before(WaitingLine line, LineModel model) { }

    /** After each operation, with the model's entries in line order. */
    void check(WaitingLine line, List<Entry> entries, String at);
  }

  /** A deadline timer the line compares by identity. */
  static final class Deadline extends SharedTimer.Task {
    @Override
    void fire() { }
  }

  final Random rnd = new Random();
  final List<Entry> entries = new ArrayList<>();
  private final List<TaskEnvelope.Full> gone = new ArrayList<>(); // left the line
  /** Cancelled, expired or woken by close: never reused (their slots may still be stale). */
  private final Set<TaskEnvelope> withdrawn = Collections.newSetFromMap(new IdentityHashMap<>());

  /** Standing takes a nanosecond: spin until the clock has moved well past it. */
  static void letItStand() {
    long t = System.nanoTime();
    while (System.nanoTime() - t < 1_000) {
      Thread.onSpinWait();
    }
  }

  static TaskEnvelope.Full entry(Object task, boolean caller) {
    return new TaskEnvelope.Full(null, TaskKind.RUNNABLE, task,
        caller ? Thread.currentThread() : null, TaskEnvelope.WAITING);
  }

  /** The model's rule: FIFO; a standing LIFO line serves its oldest pinned entry, else its newest. */
  static int served(List<Entry> entries, boolean lifo) {
    if (!lifo || entries.size() == 1) {
      return 0;
    }
    for (int i = 0; i < entries.size(); i++) {
      if (entries.get(i).pinned()) {
        return i; // every pinned entry has waited the whole (1 ns) interval
      }
    }
    return entries.size() - 1;
  }

  /**
   * {@code ops} random operations on {@code line} (empty, open) from {@code seed}; lines grow in
   * bursts of up to ~2,500 entries (past the size at which an emptied line gives its ring back)
   * and shrink again. Ends with a drain in line order.
   */
  void run(WaitingLine line, boolean keepsTime, boolean lifo, long seed, int ops, Hooks hooks) {
    rnd.setSeed(seed);
    entries.clear();
    gone.clear();
    withdrawn.clear();
    int ids = 0;
    boolean closed = false;
    int burst = 0;
    for (int op = 0; op < ops; op++) {
      String at = "seed " + seed + " op " + op;
      hooks.before(line, this);
      if (burst == 0 && rnd.nextInt(1_500) == 0) {
        burst = 200 + rnd.nextInt(2_300); // offers only, then back to random mixes
      }
      int r = burst > 0 ? 0 : rnd.nextInt(100);
      if (burst > 0) {
        burst--;
      }
      if (r < 45) { // offer: a task, admitted work, or a blocked caller
        boolean admitted = rnd.nextInt(4) == 0;
        boolean caller = !admitted && rnd.nextInt(6) == 0;
        boolean sheddable = !admitted && !caller && rnd.nextBoolean();
        int bound = rnd.nextInt(10) == 0 ? entries.size() : Integer.MAX_VALUE; // sometimes full
        TaskEnvelope.Full e = entry(++ids, caller);
        WaitingLine.Offer o = line.offer(e, bound, admitted, sheddable);
        WaitingLine.Offer want = closed && !admitted ? WaitingLine.Offer.REFUSED
            : entries.size() >= bound ? WaitingLine.Offer.FULL : WaitingLine.Offer.LINKED;
        assertThat(o).as(at).isEqualTo(want);
        if (o == WaitingLine.Offer.LINKED) {
          entries.add(new Entry(e, !sheddable));
        }
      } else if (r < 70) { // a seat takes its entry
        if (lifo) {
          letItStand();
        }
        TaskEnvelope got = line.poll();
        Entry want = entries.isEmpty() ? null : entries.remove(served(entries, lifo));
        assertThat(got).as(at).isSameAs(want == null ? null : want.e());
        if (got != null) {
          assertThat(got.state).as(at).isEqualTo(TaskEnvelope.QUEUED);
          assertThat(got.arg).as(at + ": a served entry keeps its task").isNotNull();
          gone.add(want.e());
        }
      } else if (r < 81) { // a handle's cancel, of an entry in line or one that left
        TaskEnvelope.Full e = pick();
        if (e != null) {
          int i = indexOf(e);
          assertThat(line.cancel(e)).as(at).isEqualTo(i >= 0);
          if (i >= 0) {
            withdraw(i);
            assertThat(e.state).as(at).isEqualTo(TaskEnvelope.CANCELLED);
          }
        }
      } else if (r < 89) { // a deadline passes
        TaskEnvelope.Full e = pick();
        if (e != null) {
          Deadline d = new Deadline();
          int i = indexOf(e);
          if (i >= 0) {
            e.expiry(d);
          }
          int[] counted = {0};
          assertThat(line.expire(e, d, new ArrayList<>(), () -> counted[0]++)).as(at)
              .isEqualTo(i >= 0);
          assertThat(counted[0]).as(at).isEqualTo(i >= 0 ? 1 : 0);
          if (i >= 0) {
            withdraw(i);
          }
        }
      } else if (r < 94 && keepsTime) { // a lane admitted while its entry waits
        TaskEnvelope.Full e = pick();
        if (e != null) {
          int i = indexOf(e);
          assertThat(line.pin(e)).as(at).isEqualTo(i >= 0);
          if (i >= 0) {
            entries.set(i, new Entry(e, true));
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
              entries.add(new Entry(e, true));
            }
          }
        }
      } else if (r < 98) { // shutdown: the callers are woken, in line order
        List<TaskEnvelope> woken = line.close();
        closed = true;
        List<TaskEnvelope> want = new ArrayList<>();
        for (int i = 0; i < entries.size(); ) {
          if (entries.get(i).e().caller() != null) {
            want.add(entries.get(i).e());
            withdraw(i);
          } else {
            i++;
          }
        }
        assertThat(woken).as(at).containsExactlyElementsOf(want);
      } else if (r < 99) { // shutdownNow, then a reboot
        List<TaskEnvelope> all = line.drain();
        assertThat(all).as(at).containsExactlyElementsOf(inLine());
        for (TaskEnvelope e : all) {
          assertThat(e.arg).as(at + ": a drained entry keeps its task to hand back").isNotNull();
        }
        entries.forEach(x -> gone.add(x.e()));
        entries.clear();
        assertThat(line.terminateIfEmpty(() -> Boolean.TRUE)).isTrue();
        assertThat(line.offer(entry(++ids, false), Integer.MAX_VALUE, true, false))
            .as(at + ": a terminated line refuses even admitted work")
            .isEqualTo(WaitingLine.Offer.REFUSED);
        line.reopen(() -> { });
        closed = false;
      } else { // termination is refused while anything waits
        assertThat(line.terminateIfEmpty(() -> Boolean.TRUE) != null).as(at)
            .isEqualTo(entries.isEmpty());
        if (entries.isEmpty()) {
          line.reopen(() -> { });
          closed = false;
        }
      }
      assertThat(line.size()).as(at + ": size").isEqualTo(entries.size());
      assertThat(line.oldest()).as(at + ": oldest")
          .isSameAs(entries.isEmpty() ? null : entries.get(0).e());
      hooks.check(line, entries, at);
      if (gone.size() > 4_000) {
        withdrawn.removeAll(gone.subList(0, 2_000));
        gone.subList(0, 2_000).clear();
      }
    }
    assertThat(line.drain()).containsExactlyElementsOf(inLine());
    assertThat(line.size()).isZero();
  }

  private List<TaskEnvelope> inLine() {
    return entries.stream().map(x -> (TaskEnvelope) x.e()).toList();
  }

  private void withdraw(int i) {
    TaskEnvelope.Full e = entries.remove(i).e();
    gone.add(e);
    withdrawn.add(e);
  }

  /** An entry near either end of the line, anywhere in it, or one that left. */
  private TaskEnvelope.Full pick() {
    if (!entries.isEmpty() && (gone.isEmpty() || rnd.nextInt(4) != 0)) {
      // ends exercise the trimming, the middle the stale slots
      int n = entries.size();
      int i = switch (rnd.nextInt(3)) {
        case 0 -> rnd.nextInt(Math.min(n, 3));
        case 1 -> n - 1 - rnd.nextInt(Math.min(n, 3));
        default -> rnd.nextInt(n);
      };
      return entries.get(i).e();
    }
    return gone.isEmpty() ? null : gone.get(rnd.nextInt(gone.size()));
  }

  private int indexOf(TaskEnvelope e) {
    for (int i = 0; i < entries.size(); i++) {
      if (entries.get(i).e() == e) {
        return i;
      }
    }
    return -1;
  }
}
