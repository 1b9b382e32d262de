package dev.sluice.manager.channel;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.db.DataSources;
import dev.sluice.db.QueueCatalog;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.QueueOptions;
import dev.sluice.manager.config.ChannelConfig;
import dev.sluice.manager.config.ManagerConfig;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link ChannelBinding#check}: the problems that keep a channel-bound queue from being served, and
 * the binding it resolves; against tables of a real database where a table is involved.
 */
class ChannelBindingTest {
  static final ChannelConfig KAFKA =
      ChannelConfig.kafka("events-kafka", "127.0.0.1:9092")
          .withAllowedTargets(List.of("reminders.due", "payments.timeout"));
  static final ChannelConfig KAFKA_OPEN = ChannelConfig.kafka("open-kafka", "127.0.0.1:9092");
  static final ChannelConfig RABBIT =
      ChannelConfig.rabbitmq("events-rabbit", "amqp://guest:guest@127.0.0.1:5672/%2f")
          .withAllowedTargets(List.of("eu.orders", "us.orders"));
  static final List<ChannelConfig> CHANNELS = List.of(KAFKA, KAFKA_OPEN, RABBIT);
  static final Set<String> COLUMNS =
      Set.of("id", "tenant", "state", "epoch", "time_next", "Order_Id", "dest", "payload");

  static TestDatabase db;
  static com.zaxxer.hikari.HikariDataSource ds;
  static QueueCatalog catalog;

  @BeforeAll
  static void setUp() {
    db = TestDatabases.fresh(ChannelBindingTest.class);
    ds = DataSources.pool("test", db.url(), db.user(), db.password(), 2);
    catalog = new QueueCatalog(ds);
  }

  @AfterAll
  static void tearDown() {
    ds.close();
  }

  static ChannelBinding.Check check(String comment) {
    return ChannelBinding.check(
        "orders", QueueOptions.parseComment("orders", comment), CHANNELS, COLUMNS);
  }

  @Test
  void unknownChannelIsAProblemNamingTheConfiguredOnes() {
    ChannelBinding.Check c = check("sluice_queue channel=evnets-kafka");
    assertThat(c.ok()).isFalse();
    assertThat(c.binding()).isNull();
    assertThat(c.problem())
        .isEqualTo(
            "queue orders: channel binding: channel 'evnets-kafka' is not configured (channels of"
                + " the manager's configuration: events-kafka, open-kafka, events-rabbit)");
    assertThat(
            ChannelBinding.check(
                    "orders",
                    QueueOptions.parseComment("orders", "sluice_queue channel=x"),
                    List.of(),
                    COLUMNS)
                .problem())
        .contains("channel 'x' is not configured (channels of the manager's configuration: none)");
  }

  @Test
  void channelOptionsWithoutAChannelAreAProblem() {
    ChannelBinding.Check none = check("sluice_queue ack_wait=5s");
    assertThat(none.ok()).isTrue();
    assertThat(none.binding()).isNull();
    assertThat(none.problem()).isNull();
    assertThat(check("sluice_queue channel_target=t channel_receivers=true").problem())
        .isEqualTo(
            "queue orders: channel binding: channel_target, channel_receivers are given, but no"
                + " channel= names the channel to publish to");
  }

  @Test
  void columnsMustBeTheTablesOwn() {
    assertThat(
            check(
                    "sluice_queue channel=events-kafka channel_target_column=destination"
                        + " channel_key_column=tenant channel_body=body")
                .problems())
        .containsExactly(
            "channel_target_column=destination: the table has no such column (its own columns:"
                + " dest, order_id, payload)",
            "channel_key_column=tenant is a Sluice column; name one of the table's own columns (the"
                + " tenant is the default key)",
            "channel_body=body: the table has no such column (its own columns: dest, order_id,"
                + " payload)");
    assertThat(check("sluice_queue channel=events-kafka channel_body=id").problems())
        .containsExactly("channel_body=id is a Sluice column; name one of the table's own columns");
  }

