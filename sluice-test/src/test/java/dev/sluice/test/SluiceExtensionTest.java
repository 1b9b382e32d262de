package dev.sluice.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.db.EventState;
import dev.sluice.receiver.ReceivedEvent;
import dev.sluice.testkit.TestDatabases;
import java.sql.Connection;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The extension as a user would register it: the migrations, a real manager, the await helpers. */
class SluiceExtensionTest {
  @RegisterExtension
  static SluiceExtension sluice =
      SluiceExtension.builder().migrations("classpath:db/testapp").build();

  @Test
  void migrationsRunAndTheManagerServesTheQueue() throws Exception {
    assertThat(sluice.queueTables()).containsExactly("order_events");
    assertThat(sluice.manager().engine().find("order_events")).isPresent();
    String expected =
        System.getenv(TestDatabases.ENV_URL) != null
            ? TestDatabases.ENV_URL
            : System.getenv(TestDatabases.ENV_SERVER) != null
                ? "embedded " + TestDatabases.serverKind()
                : "embedded";
    assertThat(sluice.database().source()).isEqualTo(expected);
  }

  @Test
  void insertedEventIsDeliveredAndAcked() {
    RecordingReceiver r =
        sluice.receive(
            "order_events",
            e -> {
              if (e.getLong("order_id") == 13) {
                throw new IllegalStateException("unlucky order");
              }
            });
    long ok =
        sluice.insert(
            "order_events", Map.of("order_id", 7), EventOptions.builder().tenant("acme").build());
    long bad = sluice.insert("order_events", Map.of("order_id", 13));

    EventSnapshot acked = sluice.awaitAcked("order_events", ok);
    assertThat(acked.attempts()).isEqualTo(1);
    assertThat(acked.tenant()).isEqualTo("acme");
    EventSnapshot dead = sluice.awaitDead("order_events", bad);
    assertThat(dead.attempts()).isEqualTo(2); // max_attempts=2 in the migration
    assertThat(r.delivered()).extracting(ReceivedEvent::id).containsExactlyInAnyOrder(ok, bad, bad);

    assertThatThrownBy(() -> sluice.awaitAcked("order_events", bad))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("never going to ACKED");
    assertThat(sluice.event("order_events", 999_999)).isNull();
    assertThat(sluice.event("order_events", ok).state()).isEqualTo(EventState.ACKED);
  }

  @Test
  void theRegisteredExtensionInjectsParametersToo(
      SluiceExtension injected, SluiceDatabase database, DataSource dataSource) throws Exception {
    assertThat(injected).isSameAs(sluice);
    assertThat(database).isEqualTo(sluice.database());
    assertThat(dataSource).isSameAs(sluice.dataSource());
    try (Connection c = dataSource.getConnection();
        Connection d = database.connect()) {
      assertThat(c.getCatalog()).isEqualTo(d.getCatalog());
    }
  }
}
