package dev.sluice.manager.grpc;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.client.AckSql;
import dev.sluice.client.EventProducer;
import dev.sluice.client.QueueColumns;
import dev.sluice.manager.Harness;
import dev.sluice.proto.v1.QueueStatsEntry;
import dev.sluice.proto.v1.QueueStatsRequest;
import dev.sluice.receiver.ReceiverStats;
import dev.sluice.receiver.SluiceReceiver;
import dev.sluice.receiver.TransactionalAck;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A handler that writes to the queue's database acks the event in its own transaction: its write
 * and the ack commit together or not at all, and the manager lets go of the event without retrying
 * it or counting a stale ack.
 */
class TransactionalAckTest {
  static Harness h;

  @BeforeAll
  static void start() throws Exception {
    h = new Harness(TransactionalAckTest.class);
    h.startManager();
    h.exec("CREATE TABLE shipments (id BIGINT AUTO_INCREMENT PRIMARY KEY, order_id BIGINT)");
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  static QueueStatsEntry stats(String queue) {
    return h.blocking()
        .queueStats(QueueStatsRequest.newBuilder().setQueue(queue).build())
        .getQueues(0);
  }

  @Test
  void writeAndAckCommitTogetherAndAFailureBeforeCommitIsRetried() throws Exception {
    // ack_wait far beyond the test: only the committed notice can end the manager's hold early.
    h.createServedQueue("tx_orders", "ack_wait=300s min_backoff=50ms max_backoff=100ms");
    List<Long> attempts = new CopyOnWriteArrayList<>();
    List<Boolean> ackApplied = new CopyOnWriteArrayList<>();
    SluiceReceiver receiver =
        h.closeLater(
            SluiceReceiver.builder()
                .target(h.target())
                .queue("tx_orders")
                .concurrency(1)
                .handler(
                    event -> {
                      attempts.add(event.attempt());
                      try (Connection c = h.connect()) {
                        c.setAutoCommit(false);
                        try (PreparedStatement ps =
                            c.prepareStatement("INSERT INTO shipments (order_id) VALUES (?)")) {
                          ps.setLong(1, event.getLong("order_id"));
                          ps.executeUpdate();
                        }
                        ackApplied.add(TransactionalAck.ack(c, event));
                        if (event.attempt() == 1) {
                          c.rollback();
                          throw new IllegalStateException("crash before commit");
                        }
                        c.commit();
                      }
                    })
                .build()
                .start());
    long id;
    try (Connection c = h.connect()) {
      id = EventProducer.insert(c, "tx_orders", Map.of("order_id", 77L));
    }

    await()
        .atMost(15, SECONDS)
        .until(() -> h.queryLong("SELECT state FROM tx_orders WHERE id = ?", id) == 2); // acked
    assertThat(h.queryLong("SELECT COUNT(*) FROM shipments WHERE order_id = 77"))
        .as("the write of the failed attempt rolled back with its ack")
        .isEqualTo(1);
    assertThat(attempts).containsExactly(1L, 2L);
    assertThat(ackApplied).containsExactly(true, true);
    assertThat(h.queryLong("SELECT epoch FROM tx_orders WHERE id = ?", id)).isEqualTo(2);
    await()
        .atMost(10, SECONDS)
        .untilAsserted(
            () -> assertThat(stats("tx_orders").getInFlight()).as("manager let go").isZero());
    ReceiverStats rs = receiver.stats();
    assertThat(rs.acked()).isEqualTo(1);
    assertThat(rs.nacked()).isEqualTo(1);
    assertThat(rs.ackStale()).as("the committed ack is not sent as an ack to re-apply").isZero();
    assertThat(h.registry.find("sluice.acks.stale").counter().count()).isZero();
    assertThat(h.registry.find("sluice.events.acked").tag("queue", "tx_orders").counter().count())
        .isEqualTo(1.0);
  }

  @Test
  void aStaleAttemptDoesNotApplyAndAutoCommitIsRefused() throws Exception {
    h.createServedQueue("tx_stale", "ack_wait=300s");
    List<Boolean> applied = new CopyOnWriteArrayList<>();
    List<Throwable> refused = new CopyOnWriteArrayList<>();
    h.closeLater(
        SluiceReceiver.builder()
            .target(h.target())
            .queue("tx_stale")
            .concurrency(1)
            .handler(
                event -> {
                  try (Connection c = h.connect()) {
                    try {
                      TransactionalAck.ack(c, event); // auto-commit on: refused
                    } catch (IllegalStateException e) {
                      refused.add(e);
                    }
                    c.setAutoCommit(false);
                    // Someone else (an operator, a timeout) moved the row on meanwhile.
                    try (PreparedStatement ps =
                        c.prepareStatement("UPDATE tx_stale SET epoch = epoch + 1 WHERE id = ?")) {
                      ps.setLong(1, event.id());
                      ps.executeUpdate();
                    }
                    applied.add(TransactionalAck.ack(c, event));
                    c.rollback();
                  }
                })
            .build()
            .start());
    try (Connection c = h.connect()) {
      EventProducer.insert(c, "tx_stale", Map.of("order_id", 1L));
    }
    await().atMost(15, SECONDS).until(() -> applied.size() == 1);
    assertThat(applied).containsExactly(false);
    assertThat(refused).singleElement().asString().contains("auto-commit");
    assertThatThrownBy(() -> TransactionalAck.sql("bad name", false))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(TransactionalAck.sql("q", true)).contains("`state` = 'acked'");
    // The manager's ack statement, shared with the SDK: the same SET and the same guard.
    assertThat(TransactionalAck.sql("q", true))
        .contains(AckSql.set("'acked'", QueueColumns.NOW_NS_SQL))
        .endsWith(AckSql.guard(1, "'fired'"));
  }
}