  @Test
  void optionsMustFitTheChannelsKind() {
    assertThat(
            check("sluice_queue channel=events-kafka channel_routing_key=r channel_target=a:b")
                .problems())
        .containsExactly(
            "channel_routing_key is for rabbitmq channels; kafka channel events-kafka takes its"
                + " topic from channel_target or channel_target_column",
            "channel_target=a:b is not a Kafka topic name (1-249 letters, digits, '.', '_' or '-')");
    assertThat(
            check("sluice_queue channel=events-kafka channel_target=t channel_target_column=dest")
                .problems())
        .containsExactly(
            "give channel_target (one topic) or channel_target_column (a topic per row), not both");
    assertThat(check("sluice_queue channel=events-rabbit channel_key_column=order_id").problems())
        .containsExactly(
            "channel_key_column is for kafka channels (the record key); rabbitmq channel"
                + " events-rabbit routes by channel_routing_key or channel_target_column");
    assertThat(
            check(
                    "sluice_queue channel=events-rabbit channel_routing_key=r"
                        + " channel_target_column=dest")
                .problems())
        .containsExactly(
            "give channel_routing_key (one routing key) or channel_target_column (a routing key"
                + " per row), not both");
  }

  @Test
  void aTargetColumnNeedsAllowedTargets() {
    assertThat(check("sluice_queue channel=open-kafka channel_target_column=dest").problems())
        .containsExactly(
            "channel_target_column=dest needs the channel's allowed_targets, and kafka channel"
                + " open-kafka has none (a row may name only a topic the configuration allows)");
  }

  @Test
  void anAckWaitShorterThanThePublishTimeoutIsAProblemNamingBothAndTheFix() {
    // The channels' publish_timeout is the default 10s: an event whose publish may wait 10 s for
    // the broker must not come back (and be published again) after 5 s.
    ChannelBinding.Check c = check("sluice_queue channel=events-kafka ack_wait=5s");
    assertThat(c.binding()).isNull();
    assertThat(c.problem())
        .isEqualTo(
            "queue orders: channel binding: ack_wait=5s is shorter than kafka channel"
                + " events-kafka's publish_timeout=10s plus 2s: an event would come back, and be"
                + " published again, while its publish still waits for the broker's confirm; give"
                + " ack_wait=12s or more, or the channel a shorter publish_timeout");
    assertThat(check("sluice_queue channel=events-rabbit ack_wait=11999ms").problems())
        .singleElement()
        .asString()
        .startsWith("ack_wait=11999ms is shorter than rabbitmq channel events-rabbit's");
    assertThat(check("sluice_queue channel=events-kafka ack_wait=12s").ok()).isTrue();
    assertThat(check("sluice_queue channel=events-kafka").ok()).isTrue(); // the default, 30s
  }

  @Test
  void resolvesKafkaDefaultsAndExplicitSettings() {
    ChannelBinding d = check("sluice_queue channel=events-kafka").binding();
    assertThat(d)
        .isEqualTo(new ChannelBinding("orders", KAFKA, "orders", null, null, null, null, false));
    assertThat(d.jsonBody()).isTrue();
    assertThat(d.kafka()).isTrue();
    assertThat(d.describe()).isEqualTo("queue orders -> kafka channel events-kafka, topic orders");

    ChannelBinding b =
        check(
                "sluice_queue channel=events-kafka channel_target_column=DEST"
                    + " channel_key_column=order_id channel_body=Payload channel_receivers=true")
            .binding();
    assertThat(b.target()).isEqualTo("orders");
    assertThat(b.targetColumn()).isEqualTo("dest");
    assertThat(b.keyColumn()).isEqualTo("order_id");
    assertThat(b.bodyColumn()).isEqualTo("payload");
    assertThat(b.jsonBody()).isFalse();
    assertThat(b.receivers()).isTrue();
    assertThat(b.describe()).contains("topic from column dest");
  }

  @Test
  void resolvesRabbitDefaultExchangeAndRoutingKey() {
    ChannelBinding d = check("sluice_queue channel=events-rabbit channel_target=").binding();
    assertThat(d.target()).isEmpty();
    assertThat(d.routingKey()).isEqualTo("orders");
    assertThat(d.describe())
        .isEqualTo(
            "queue orders -> rabbitmq channel events-rabbit, the default exchange, routing key"
                + " orders");
    ChannelBinding x =
        check("sluice_queue channel=events-rabbit channel_target=ex channel_routing_key=a.b")
            .binding();
    assertThat(x.target()).isEqualTo("ex");
    assertThat(x.routingKey()).isEqualTo("a.b");
    ChannelBinding col =
        check("sluice_queue channel=events-rabbit channel_target=ex channel_target_column=dest")
            .binding();
    assertThat(col.targetColumn()).isEqualTo("dest");
    assertThat(col.routingKey()).isEqualTo("orders");
  }

