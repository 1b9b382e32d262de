package dev.sluice.examples.demo;

/**
 * One fault of the poison demo ({@code sluice demo --poison}): injected while the demo runs, judged
 * once everything has settled. Each fault has a queue of its own (created before the run, unless
 * {@link #queue} is null), so that its damage can be told apart from another's.
 */
interface Fault {
  /** What is done wrong, for the report (e.g. "unknown state"). */
  String name();

  /** The fault's own queue, created and served with a receiver and canaries before the run. */
  String queue();

  /** The queue whose canaries must not stall for the fault to count as contained, if any. */
  default String watchedQueue() {
    return queue();
  }

  /** The comment its queue is created with. */
  default String comment() {
    return PoisonTables.COMMENT;
  }

  /** The statement that creates its queue (a poison table with {@link #comment}). */
  default String createSql() {
    return PoisonTables.createSql(queue(), comment());
  }

  /** Whether {@link Poison} starts the queue's receiver up front (false: the fault does). */
  default boolean receiverUpFront() {
    return true;
  }

  /** Injects the fault and waits for what must be watched while it happens. */
  void inject(PoisonRun run) throws Exception;

  /** Judges containment from what was recorded and what the tables hold now. */
  Verdict judge(PoisonRun run) throws Exception;

  /**
   * @param contained whether the fault stayed within what it concerns
   * @param seen what was seen, and on failure why it is not contained
   */
  record Verdict(boolean contained, String seen) {
    static Verdict of(boolean contained, String seen) {
      return new Verdict(contained, seen);
    }
  }
}
