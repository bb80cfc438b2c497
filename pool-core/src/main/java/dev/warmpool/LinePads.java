package dev.warmpool;

/**
 * The fields of a {@link WaitingLine} that its joiners write on every join, padded apart from the
 * fields its takers write on every take (issue 33: the producer and the workers of a pool whose
 * line is long must not share a cache line per task). The JVM lays out a superclass's fields
 * before its subclass's, so the padding sits between them.
 */
final class LinePads {
  private LinePads() {
  }

  abstract static class JoinSidePad {
    long p00, p01, p02, p03, p04, p05, p06, p07;
  }

  /** Written by joiners, under the line's putLock (the intake also by takers, one getAndSet). */
  abstract static class JoinSide extends JoinSidePad {
    /** The newest entry pushed by an intake joiner and not yet absorbed, or null. */
    volatile TaskEnvelope intake;
    /** Entries that ever joined, counted after the push: written only under putLock. */
    volatile long joinedCount;
  }

  abstract static class TakeSidePad extends JoinSide {
    long p10, p11, p12, p13, p14, p15, p16, p17;
  }
}
