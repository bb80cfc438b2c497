package dev.warmpool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The serial lane behind {@link WorkerPool#newSerialExecutor()}.
 *
 * <h2>Implementation notes</h2>
 * A lane is a task queue plus one flag, {@code scheduled}: whoever sets it (false to true) dispatches
 * the lane to the pool as one carrier task ({@link #KIND}), which the pool does not count; the lane
 * counts each of its own tasks instead. The carrier drains the queue on a worker; when it finds the
 * queue empty it clears the flag and then looks once more (publish, then check), so a task offered
 * meanwhile is never stranded. So a lane holds at most one seat or one place in line.
 *
 * <p><b>Admission.</b> Until the lane is admitted, {@link #execute} calls are serialized on the
 * first-dispatch lock (the queue's monitor), and the first one dispatches in the caller's mode, so
 * a rejection concerns exactly the caller's task: it is taken back out of the queue before the
 * exception is thrown. Anything else queued meanwhile (a due delayed task, which is admitted work)
 * is dispatched again as admitted. The lane is admitted when it gets its first seat (at once, or when its entry is
 * handed one), or when admitted work enters it (a due delayed task, {@link #executeAdmitted}). Once
 * admitted, the lane dispatches in {@link Mode#ADMITTED}: it waits in line rather than being
 * rejected, and never expires. Scheduling a delayed task does not admit the lane; the task itself is
 * admitted work when due, and then admits the lane (a Reactor or RxJava worker is one unit: its
 * later tasks are never rejected for load).
 *
 * <p><b>Line deadline.</b> While the lane waits in line for its first seat, its entry carries the
 * pool's {@code maxWaitInLine} or {@code controlledDelay} bound (armed after the entry is published, on an entry never reused, so a
 * timer never meets a later trip). Executes meanwhile ride along in that entry. If the deadline
 * passes first, the entry leaves the line unrun and every task queued in the lane expires with it,
 * each counted as one expired task; the lane is left not dispatched and not admitted, so a later
 * {@code execute} tries admission afresh. Admitting the lane, the expiry's decision and a
 * ride-along's check all take the line's lock: the expiry finds the lane admitted and lets the
 * entry wait on, or takes the tasks (none of them admitted) and clears {@code scheduled} in one
 * step, so that admitted work arriving after it dispatches the lane afresh and a ride-along that
 * finds {@code scheduled} cleared dispatches it itself.
 *
 * <p><b>Shutdown.</b> {@code shutdownNow} hands back the queue of a lane waiting for a worker, and
 * that of a lane a worker is draining ({@link Worker#lane}). A lane that a worker picks up at the
 * very moment of {@code shutdownNow} may still run its queued tasks: they were taken with the
 * carrier, as a plain task taken by a worker runs. Between its CAS on {@code scheduled} and the
 * lane landing, a dispatcher holds the pool ({@link Admission#hold}): a task that rides along on
 * that dispatch is in nothing the pool can hand back, so the pool does not terminate until the
 * lane has landed, and the task runs (after a {@code shutdownNow} that missed it, as above). A
 * terminated pool refuses each caller's own task at the call (review r14).
 *
 * <p><b>Closing.</b> {@link #close()} cancels the queued tasks and every pending timer of the lane
 * (due or not) and, with nothing left, cancels the lane's entry (its one place in the pool), so a
 * closed lane holds no place under {@code maxWaiting}; a carrier already started by a worker just
 * finds the queue empty.
 *
 * <p><b>Footprint</b> (issue 33: a Reactor or RxJava worker is a lane, and idle workers holding a
 * timer may be many). The lane is its own timer set ({@link MemberSet}), and its queue is made by
 * the first task offered to it, so a lane that only holds timers costs its own fields.
 */
final class SerialLane extends MemberSet
    implements SerialExecutor, Worker.Draining, DelayedTask.Lane, TaskEnvelope.Owner {
  /** Tasks a lane runs before yielding its worker, if others wait in line. */
  static final int BUDGET = 128;

  /** The lane's carrier: drains the lane; handed back as the lane's queued tasks. */
  static final TaskKind KIND = new TaskKind() {
    @Override
    void run(Object arg, Accounting accounting, Worker worker) {
      ((SerialLane) arg).drain(worker);
    }

    @Override
    void handBack(Object arg, List<Runnable> out) {
      SerialLane lane = (SerialLane) arg;
      lane.handBackQueued(out);
      lane.unschedule();
    }

    @Override
    void handBackRunning(Object arg, List<Runnable> out) {
      ((SerialLane) arg).handBackQueued(out);
    }

    @Override
    boolean countsAsTask() {
      return false;
    }

    @Override
    boolean expiring(Object arg, List<Runnable> tasks) {
      return ((SerialLane) arg).expiring(tasks);
    }
  };

  /**
   * A sharded pool's shards, for a lane that takes its seat in whichever shard has one free each
   * time it activates (guarantee 14), rather than in one shard for its lifetime.
   */
  interface Shards {
    /** The shards' admissions. */
    Admission[] admissions();

    /** The index of the shard that placement offers first. */
    int first();

    /** Whether work waits in any shard's line (a lane that used its budget yields to it). */
    boolean hasWaiters();
  }

  /**
   * The queue of a lane that never had a task: read as empty, never offered to (only
   * {@link #queue()} offers, and makes the lane's own queue first).
   */
  private static final ConcurrentLinkedQueue<Runnable> NO_TASKS = new ConcurrentLinkedQueue<>();

  private static final VarHandle QUEUE;
  private static final VarHandle PLACE;
  private static final VarHandle SCHEDULED;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      QUEUE = l.findVarHandle(SerialLane.class, "queue", ConcurrentLinkedQueue.class);
      PLACE = l.findVarHandle(SerialLane.class, "place", TaskEnvelope.class);
      SCHEDULED = l.findVarHandle(SerialLane.class, "scheduled", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final AbstractWorkerPool pool;
  /**
   * The lane's own pool, or for a sharded pool its home shard: where its tasks are counted and its
   * rejections named. Its seat is taken there too, unless {@link #shards} is set.
   */
  private final Admission admission;
  /**
   * The admission whose line the lane's entry last joined (its own pool's, unless sharded):
   * whose lock makes the lane's admission atomic against that entry's expiry. Written before the
   * entry joins that line.
   */
  private volatile Admission lineOf;
  /**
   * The lane's tasks in order; {@link #NO_TASKS} until its first task is offered ({@link #queue()}):
   * a lane that only holds timers needs none until one is due (idle lanes with a pending timer may
   * be many, issue 33). Set once; volatile, since every publish-then-check on the queue reads it.
   */
  private volatile ConcurrentLinkedQueue<Runnable> queue = NO_TASKS;
  /** Whether the lane is dispatched (see the class notes); through SCHEDULED, no box per lane. */
  private volatile boolean scheduled;
  /**
   * The lane's place in the pool's line: its one entry, reused for each dispatch that must wait
   * for a seat, once its last trip has ended ({@link TaskEnvelope#reset}); a new one only while the
   * last is still on its way. Giving up the place is cancelling this entry. (A dispatch that finds
   * a free seat needs no entry; a subpool's lane gets a new entry each time, since a subpool's
   * envelope binds its place in the parent once.)
   *
   * <p>Whoever uses the entry takes it out of this field first (get and set null), so one thread
   * at a time owns it: a dispatch (which resets it and hands it to the pool) and
   * {@link #leaveLine} (which cancels it) never act on it together, and a cancel never reaches the
   * next trip of an entry it saw on an earlier one. A dispatch publishes the entry only after the
   * hand-off, so a cancel never finds it waiting but not yet linked in line. Null while in use, or
   * if the lane has never been dispatched.
   */
  @SuppressWarnings("unused") // through PLACE
  private volatile TaskEnvelope place;
  /**
   * Whether the lane, one unit, was admitted: it got a seat, or admitted work entered it. Only ever
   * set (false to true); set under the line's lock while an entry of a first dispatch may wait
   * there ({@link #becomeAdmitted}).
   */
  private volatile boolean admitted;
  /**
   * The shard whose line refused the last dispatch (and counted it); written and read by the
   * thread that holds {@code scheduled}.
   */
  private Admission refusedIn;
  private volatile boolean closed;

  /**
   * A lane of {@code pool}, counted in {@code admission}: the pool's own, or for a sharded pool
   * (whose lanes take their seats in any shard) the home shard's.
   */
  SerialLane(AbstractWorkerPool pool, Admission admission) {
    this.pool = pool;
    this.admission = admission;
    this.lineOf = admission;
  }

  @Override
  public void execute(Runnable submitted) {
    AbstractWorkerPool.requireTask(submitted);
    checkOpen();
    offer(pool.decorate(submitted));
  }

  @Override
  public TaskHandle enqueue(Runnable submitted) {
    AbstractWorkerPool.requireTask(submitted);
    checkOpen();
    LaneTask task = new LaneTask(pool.decorate(submitted));
    offer(task);
    return task;
  }

  /** Appends an accepted task: the lane's first dispatch in the caller's mode, or admitted work. */
  private void offer(Runnable task) {
    if (!admitted) {
      // The first dispatch holds the pool ({@link #hold}) from before it marks the lane dispatched
      // until it has landed. Taken and given back outside the first-dispatch lock: the release may
      // end a shut-down pool, whose whenTerminated() dependents then run on this thread, and must
      // not run while it holds a lock the lane's other callers wait for (review r15, F1).
      Admission held = hold();
      if (held == null) {
        throw admission.closed(); // terminated since checkOpen
      }
      try {
        synchronized (queue()) { // the first dispatch's lock (no object of its own)
          if (!admitted) {
            admit(task);
            refuseIfClosed(task);
            return;
          }
        }
      } finally {
        held.release();
      }
    }
    enter(task);
    refuseIfClosed(task);
  }

  @Override
  public void executeAdmitted(Runnable submitted) {
    AbstractWorkerPool.requireTask(submitted);
    checkOpen();
    Runnable task = pool.decorate(submitted);
    becomeAdmitted();
    enter(task);
    refuseIfClosed(task);
  }

  /**
   * Admits the lane under the line's lock, atomic with respect to the expiry of an entry that
   * waits for the lane's first seat ({@link #expiring}): either that expiry comes later and finds
   * the lane admitted (the entry waits on, with no deadline), or it came first and took only
   * unadmitted tasks, left the lane not dispatched, and the admitted work dispatches it afresh.
   */
  private void becomeAdmitted() {
    if (!admitted) {
      // Under the lock of the line the entry joined; if a first dispatch moved it to another
      // shard's line meanwhile, under that one too (an expiry there then sees the lane admitted).
      for (Admission a = lineOf; ; ) {
        Admission line = a;
        line.line.underLock(() -> {
          admitted = true;
          // The entry waiting for the lane's first seat can no longer be shed (its expiry will
          // find the lane admitted): adaptive LIFO must not pass it over. One its dispatch has
          // not published yet is pinned by that dispatch (publish the place, then check).
          TaskEnvelope e = place;
          if (e != null) {
            line.pin(e);
          }
          return true;
        });
        Admission now = lineOf;
        if (now == a) {
          return;
        }
        a = now;
      }
    }
  }

  /**
   * Under the line's lock, as the deadline of the lane's entry passes (only a first dispatch arms
   * one): false if the lane was admitted meanwhile. Otherwise every queued task expires (none was
   * admitted: admitting takes this lock) and {@code scheduled} is cleared, so that the next
   * execute tries admission afresh; a ride-along checks {@code scheduled} under this lock too.
   */
  private boolean expiring(List<Runnable> tasks) {
    if (admitted) {
      return false;
    }
    for (Runnable t; (t = queue.poll()) != null; ) {
      // Counted in the lane's own pool (a sharded pool's lane: its home shard, whichever shard's line
      // it waited in), before a handle can read EXPIRED (see Accounting.notExpired).
      admission.accounting.expired();
      if (!(t instanceof LaneTask l) || l.transition(TaskEnvelope.QUEUED, TaskEnvelope.EXPIRED)) {
        admission.accounting.withdrawn();
        tasks.add(t);
      } else {
        // withdrawn by its handle meanwhile, and counted by its cancel
        admission.accounting.notExpired();
      }
    }
    scheduled = false;
    return true;
  }

  /**
   * Publish, then check, against {@link #close}: the task is in the queue; if the lane closed
   * meanwhile, the task is taken back and refused, unless close (or the carrier) already took it,
   * in which case it was withdrawn as a pending task (or ran). Either way none stays in a closed
   * lane's queue, counted as accepted and never run.
   */
  private void refuseIfClosed(Runnable task) {
    if (closed && takeBack(task)) {
      leaveLine(); // close may have seen our task and kept the lane's place: give it up now
      throw admission.laneClosed();
    }
  }

  /**
   * Under the first-dispatch lock and a hold on the pool ({@link #offer}): the lane's first
   * dispatch, in the caller's mode. The hold lasts until the lane has landed, or was refused and
   * what rode along meanwhile was dispatched again.
   */
  private void admit(Runnable task) {
    queue().offer(task);
    admission.accounting.accepted(); // before the hand-off: no snapshot shows it completed first
    while (!SCHEDULED.compareAndSet(this, false, true)) {
      // The lane is dispatched already (its entry waits for the first seat, or a carrier or a due
      // timer holds it): this task rides along. Checked under the line's lock against an expiry,
      // which takes the queued tasks and clears the flag in one step: still set means an expiry,
      // if any, comes later and takes this task too; cleared means dispatch again.
      if (lineOf.line.underLock(() -> scheduled)) {
        return;
      }
    }
    if (!queue.contains(task)) {
      // The expiry that cleared the flag took this task too (it hears of it), whether it cleared
      // it before our first look or while we rode along: dispatching the emptied lane would admit
      // it with no task of its own, or count a rejection that nobody throws (a full line). Give
      // the flag back, then look again (admitted work that saw the flag set relied on us).
      unschedule();
      return;
    }
    boolean seated;
    try {
      seated = dispatch(Mode.ENQUEUE);
    } catch (RuntimeException rejected) {
      boolean withdrawn = takeBack(task);
      if (!withdrawn) {
        // Another dispatch of this lane, or close, took the task meanwhile: it was accepted after
        // all, and nobody throws the rejection the line counted.
        notRefused();
      }
      scheduled = false;
      redispatch(); // what arrived meanwhile was admitted work
      if (withdrawn) {
        throw rejected;
      }
      return;
    }
    if (seated) {
      admitted = true; // else its carrier admits it when it runs, unless the entry expires first
    }
  }

  /**
   * Takes a task that could not be dispatched back out of the queue. False if someone else took it
   * first (a drain started by a concurrent call or a due timer, or {@code shutdownNow}): then the
   * task was accepted, and the caller must not report a rejection for a task that runs.
   */
  private boolean takeBack(Runnable task) {
    if (!queue.remove(task)
        || task instanceof LaneTask l && !l.transition(TaskEnvelope.QUEUED, TaskEnvelope.CLOSED)) {
      return false;
    }
    admission.accounting.withdrawn();
    return true;
  }

  /** Admitted work: queue it and make sure the lane is dispatched. */
  private void enter(Runnable task) {
    queue().offer(task);
    admission.accounting.accepted();
    boolean dispatched;
    try {
      dispatched = scheduleAdmitted();
    } catch (RejectedExecutionException terminated) {
      boolean own = takeBack(task);
      if (!own) {
        notRefused(); // as in admit
      }
      endLeftovers(); // what rode along can run nowhere now
      if (own) {
        throw terminated;
      }
      return;
    }
    // Not dispatched: the pool terminated before this call could hold it, and our task is taken
    // back and refused, unless someone took it first (a drain that ran it, a close, a
    // shutdownNow). Terminated although dispatched is a last guard: the lane's dispatcher held the
    // pool until it landed, and the lane drains what it holds before its seat goes.
    if ((!dispatched || pool.isTerminated()) && takeBack(task)) {
      throw admission.closed();
    }
  }

  /**
   * Sends the lane to the pool: as a plain task if a seat is free, else in its entry (which waits
   * in line; in {@link Mode#ENQUEUE}, the first dispatch, under the pool's line deadline); by the
   * thread that set {@code scheduled} only. Throws as the pool's enqueue does (a rejection in
   * {@link Mode#ENQUEUE}; only a terminated pool refuses {@link Mode#ADMITTED}).
   *
   * @return true if the lane took a seat at once, false if its entry was put in line
   */
  private boolean dispatch(Mode mode) {
    Admission a = admission;
    Shards shards = shards();
    if (shards == null) {
      if (a.tryPlacePlain(KIND, this, mode)) {
        return true; // a free seat: queued for a worker as a plain task, no entry needed
      }
    } else {
      // A sharded pool's lane activates in whichever shard has a free seat now; only when every
      // shard was full when it looked does it wait in (or is it rejected by) the first one's line.
      Admission[] all = shards.admissions();
      int first = shards.first();
      for (int i = 0; i < all.length; i++) {
        if (all[(first + i) % all.length].tryPlacePlain(KIND, this, mode)) {
          return true;
        }
      }
      if (mode == Mode.ADMITTED) {
        return waitInLiveShard(all, first);
      }
      a = all[first];
    }
    return waitInLine(a, mode);
  }

  /**
   * Admitted work of a sharded pool waits in the first shard whose line still takes it: shards
   * shut down together but terminate one by one, and a terminated shard refuses what a sibling
   * that still runs would take (review r7, F3). Refused only when every shard is terminated.
   */
  private boolean waitInLiveShard(Admission[] all, int first) {
    for (int i = 0; ; i++) {
      Admission a = all[(first + i) % all.length];
      try {
        return waitInLine(a, Mode.ADMITTED);
      } catch (RejectedExecutionException terminated) {
        if (i == all.length - 1) {
          throw terminated;
        }
        a.accounting.notRejected(); // counted by the shard, thrown by no call: the next one takes it
      }
    }
  }

  /** The lane's entry joins {@code a}'s line (or takes a seat that came free meanwhile). */
  private boolean waitInLine(Admission a, Mode mode) {
    TaskEnvelope e = (TaskEnvelope) PLACE.getAndSet(this, null);
    // An entry is reused only in the line of the shard it belongs to (its owner withdraws it).
    if (e == null || e.owner != a || !e.reset()) {
      e = a.newEntry(KIND, this);
    }
    boolean deadline = mode == Mode.ENQUEUE && a.shedsLine();
    if (deadline) {
      e.keepFromReuse(); // its timer must never meet a later trip of the entry
    }
    lineOf = a; // before the entry joins: an admission racing its expiry locks this line
    boolean seated;
    refusedIn = null;
    try {
      seated = a.enqueue(e, mode);
      PLACE.setVolatile(this, e);
      if (mode == Mode.ENQUEUE && !seated && admitted) {
        a.pin(e); // admitted as it joined, before its place was published: see becomeAdmitted
      }
      if (deadline && !seated) {
        // Armed after publishing: an expiry clears scheduled, and a dispatch that follows must
        // not find this entry unpublished and then see it overwrite its own.
        a.armLineDeadline(e);
      }
    } catch (RejectedExecutionException refused) {
      // Counted there (the line refused it, or no timer could be armed); a caller that finds its
      // task taken meanwhile takes the count back (notRefused).
      refusedIn = a;
      throw refused;
    }
    if (closed || queue.isEmpty()) {
      // Publish (the place), then check: a racing close, execute or cancel may have emptied the
      // lane before our place was published, and found no place to give up.
      leaveLine();
    }
    return seated;
  }

  /** Takes back the rejection the last refused dispatch counted, which no call throws. */
  private void notRefused() {
    Admission a = refusedIn;
    if (a != null) {
      refusedIn = null;
      a.accounting.notRejected();
    }
  }

  /**
   * Dispatches the lane unless it is dispatched already, under a hold on the pool ({@link #hold}):
   * a task that finds the lane dispatched relies on its dispatcher, whose hold keeps the pool from
   * terminating until the lane has landed. False, with nothing done or counted, if the pool is
   * terminated: each caller with a task in the queue then takes its own back (nobody rides along on
   * a dispatch that never began). Throws only if a dispatch under a hold was refused anyway.
   */
  private boolean scheduleAdmitted() {
    if (scheduled) {
      return true; // its dispatcher holds the pool, or the lane landed: the tasks queued ride along
    }
    Admission held = hold();
    if (held == null) {
      return false;
    }
    try {
      if (SCHEDULED.compareAndSet(this, false, true)) {
        try {
          dispatch(Mode.ADMITTED);
        } catch (RejectedExecutionException refused) {
          scheduled = false;
          throw refused;
        }
      }
      return true;
    } finally {
      held.release();
    }
  }

  /**
   * A hold on the pool for a dispatch of this lane: the pool does not terminate until it is
   * released. Null if it is terminated. Taken in the lane's own pool; for a sharded pool, in its
   * home shard or, once that terminated, in another shard that has not: shards terminate one by
   * one, and a held shard's line takes the lane's admitted work ({@link #waitInLiveShard}).
   */
  private Admission hold() {
    if (admission.hold()) {
      return admission;
    }
    Shards shards = shards();
    if (shards != null) {
      for (Admission a : shards.admissions()) {
        if (a != admission && a.hold()) {
          return a;
        }
      }
    }
    return null;
  }

  /**
   * A due delayed task enters the lane as admitted work; its handle takes it back out of the queue.
   * Null if the lane closed before it came due, and throws if the pool terminated: the timer then
   * completes cancelled. (The lane is its timers' owner itself: no object per lane for it.)
   */
  @Override
  public TaskHandle due(DelayedTask<?> task) {
    becomeAdmitted(); // a due timer is admitted work: the lane, one unit, is admitted (guarantee 6)
    enter(task);
    if (this.closed && takeBack(task)) {
      return null;
    }
    return new QueuedTask(task);
  }

  private void checkOpen() {
    if (closed) {
      throw admission.laneClosed();
    }
    admission.checkOpen();
  }

  /** Runs on a pool worker: runs queued tasks in order until the lane is empty or yields. */
  private void drain(Worker w) {
    w.lane = this;
    if (!admitted) {
      admitted = true; // its first seat: it never expires from now on
    }
    try {
      int ran = 0;
      for (;;) {
        Runnable t = queue.poll();
        if (t == null) {
          scheduled = false;
          if (queue.isEmpty() || !SCHEDULED.compareAndSet(this, false, true)) {
            return;
          }
          continue;
        }
        if (closed) {
          discard(t);
          continue;
        }
        if (t instanceof LaneTask l) {
          if (!l.start(w)) {
            continue; // withdrawn by its handle, which counted it and may not have removed it yet
          }
          try {
            runOne(l.task(), w);
          } finally {
            l.finish();
          }
        } else {
          runOne(t, w);
        }
        if (++ran >= BUDGET && hasWaiters()) {
          dispatch(Mode.ADMITTED); // yield the worker: rejoin the end of the line (a new entry)
          return;
        }
      }
    } finally {
      w.lane = null;
    }
  }

  /** Whether work waits in line where this lane takes its seats (its pool's, or any shard's). */
  private boolean hasWaiters() {
    Shards shards = shards();
    return shards != null ? shards.hasWaiters() : admission.hasWaiters();
  }

  /**
   * A sharded pool's shards, where the lane looks for a seat at each activation; else null. Read
   * from the pool, not kept per lane (idle lanes may be many, issue 33).
   */
  private Shards shards() {
    return pool instanceof ShardedPool sharded ? sharded.laneShards() : null;
  }

  private void runOne(Runnable t, Worker w) {
    boolean returned = false;
    try {
      admission.accounting.run(t, w);
      returned = true;
    } finally {
      if (!returned) {
        // The failure handler threw and this worker dies: the lane must not stall with it.
        scheduled = false;
        redispatch();
      }
    }
  }

  /**
   * Dispatches what is left in the queue. Its callers hold the pool (a hold, or the seat of the
   * worker that runs them), so it is not expected to be terminated. If it is all the same, nothing
   * can run the tasks: a refusal, which no call throws, is taken back, and each task ends as a
   * closed lane's does (review r7, F4: it stayed in a queue nobody dispatched, and the refusal was
   * counted).
   */
  private void redispatch() {
    if (!queue.isEmpty()) {
      try {
        if (!scheduleAdmitted()) {
          endLeftovers();
        }
      } catch (RejectedExecutionException terminated) {
        notRefused();
        endLeftovers();
      }
    }
  }

  /**
   * Every queued task ends unrun, withdrawn, as a closed lane's does: by {@link #close}, and after a
   * dispatch the terminated pool refused.
   */
  private void endLeftovers() {
    for (Runnable r; (r = queue.poll()) != null; ) {
      discard(r);
    }
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
    AbstractWorkerPool.requireTask(task);
    Objects.requireNonNull(unit, "unit must not be null");
    checkOpen();
    // Not an admission: the task takes no thread until it is due, and is admitted work then.
    return startTimer(new DelayedTask<Void>(pool.decorate(task, false), this, pool),
        delay <= 0 ? 0 : unit.toNanos(delay));
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, long initialDelay, long period,
      TimeUnit unit) {
    return schedulePeriodic(task, initialDelay, period, unit, "period", 1);
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, long initialDelay, long delay,
      TimeUnit unit) {
    return schedulePeriodic(task, initialDelay, delay, unit, "delay", -1);
  }

  /** Each run enters the lane when due, as admitted work; the next is armed after it returned. */
  private ScheduledFuture<?> schedulePeriodic(Runnable task, long initialDelay, long period,
      TimeUnit unit, String what, int sign) {
    long signedPeriod = DelayedTask.checkPeriodic(task, period, unit, what, sign);
    checkOpen();
    return startTimer(
        new DelayedTask.Periodic(pool.decorate(task, false), signedPeriod, this, pool),
        initialDelay <= 0 ? 0 : unit.toNanos(initialDelay));
  }

  /** Starts a timer of this lane, or refuses it if the lane or the pool closed (also if racing). */
  private DelayedTask<Void> startTimer(DelayedTask<Void> task, long delayNanos) {
    DelayedTask<Void> started = task.start(delayNanos);
    if (started == null) {
      checkOpen();
      throw admission.laneClosed(); // the lane closed after our check
    }
    return started;
  }

  /** The lane's own queue, made by the first task offered to it; the one place that makes it. */
  private ConcurrentLinkedQueue<Runnable> queue() {
    ConcurrentLinkedQueue<Runnable> q = queue;
    if (q == NO_TASKS) {
      ConcurrentLinkedQueue<Runnable> made = new ConcurrentLinkedQueue<>();
      q = QUEUE.compareAndSet(this, NO_TASKS, made) ? made : queue;
    }
    return q;
  }

  /**
   * A pending timer of this lane: kept in the lane's own set (it is one, no object per lane) until
   * it is done, so that {@link #close} cancels it. Its lock is the lane's, which only this set
   * takes (the first-dispatch lock is the queue's): a schedule never waits for a first dispatch,
   * which may hold its lock as long as a thread factory blocks. The timer registers, then reads
   * {@code closed}; close sets it, then cancels every registered timer (publish, then check).
   */
  @Override
  public void register(DelayedTask<?> task) {
    addMember(task);
  }

  @Override
  public void forget(DelayedTask<?> task) {
    removeMember(task);
  }

  /** Timers of this lane not yet done; for tests. */
  int pendingTimers() {
    return memberCount();
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (Object t : snapshot()) { // outside the lock: a cancelled timer forgets itself
      ((DelayedTask<?>) t).cancel(false); // due or not: a pending task of the lane
    }
    endLeftovers(); // cancelled: they never ran and no longer count as accepted
    leaveLine();
  }

  /** A pending task of a closed lane: withdrawn from the counts, and its future (a timer) ends. */
  private void discard(Runnable t) {
    if (t instanceof LaneTask l && !l.transition(TaskEnvelope.QUEUED, TaskEnvelope.CLOSED)) {
      return; // withdrawn by its handle, which counted it
    }
    admission.accounting.withdrawn();
    if (t instanceof Future<?> f) {
      f.cancel(false);
    }
  }

  /**
   * With nothing left to run, the lane gives up its place in the pool by cancelling its entry
   * (waiting in line, or queued for a worker), so that waiting and maxWaiting count only live work;
   * an entry a worker has started just finds the queue empty. Only a dispatched lane can have a
   * place: an idle lane takes no lock.
   */
  private void leaveLine() {
    if (scheduled && queue.isEmpty()) {
      TaskEnvelope e = (TaskEnvelope) PLACE.getAndSet(this, null);
      if (e == null) {
        return; // not published yet (its dispatch checks after publishing), or another leaves
      }
      // Held from before the place goes until the queue was looked at again: a task offered
      // meanwhile relied on that place, and the pool must not terminate before it is dispatched.
      Admission held = hold();
      try {
        boolean left = e.cancel();
        PLACE.compareAndSet(this, null, e); // back for reuse, unless a dispatch published a newer one
        if (left) {
          unschedule();
        }
      } finally {
        if (held != null) {
          held.release();
        }
      }
    }
  }

  /**
   * Clears {@code scheduled} after the lane's place was taken back, then looks at the queue once
   * more (publish, then check): a task offered meanwhile saw the lane dispatched and relied on it.
   */
  private void unschedule() {
    scheduled = false;
    redispatch();
  }

  /** The handle of a due delayed task in this lane's queue: cancelling takes it back out. */
  private final class QueuedTask implements TaskHandle {
    private final Runnable task;
    private volatile boolean cancelled;

    QueuedTask(Runnable task) {
      this.task = task;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      if (!queue.remove(task)) {
        return false; // it started, or close or shutdownNow took it
      }
      cancelled = true;
      admission.accounting.withdrawn();
      if (queue.isEmpty()) {
        leaveLine(); // the lane's only pending task: its place in line goes too
      }
      return true;
    }

    @Override
    public boolean isCancelled() {
      return cancelled;
    }

    @Override
    public boolean isExpired() {
      return false; // due timers are admitted work: they never expire
    }

    /** Withdrawn, or out of the queue: taken by the lane's worker, a close or a shutdownNow. */
    @Override
    public boolean isDone() {
      return cancelled || !queue.contains(task);
    }
  }

  /**
   * A task of {@link #enqueue} and its handle: core's one task envelope ({@link TaskEnvelope}),
   * QUEUED while in the lane's queue. Its state decides, by CAS, who ends a task that has not
   * started: the lane's worker (to STARTED), its handle (to CANCELLED, counted by
   * {@link #withdrawnQueued}), a close or a refusal (to CLOSED), {@code shutdownNow} (to
   * HANDED_BACK), or the lane's expiry (to EXPIRED). A withdrawn task may stay in the queue for a moment; the worker
   * skips it uncounted. {@code cancel(true)} interrupts a running task through the envelope's
   * handshake, so the interrupt never reaches a later task.
   */
  final class LaneTask extends TaskEnvelope implements Runnable {
    LaneTask(Runnable task) {
      super(SerialLane.this, TaskKind.RUNNABLE, task, QUEUED);
    }

    /** The task as decorated; what the lane runs and hands back (as submitted). */
    Runnable task() {
      return (Runnable) arg;
    }

    /** Not run directly: the lane runs {@link #task()}. */
    @Override
    public void run() {
      throw new UnsupportedOperationException();
    }
  }

  /** A lane task never waits in the pool's line itself (the lane is its tasks' owner). */
  @Override
  public boolean withdraw(TaskEnvelope e) {
    return false;
  }

  /** A lane task was cancelled by its handle: it leaves the queue and the counts. */
  @Override
  public void withdrawnQueued(TaskEnvelope e) {
    admission.accounting.withdrawn();
    if (queue.remove(e) && queue.isEmpty()) {
      leaveLine(); // the lane's last pending task: its place in line goes too
    }
  }

  /** For shutdownNow: hands back the tasks queued in this lane. */
  @Override
  public void handBackQueued(List<Runnable> out) {
    for (Runnable t; (t = queue.poll()) != null; ) {
      if (!(t instanceof LaneTask l) || l.transition(TaskEnvelope.QUEUED, TaskEnvelope.HANDED_BACK)) {
        out.add(DecoratedTask.original(t)); // as submitted
      }
    }
  }
}
