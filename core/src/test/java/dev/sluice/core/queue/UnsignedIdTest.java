package dev.sluice.core.queue;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.core.CollectingOutlet;
import dev.sluice.core.EngineHarness;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.db.DataSources;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.JdbcEventStore;
import dev.sluice.testkit.TestDatabase;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 23, item 1: a queue whose {@code id} is {@code BIGINT UNSIGNED} holds a row whose id does
 * not fit a signed 64-bit value. Such a row cannot be carried as an event; it is made dead with its
 * reason, and every other row is delivered.
 */
class UnsignedIdTest {
  static EngineHarness h;

  @BeforeAll
  static void start() {
    h = EngineHarness.fresh(UnsignedIdTest.class).managerId("unsigned-id-test").start();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void aRowWhoseIdDoesNotFitASignedLongIsMadeDeadAndTheRestIsDelivered() throws Exception {
    TestDatabase db = h.db();
    db.exec(
        QueueConvention.createTableSql(
                "unsigned_id", List.of("`order_id` BIGINT NULL"), "sluice_queue ack_wait=30s")
            .replace("`id` BIGINT NOT NULL", "`id` BIGINT UNSIGNED NOT NULL"));
    db.exec("INSERT INTO unsigned_id (id, order_id) VALUES (18446744073709551615, 0)");
    for (int i = 1; i <= 20; i++) {
      db.exec("INSERT INTO unsigned_id (id, order_id) VALUES (" + i + ", " + i + ")");
    }
    h.awaitQueue("unsigned_id");
    CollectingOutlet out = h.subscribe("unsigned_id", 50);
    Set<Long> got = new HashSet<>();
    for (int i = 0; i < 20; i++) {
      Delivery e = out.next(15_000);
      assertThat(e).as("event %d of 20 delivered (got %s)", i + 1, got).isNotNull();
      got.add(e.id());
      h.ack("unsigned_id", out, e);
    }
    assertThat(got).hasSize(20);
    await()
        .atMost(10, SECONDS)
        .until(
            () ->
                h.queryLong("SELECT state FROM unsigned_id WHERE id = 18446744073709551615") == 3);
    assertThat(
            h.queryString(
                "SELECT reason FROM sluice_dead_reason WHERE queue = 'unsigned_id' AND id = -1"))
        .contains("18446744073709551615");
    await()
        .atMost(10, SECONDS)
        .until(() -> h.queryLong("SELECT COUNT(*) FROM unsigned_id WHERE state = 2") == 20);
    // The dead listing (sluice dead list) does not fail on it: it names it, with its reason.
    try (HikariDataSource ds = DataSources.pool("list", db.url(), db.user(), db.password(), 1)) {
      JdbcEventStore store =
          new JdbcEventStore(ds, h.engine().find("unsigned_id").orElseThrow().table());
      List<EventRow> dead = store.listDead(Long.MIN_VALUE, 100);
      assertThat(dead).isEmpty();
      assertThat(store.deadOutOfRange(100))
          .singleElement()
          .satisfies(
              x -> {
                assertThat(x.id()).isEqualTo("18446744073709551615");
                assertThat(x.reason()).contains("does not fit");
              });
    }
  }
}
