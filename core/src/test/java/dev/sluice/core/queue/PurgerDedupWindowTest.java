package dev.sluice.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.EventProducer;
import dev.sluice.client.InsertOutcome;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.JdbcEventStore;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code dedup_window}: the purger keeps acked and cancelled rows that carry a {@code dedup_key}
 * until the window, so their key stays taken that long, and deletes the others after {@code
 * purge_after} as before; a row older than the window goes whatever it carries, a dead row stays.
 */
class PurgerDedupWindowTest {
  static final long MINUTE = 60_000_000_000L;
  static final long HOUR = 60 * MINUTE;

  static TestQueues queues;

  @BeforeAll
  static void start() {
    queues = TestQueues.fresh(PurgerDedupWindowTest.class);
  }

  @AfterAll
  static void stop() {
    queues.close();
  }

  JdbcEventStore store;

  /** Inserts an event (keyed when {@code key} is not null) and settles it {@code agoNs} ago. */
  long settled(String key, long agoNs, boolean cancel) throws Exception {
    long id;
    try (Connection c = queues.ds.getConnection()) {
      id =
          key == null
              ? EventProducer.insert(c, "dedup_purge", Map.of())
              : EventProducer.insertUnique(c, "dedup_purge", key, Map.of()).id();
    }
    long at = store.serverTimeNs() - agoNs;
    if (cancel) {
      store.cancel(List.of(id), at);
    } else {
      store.fire(List.of(new EventRef(id, 0)), at + HOUR);
      store.ack(List.of(new EventRef(id, 1)), at);
    }
    return id;
  }

  static List<Long> ids() throws Exception {
    List<Long> out = new ArrayList<>();
    try (Connection c = queues.ds.getConnection();
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT id FROM dedup_purge ORDER BY id")) {
      while (r.next()) {
        out.add(r.getLong(1));
      }
    }
    return out;
  }

  @Test
  void keyedRowsStayUntilTheWindowAndTheOthersGoAfterPurgeAfter() throws Exception {
    queues.db.exec(
        QueueConvention.createTableSql(
            "dedup_purge", List.of(), "sluice_queue purge_after=1h dedup_window=1d", true));
    QueueTable table = queues.discover("dedup_purge");
    assertThat(table.hasDedupKey()).isTrue();
    store = new JdbcEventStore(queues.ds, table);
    QueueContext ctx = queues.context(table);
    ctx.clock().sync(store::serverTimeNs);
    Purger purger = new Purger(ctx);

    Map<String, Long> id = new HashMap<>();
    id.put("keyed 2h", settled("k-2h", 2 * HOUR, false));
    id.put("keyed cancelled 2h", settled("k-c-2h", 2 * HOUR, true));
    id.put("unkeyed 2h", settled(null, 2 * HOUR, false));
    id.put("unkeyed cancelled 2h", settled(null, 2 * HOUR, true));
    id.put("keyed 2d", settled("k-2d", 48 * HOUR, false));
    id.put("unkeyed 45m", settled(null, 45 * MINUTE, false));
    id.put("keyed 10m", settled("k-10m", 10 * MINUTE, false));
    long dead;
    try (Connection c = queues.ds.getConnection()) {
      dead = EventProducer.insertUnique(c, "dedup_purge", "k-dead", Map.of()).id();
    }
    queues.db.exec(
        "UPDATE dedup_purge SET state = 3, time_next = time_next - "
            + (72 * HOUR)
            + " WHERE id = "
            + dead);

    purger.run();

    assertThat(ids())
        .containsExactly(
            id.get("keyed 2h"),
            id.get("keyed cancelled 2h"),
            id.get("unkeyed 45m"),
            id.get("keyed 10m"),
            dead);
    try (Connection c = queues.ds.getConnection()) {
      assertThat(EventProducer.insertUnique(c, "dedup_purge", "k-2h", Map.of()))
          .isEqualTo(new InsertOutcome(id.get("keyed 2h"), true));
      InsertOutcome freed = EventProducer.insertUnique(c, "dedup_purge", "k-2d", Map.of());
      assertThat(freed.duplicate()).as("the window is over: the key is free").isFalse();
      queues.db.exec("DELETE FROM dedup_purge WHERE id = " + freed.id());
    }

    // A shorter purge_after, applied in place: the next pass reads the unkeyed rows that aged
    // past it since the previous pass (the 45-minute-old row), and still keeps the keyed ones.
    queues.db.exec(
        "ALTER TABLE dedup_purge COMMENT = 'sluice_queue purge_after=30m dedup_window=1d'");
    QueueTable shorter = queues.discover("dedup_purge");
    ctx.update(shorter, new JdbcEventStore(queues.ds, shorter));
    purger.run();
    assertThat(ids())
        .containsExactly(
            id.get("keyed 2h"), id.get("keyed cancelled 2h"), id.get("keyed 10m"), dead);

    // Without the window, keyed rows go after purge_after like the others; dead rows stay.
    queues.db.exec("ALTER TABLE dedup_purge COMMENT = 'sluice_queue purge_after=30m'");
    QueueTable plain = queues.discover("dedup_purge");
    ctx.update(plain, new JdbcEventStore(queues.ds, plain));
    purger.run();
    assertThat(ids()).containsExactly(id.get("keyed 10m"), dead);
  }
}
