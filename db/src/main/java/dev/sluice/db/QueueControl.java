package dev.sluice.db;

import java.util.HashMap;
import java.util.Map;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.Record;

/**
 * Operator switches per queue, kept in the Sluice-owned table {@code sluice_queue_control} on each
 * shard (migration {@code V2__sluice_queue_control.sql}). The CLI writes it; managers read it at
 * each discovery round, so a pause takes effect within {@code discovery_interval} on whichever
 * manager serves the queue.
 *
 * <p>Thread-safe: every call uses its own pooled connection.
 */
public final class QueueControl {
  public static final String TABLE = "sluice_queue_control";

  private final DSLContext ctx;

  public QueueControl(DataSource dataSource) {
    this.ctx = Jooq.context(dataSource);
  }

  /** Queues with a row, and whether each is paused. A queue without a row is not paused. */
  public Map<String, Boolean> paused() {
    Map<String, Boolean> out = new HashMap<>();
    for (Record r : ctx.fetch("SELECT queue, paused FROM " + TABLE)) {
      out.put(r.get(0, String.class), r.get(1, Integer.class) != 0);
    }
    return out;
  }

  /** Pauses or resumes a queue; {@code changed_ns} is the database's now. */
  public void setPaused(String queue, boolean paused) {
    QueueConvention.requireIdentifier("queue name", queue);
    ctx.execute(
        "INSERT INTO "
            + TABLE
            + " (queue, paused, changed_ns) VALUES (?, ?, "
            + QueueConvention.NOW_NS_SQL
            + ") ON DUPLICATE KEY UPDATE paused = VALUES(paused), changed_ns = VALUES(changed_ns)",
        queue,
        paused ? 1 : 0);
  }
}