  // ------------------------------------------------------------ real tables

  static QueueCatalog.Discovered discover(String table) {
    return catalog.discover().stream()
        .filter(d -> d.table().equals(table))
        .findFirst()
        .orElseThrow();
  }

  static ManagerConfig config(Map<String, Map<String, String>> queues) {
    ManagerConfig.Builder b =
        ManagerConfig.builder().shard("main", db.url(), db.user(), db.password());
    CHANNELS.forEach(b::channel);
    queues.forEach(b::queueOverride);
    return b.build();
  }

  @Test
  void aTableCommentBindsItsQueue() throws Exception {
    db.exec(
        QueueConvention.createTableSql(
            "bound_q",
            List.of("order_id BIGINT NOT NULL", "dest VARCHAR(64) NULL", "payload BLOB NULL"),
            "sluice_queue channel=events-kafka channel_target_column=dest"
                + " channel_key_column=order_id channel_body=payload"));
    QueueCatalog.Discovered d = discover("bound_q");
    assertThat(d.problem()).isNull();
    ChannelBinding.Check c = ChannelBinding.check(d.queue(), config(Map.of()));
    assertThat(c.problem()).isNull();
    assertThat(c.binding())
        .isEqualTo(
            new ChannelBinding(
                "bound_q", KAFKA, "bound_q", null, "dest", "order_id", "payload", false));
  }

  @Test
  void aColumnTheTableLacksKeepsTheQueueUnserved() throws Exception {
    db.exec(
        QueueConvention.createTableSql(
            "lacking_q",
            List.of("order_id BIGINT NOT NULL"),
            "sluice_queue channel=events-kafka channel_key_column=customer_id"));
    QueueCatalog.Discovered d = discover("lacking_q");
    assertThat(d.problem()).isNull(); // the comment is well formed...
    // ...but the binding is not: the queue is not served, and the problem says why.
    assertThat(ChannelBinding.check(d.queue(), config(Map.of())).problem())
        .isEqualTo(
            "queue lacking_q: channel binding: channel_key_column=customer_id: the table has no"
                + " such column (its own columns: order_id)");
    // A migration that adds the column makes it servable.
    db.exec("ALTER TABLE lacking_q ADD COLUMN customer_id VARCHAR(32) NULL");
    assertThat(ChannelBinding.check(discover("lacking_q").queue(), config(Map.of())).ok()).isTrue();
  }

  @Test
  void aMalformedChannelOptionIsAMalformedComment() throws Exception {
    db.exec(
        QueueConvention.createTableSql(
                "malformed_q", List.of("order_id BIGINT NOT NULL"), "sluice_queue")
            .replace("COMMENT='sluice_queue'", "COMMENT='sluice_queue channel=#bad'"));
    QueueCatalog.Discovered d = discover("malformed_q");
    assertThat(d.valid()).isFalse();
    assertThat(d.problem())
        .contains("queue malformed_q: malformed comment")
        .contains("channel='#bad' must be a channel of the manager's configuration");
  }

  @Test
  void theConfigurationBindsAQueueOverItsComment() throws Exception {
    db.exec(
        QueueConvention.createTableSql(
            "configured_q",
            List.of("order_id BIGINT NOT NULL", "dest VARCHAR(64) NULL"),
            "sluice_queue ack_wait=15s channel=open-kafka channel_target=from.comment"));
    QueueCatalog.Discovered d = discover("configured_q");
    ManagerConfig cfg =
        config(
            Map.of(
                "configured_q",
                Map.of(
                    "channel", "events-rabbit",
                    "channel_target", "",
                    "channel_target_column", "dest",
                    "channel_receivers", "true")));
    ChannelBinding.Check c = ChannelBinding.check(d.queue(), cfg);
    assertThat(c.problem()).isNull();
    assertThat(c.binding())
        .isEqualTo(
            new ChannelBinding(
                "configured_q", RABBIT, "", "configured_q", "dest", null, null, true));
    // Another queue is left to its comment.
    assertThat(ChannelBinding.check(d.queue(), config(Map.of())).binding().channel())
        .isEqualTo(KAFKA_OPEN);
  }
}
