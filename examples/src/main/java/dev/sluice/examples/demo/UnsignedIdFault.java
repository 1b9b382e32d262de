package dev.sluice.examples.demo;

import dev.sluice.examples.demo.PoisonLedger.Expect;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * An id that does not fit a signed 64-bit value: the queue's {@code id} is {@code BIGINT UNSIGNED}
 * and one row, due together with 20 others, has the id 2^64 - 1, which no event can carry.
 * Contained: the row ends dead with a reason Sluice recorded; the 20 others are delivered. (After
 * that row the table's AUTO_INCREMENT is used up, so this queue has no canaries: the demo's own
 * queue is watched instead.)
 */
final class UnsignedIdFault implements Fault {
  private static final String QUEUE = "poison_unsigned";
  static final String MAX = "18446744073709551615";
  private final List<Long> neighbours = new ArrayList<>();

  @Override
  public String name() {
    return "id 2^64-1 in a BIGINT UNSIGNED id";
  }

  @Override
  public String queue() {
    return QUEUE;
  }

  @Override
  public String watchedQueue() {
    return DemoDatabase.QUEUE;
  }

  @Override
  public String createSql() {
    return PoisonTables.createSql(QUEUE, comment())
        .replace("`id` BIGINT NOT NULL", "`id` BIGINT UNSIGNED NOT NULL");
  }

  @Override
  public boolean receiverUpFront() {
    return false;
  }

  @Override
  public void inject(PoisonRun run) throws Exception {
    long dueNs = run.tables.nowNs() + Duration.ofMillis(1500).toNanos();
    run.note("fault: " + QUEUE + ": a row with id " + MAX + " due with 20 others");
    for (int i = 0; i < 20; i++) {
      neighbours.add(run.add(QUEUE, "neighbour", null, dueNs, null, Expect.DELIVERED));
    }
    run.tables.execute(
        "INSERT INTO `" + QUEUE + "` (id, label, payload, time_next) VALUES (" + MAX + ", ?, ?, ?)",
        "max-id",
        new byte[0],
        dueNs);
    run.receivers.start(QUEUE, Duration.ofSeconds(10));
    PoisonRun.awaitDb(
        Duration.ofSeconds(10),
        () -> run.allAcked(QUEUE, neighbours) && state(run) == PoisonTables.DEAD);
  }

  private static int state(PoisonRun run) throws java.sql.SQLException {
    return run.tables.queryInt("SELECT state FROM `" + QUEUE + "` WHERE id = " + MAX);
  }

  @Override
  public Verdict judge(PoisonRun run) throws Exception {
    int state = state(run);
    // Recorded under the same 64 bits read as a signed value (-1): see sluice dead list.
    Optional<String> reason = run.tables.deadReason(QUEUE, -1L);
    String notAcked = run.notAcked(QUEUE, neighbours);
    boolean ok = state == PoisonTables.DEAD && reason.isPresent() && notAcked.isEmpty();
    return Verdict.of(
        ok,
        String.format(
            "row %s: state %d, dead reason %s; 20 neighbours %s",
            MAX,
            state,
            reason.map(r -> "'" + r + "'").orElse("none recorded"),
            notAcked.isEmpty() ? "all acked" : "not acked: " + notAcked));
  }
}
