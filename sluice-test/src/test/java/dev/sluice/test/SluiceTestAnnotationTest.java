package dev.sluice.test;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.EventProducer;
import dev.sluice.manager.SluiceServer;
import dev.sluice.receiver.ReceivedEvent;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@link SluiceTest} as a user would write it: parameters injected into the constructor (which,
 * with PER_CLASS, comes before beforeAll), a {@code @BeforeAll} method and the tests; an event
 * inserted in the application's transaction and received through the real manager.
 */
@SluiceTest(migrations = "classpath:db/testapp", timeout = "20s")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SluiceTestAnnotationTest {
  private final SluiceExtension sluice;
  private SluiceDatabase databaseSeenBeforeAll;

  SluiceTestAnnotationTest(SluiceExtension sluice) {
    this.sluice = sluice;
  }

  @BeforeAll
  void queueIsServedBeforeTheTests(SluiceDatabase database, SluiceServer manager) throws Exception {
    databaseSeenBeforeAll = database;
    assertThat(manager.engine().find("order_events")).isPresent();
    assertThat(sluice.queueTables()).containsExactly("order_events");
  }

  @Test
  void eventInsertedInTheApplicationsTransactionIsReceived(
      DataSource dataSource, @Receive("order_events") RecordingReceiver shipping)
      throws SQLException {
    long orderId;
    long eventId;
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      orderId = insertOrder(c, "teapot");
      eventId = EventProducer.insert(c, "order_events", Map.of("order_id", orderId));
      c.commit();
    }

    EventSnapshot acked = sluice.awaitAcked("order_events", eventId);

    assertThat(acked.attempts()).isEqualTo(1);
    assertThat(shipping.delivered()).hasSize(1);
    ReceivedEvent delivered = shipping.delivered().get(0);
    assertThat(delivered.id()).isEqualTo(eventId);
    assertThat(delivered.getLong("order_id")).isEqualTo(orderId);
  }

  @Test
  void rolledBackEventIsNeverThere(DataSource dataSource, SluiceDatabase database)
      throws SQLException {
    long eventId;
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      eventId = EventProducer.insert(c, "order_events", Map.of("order_id", insertOrder(c, "cup")));
      c.rollback();
    }
    assertThat(sluice.event("order_events", eventId)).isNull();
    try (Connection c = database.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM orders WHERE item = 'cup'")) {
      rs.next();
      assertThat(rs.getLong(1)).isZero();
    }
  }

  @Test
  void everyParameterComesFromTheOneExtension(
      SluiceExtension injected, SluiceDatabase database, SluiceServer manager) {
    assertThat(injected).isSameAs(sluice);
    assertThat(database).isEqualTo(sluice.database()).isEqualTo(databaseSeenBeforeAll);
    assertThat(manager).isSameAs(sluice.manager());
    assertThat(sluice.target()).isEqualTo("127.0.0.1:" + manager.port());
  }

  /** A nested class (here PER_METHOD) shares the enclosing class's database and manager. */
  @Nested
  class Nested_ {
    private final SluiceDatabase database;
    private RecordingReceiver beforeEach;

    Nested_(SluiceDatabase database) {
      this.database = database;
    }

    @BeforeEach
    void receiver(@Receive("order_events") RecordingReceiver receiver) {
      beforeEach = receiver;
    }

    @Test
    void sharesTheEnclosingClasssManager(SluiceExtension injected, SluiceServer manager) {
      assertThat(injected).isSameAs(sluice);
      assertThat(database).isEqualTo(sluice.database());
      assertThat(manager).isSameAs(sluice.manager());
      long id = injected.insert("order_events", Map.of("order_id", 99));
      injected.awaitAcked("order_events", id);
      assertThat(beforeEach.delivered()).extracting(ReceivedEvent::id).containsExactly(id);
    }
  }

  private static long insertOrder(Connection c, String item) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO orders (item) VALUES (?)", Statement.RETURN_GENERATED_KEYS)) {
      ps.setString(1, item);
      ps.executeUpdate();
      try (ResultSet keys = ps.getGeneratedKeys()) {
        keys.next();
        return keys.getLong(1);
      }
    }
  }
}
