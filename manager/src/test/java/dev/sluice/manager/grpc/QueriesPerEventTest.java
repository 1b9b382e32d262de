package dev.sluice.manager.grpc;

import static java.util.concurrent.TimeUnit.MINUTES;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.Harness;
import dev.sluice.receiver.SluiceReceiver;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Counts statements, not time: draining a backlog must stay far below one statement per event
 * (fires and acks are batched, polls read pages). A regression to per-event round trips fails here
 * without any wall-clock assertion.
 */
class QueriesPerEventTest {
  static final int EVENTS = 20_000;

  static Map<String, Long> status(Harness h) throws Exception {
    Map<String, Long> m = new HashMap<>();
    try (Connection c = h.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_select','Com_update','Com_commit',"
                    + "'Com_insert','Com_delete','Com_set_option','Questions')")) {
      while (rs.next()) {
        m.put(rs.getString(1), rs.getLong(2));
      }
    }
    return m;
  }

  @Test
  void drainingABacklogTakesFewStatementsPerEvent() throws Exception {
    try (Harness h = new Harness(QueriesPerEventTest.class)) {
      h.createQueue("count_q", "ack_wait=60s");
      for (int chunk = 0; chunk < EVENTS / 5000; chunk++) {
        StringBuilder sb = new StringBuilder("INSERT INTO count_q (order_id) VALUES ");
        for (int i = 0; i < 5000; i++) {
          sb.append(i == 0 ? "" : ",").append("(").append(i).append(")");
        }
        h.exec(sb.toString());
      }
      h.startManager();
      Map<String, Long> before = status(h);
      try (SluiceReceiver r =
          SluiceReceiver.builder()
              .target(h.target())
              .queue("count_q")
              .receiverId("counter")
              .concurrency(4)
              .maxInFlight(256)
              .handler(e -> {})
              .build()
              .start()) {
        await()
            .atMost(3, MINUTES)
            .pollInterval(Duration.ofMillis(500))
            .until(() -> h.queryLong("SELECT COUNT(*) FROM count_q WHERE state = 2") == EVENTS);
      }
      Map<String, Long> after = status(h);
      long updates = after.get("Com_update") - before.get("Com_update");
      long questions = after.get("Questions") - before.get("Questions");
      // One fire and one ack per event would be 2.0; batched it is about 0.02.
      assertThat((double) updates / EVENTS).as("UPDATEs per event").isLessThan(0.1);
      // Everything the server was asked, including polls, commits and this test's own probes.
      assertThat((double) questions / EVENTS).as("statements per event").isLessThan(0.3);
    }
  }
}
