package dev.warmpool;

/** Where a task taken from the {@link RunQueue} lands: its kind and argument. */
class TaskSlot {
  TaskKind kind;
  Object arg;

  final void clear() {
    kind = null;
    arg = null;
  }
}
