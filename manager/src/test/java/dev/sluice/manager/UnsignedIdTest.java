package dev.sluice.manager;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.db.DataSources;
import dev.sluice.db.QueueCatalog;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.JdbcEventStore;
import dev.sluice.proto.v1.Event;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 23, item 1: a queue whose {@code id} is {@code BIGINT UNSIGNED} holds a row whose id does
 * not fit a signed 64-bit value. Such a row cannot be carried as an event; it is made dead with its
 * reason, and every other row is delivered.
 */
class UnsignedIdTest {
  static Harness h;

  @BeforeAll
  static void start() {
    h = new Harness(UnsignedIdTest.class);
    h.startManager();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void aRowWhoseIdDoesNotFitASignedLongIsMadeDeadAndTheRestIsDelivered() throws Exception {
    h.exec(
        QueueConvention.createTableSql(
                "unsigned_id", List.of("`order_id` BIGINT NULL"), "sluice_queue ack_wait=30s")
            .replace("`id` BIGINT NOT NULL", "`id` BIGINT UNSIGNED NOT NULL"));
    h.exec("INSERT INTO unsigned_id (id, order_id) VALUES (18446744073709551615, 0)");
    for (int i = 1; i <= 20; i++) {
      h.exec("INSERT INTO unsigned_id (id, order_id) VALUES (" + i + ", " + i + ")");
    }
    await().atMost(10, SECONDS).until(() -> h.server().engine().find("unsigned_id").isPresent());
    RawReceiver r = h.rawReceiver("unsigned_id", "r1", 50);
    Set<Long> got = new HashSet<>();
    for (int i = 0; i < 20; i++) {
      Event e = r.events.poll(15, TimeUnit.SECONDS);
      assertThat(e).as("event %d of 20 delivered (got %s)", i + 1, got).isNotNull();
      got.add(e.getId());
      r.ack(e);
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
    try (HikariDataSource ds = DataSources.pool("list", h.url(), h.db.user(), h.db.password(), 1)) {
      QueueCatalog.Discovered d =
          new QueueCatalog(ds)
              .discover().stream().filter(x -> x.table().equals("unsigned_id")).findFirst().get();
      JdbcEventStore store = new JdbcEventStore(ds, d.queue());
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
