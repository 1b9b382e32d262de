package dev.sluice.examples.demo;

import dev.sluice.examples.demo.PoisonLedger.Expect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Fault 7, an application's row lock: another transaction holds {@code SELECT ... FOR UPDATE} on a
 * pending row for {@link #HOLD}, from before it is due, while seven other events are due at the
 * same moment. Contained: the others are delivered on time (within {@link #ON_TIME} of their due
 * time); the locked row is delivered once, after the lock is released.
 */
final class RowLockFault implements Fault {
  private static final String QUEUE = "poison_lock";
  static final Duration HOLD = Duration.ofSeconds(10);
  static final Duration ON_TIME = Duration.ofSeconds(3);
  private final List<Long> others = new ArrayList<>();
  private long locked;
  private long dueNs;
  private long releaseNs;

  @Override
  public String name() {
    return "row lock held 10 s";
  }

  @Override
  public String queue() {
    return QUEUE;
  }

  @Override
  public void inject(PoisonRun run) throws Exception {
    dueNs = run.tables.nowNs() + Duration.ofMillis(1500).toNanos();
    for (int i = 0; i < 8; i++) {
      if (i == 3) {
        locked = run.add(QUEUE, "locked", null, dueNs, null, Expect.DELIVERED);
      } else {
        others.add(run.add(QUEUE, "due-together", null, dueNs, null, Expect.DELIVERED));
      }
    }
    try (Connection c = run.tables.connection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps =
          c.prepareStatement("SELECT id FROM `" + QUEUE + "` WHERE id = ? FOR UPDATE")) {
        ps.setLong(1, locked);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
        }
      }
      run.note(
          "fault 7: "
              + QUEUE
              + ": row "
              + locked
              + " locked FOR UPDATE for "
              + HOLD.toSeconds()
              + " s; 7 others due with it in 1.5 s");
      Thread.sleep(HOLD.toMillis());
      releaseNs = run.wallNs();
      c.commit();
    }
    run.note("fault 7: lock on row " + locked + " released");
    PoisonRun.awaitDb(
        Duration.ofSeconds(5),
        () -> run.allAcked(QUEUE, others) && run.tables.state(QUEUE, locked) == PoisonTables.ACKED);
  }

  @Override
  public Verdict judge(PoisonRun run) throws Exception {
    long worstMs = Long.MIN_VALUE;
    int undelivered = 0;
    for (long id : others) {
      List<PoisonTally.Sighting> s = run.tally.of(QUEUE, id);
      if (s.isEmpty()) {
        undelivered++;
      } else {
        worstMs = Math.max(worstMs, (s.get(0).seenNs() - dueNs) / 1_000_000);
      }
    }
    List<PoisonTally.Sighting> l = run.tally.of(QUEUE, locked);
    boolean othersOnTime = undelivered == 0 && worstMs <= ON_TIME.toMillis();
    boolean lockedOk = l.size() == 1 && l.get(0).seenNs() >= releaseNs;
    String lockedText =
        l.isEmpty()
            ? "never delivered"
            : String.format(
                "delivered %d time(s), first %d ms after the release",
                l.size(), (l.get(0).seenNs() - releaseNs) / 1_000_000);
    return Verdict.of(
        othersOnTime && lockedOk,
        String.format(
            "7 rows due with the locked one: %s; locked row %d %s",
            undelivered > 0
                ? undelivered + " never delivered"
                : "the latest " + worstMs + " ms after due (bound " + ON_TIME.toMillis() + ")",
            locked,
            lockedText));
  }
}
