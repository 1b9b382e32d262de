package dev.sluice.manager.channel;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.client.EventProducer;
import dev.sluice.db.QueueConvention;
import dev.sluice.manager.Harness;
import dev.sluice.manager.config.ChannelConfig;
import dev.sluice.manager.config.ManagerConfig;
import dev.sluice.testkit.EmbeddedKafka;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Queues bound to a Kafka channel, end to end: a real manager on a real database publishing to an
 * in-process Kafka broker, read back by a real consumer. Events are acked only once the broker
 * confirmed them; refusals go dead with the broker's reason; a broker that is down makes the queue
 * wait and loses nothing; an ack lost between the confirm and the table (as when the manager is
 * killed there) means a second publish with the same identity.
 */
class KafkaChannelTest {
  static EmbeddedKafka kafka;
  static Harness h;
  static final ObjectMapper JSON = new ObjectMapper();

  @BeforeAll
  static void start() {
    kafka = EmbeddedKafka.start();
    h = new Harness(KafkaChannelTest.class);
    h.startManager(config(), Clock.systemUTC());
  }

  static ManagerConfig config() {
    return h.configBuilder()
        .channel(
            new ChannelConfig(
                "k",
                ChannelConfig.Kind.KAFKA,
                kafka.bootstrapServers(),
                null,
                null,
                Duration.ofSeconds(3),
                100,
                List.of("route.a", "route.b")))
        .build();
  }

  @AfterAll
  static void stop() {
    if (h != null) {
      h.close();
    }
    if (kafka != null) {
      kafka.close();
    }
  }

  static void queue(String name, String options) throws Exception {
    h.exec(
        QueueConvention.createTableSql(
            name,
            List.of("`order_id` BIGINT NULL", "`payload` TEXT NULL"),
            "sluice_queue " + options));
    await().atMost(10, SECONDS).until(() -> h.server().engine().find(name).isPresent());
  }

  static long insert(String queue, long orderId, String payload) throws Exception {
    Map<String, Object> cols = new HashMap<>();
    cols.put("order_id", orderId);
    cols.put("payload", payload);
    try (Connection c = h.connect()) {
      return EventProducer.insert(c, queue, cols);
    }
  }

  static long count(String queue, int state) throws Exception {
    return h.queryLong("SELECT COUNT(*) FROM " + queue + " WHERE state = ?", state);
  }

  static String deadReason(String queue, long id) throws Exception {
    try (Connection c = h.connect();
        var ps =
            c.prepareStatement(
                "SELECT reason FROM sluice_dead_reason WHERE queue = ? AND id = ?")) {
      ps.setString(1, queue);
      ps.setLong(2, id);
      try (var rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  static List<ConsumerRecord<byte[], byte[]>> read(String topic, int n) {
    return TopicReader.read(kafka.bootstrapServers(), topic, n);
  }

  static String header(ConsumerRecord<byte[], byte[]> r, String name) {
    return TopicReader.header(r, name);
  }

  @Test
  void eventsArePublishedWithTheirIdentityAndAckedOnlyOnceConfirmed() throws Exception {
    kafka.createTopic("orders.due", 1);
    queue("ch_orders", "channel=k channel_target=orders.due channel_key_column=order_id");
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      ids.add(insert("ch_orders", 1000 + i, "p" + i));
    }
    await().atMost(20, SECONDS).until(() -> count("ch_orders", 2) == 40);
    List<ConsumerRecord<byte[], byte[]>> got = read("orders.due", 40);
    assertThat(got).hasSize(40);
    assertThat(got.stream().map(r -> Long.parseLong(header(r, ChannelHeaders.ID))))
        .containsExactlyInAnyOrderElementsOf(ids);
    ConsumerRecord<byte[], byte[]> first = got.get(0);
    assertThat(header(first, ChannelHeaders.QUEUE)).isEqualTo("ch_orders");
    assertThat(header(first, ChannelHeaders.SHARD)).isEqualTo("s1");
    assertThat(header(first, ChannelHeaders.ATTEMPT)).isEqualTo("1");
    assertThat(header(first, ChannelHeaders.DUE_NS)).matches("\\d+");
    JsonNode body = JSON.readTree(first.value());
    long orderId = body.get("order_id").asLong();
    assertThat(new String(first.key(), StandardCharsets.UTF_8)).isEqualTo(Long.toString(orderId));
    assertThat(body.get("payload").asText()).isEqualTo("p" + (orderId - 1000));
    assertThat(
            h.registry.get("sluice.channel.published").tag("queue", "ch_orders").counter().count())
        .isEqualTo(40);
  }

  @Test
  void aRowNamesItsTopicAmongTheAllowedOnesAndAnyOtherGoesDeadWithTheReason() throws Exception {
    kafka.createTopic("route.a", 1);
    kafka.createTopic("route.b", 1);
    queue(
        "ch_routed",
        "channel=k channel_target_column=payload max_attempts=2 min_backoff=100ms"
            + " max_backoff=100ms");
    long a = insert("ch_routed", 1, "route.a");
    long b = insert("ch_routed", 2, "route.b");
    long bad = insert("ch_routed", 3, "secrets");
    await().atMost(20, SECONDS).until(() -> count("ch_routed", 2) == 2);
    await().atMost(20, SECONDS).until(() -> count("ch_routed", 3) == 1);
    assertThat(read("route.a", 1))
        .extracting(r -> header(r, ChannelHeaders.ID))
        .containsExactly(Long.toString(a));
    assertThat(read("route.b", 1))
        .extracting(r -> header(r, ChannelHeaders.ID))
        .containsExactly(Long.toString(b));
    assertThat(deadReason("ch_routed", bad))
        .startsWith("max_attempts 2 reached; last attempt: nack:")
        .contains("'secrets'")
        .contains("route.a");
  }

  @Test
  void aMessageTooLargeForTheBrokerGoesDeadWithTheBrokersReason() throws Exception {
    kafka.createTopic("small", 1, Map.of("max.message.bytes", "2048"));
    queue(
        "ch_small",
        "channel=k channel_target=small max_attempts=2 min_backoff=100ms max_backoff=100ms");
    long big = insert("ch_small", 1, "x".repeat(10_000));
    long fine = insert("ch_small", 2, "small enough");
    await().atMost(30, SECONDS).until(() -> count("ch_small", 3) == 1);
    await().atMost(20, SECONDS).until(() -> count("ch_small", 2) == 1);
    assertThat(deadReason("ch_small", big)).contains("RecordTooLarge");
    assertThat(read("small", 1))
        .extracting(r -> header(r, ChannelHeaders.ID))
        .containsExactly(Long.toString(fine));
  }

  @Test
  void aBrokerThatIsDownMakesTheQueueWaitVisiblyAndLosesNothing() throws Exception {
    kafka.createTopic("outage", 1);
    queue("ch_outage", "channel=k channel_target=outage max_attempts=2 min_backoff=100ms");
    kafka.stopBroker();
    try {
      for (int i = 0; i < 20; i++) {
        insert("ch_outage", i, "o" + i);
      }
      await()
          .atMost(30, SECONDS)
          .until(
              () ->
                  h.registry.get("sluice.channel.up").tag("queue", "ch_outage").gauge().value()
                      == 0);
      assertThat(h.server().channels().status())
          .anySatisfy(
              s -> {
                assertThat(s.get("queue")).isEqualTo("ch_outage");
                assertThat(s.get("up")).isEqualTo(false);
              });
      // Waiting, not spending the events' lives (max_attempts=2 would have killed them), and the
      // manager stays ready for its other queues.
      await()
          .during(4, SECONDS)
          .atMost(6, SECONDS)
          .until(() -> count("ch_outage", 3) == 0 && count("ch_outage", 2) == 0);
      assertThat(h.server().ready()).isTrue();
    } finally {
      kafka.restartBroker();
    }
    await().atMost(60, SECONDS).until(() -> count("ch_outage", 2) == 20);
    assertThat(count("ch_outage", 3)).isZero();
    assertThat(read("outage", 20).stream().map(r -> header(r, ChannelHeaders.ID)).distinct())
        .hasSize(20);
    assertThat(h.registry.get("sluice.channel.up").tag("queue", "ch_outage").gauge().value())
        .isEqualTo(1);
  }

  @Test
  void anOrderedQueuesRecordsAreKeyedByTheOrderingKeyAndAKeysArriveInIdOrder() throws Exception {
    kafka.createTopic("accounts.due", 1);
    h.exec(
        QueueConvention.createTableSql(
                "ch_accounts",
                List.of("`account` VARCHAR(64) NULL", "`payload` TEXT NULL"),
                "sluice_queue channel=k channel_target=accounts.due ordering=key"
                    + " ordering_column=account")
            .replace(
                "  KEY `" + QueueConvention.POLL_INDEX + "`",
                "  KEY `"
                    + QueueConvention.ORDERING_INDEX
                    + "` (`account`, `state`, `id`),\n  KEY `"
                    + QueueConvention.POLL_INDEX
                    + "`"));
    await().atMost(10, SECONDS).until(() -> h.server().engine().find("ch_accounts").isPresent());
    List<String> accounts = List.of("acct-1", "acct-2", "acct-3");
    Map<Long, String> accountOf = new HashMap<>();
    try (Connection c = h.connect()) {
      for (int i = 0; i < 30; i++) {
        String account = accounts.get(i % accounts.size());
        accountOf.put(
            EventProducer.insert(c, "ch_accounts", Map.of("account", account, "payload", "p" + i)),
            account);
      }
    }

    await().atMost(30, SECONDS).until(() -> count("ch_accounts", 2) == 30);
    List<ConsumerRecord<byte[], byte[]>> got = read("accounts.due", 30);
    assertThat(got).hasSize(30);
    Map<String, List<Long>> idsByKey = new HashMap<>();
    for (ConsumerRecord<byte[], byte[]> r : got) {
      long id = Long.parseLong(header(r, ChannelHeaders.ID));
      String key = new String(r.key(), StandardCharsets.UTF_8);
      assertThat(key).as("the record key of event %d", id).isEqualTo(accountOf.get(id));
      assertThat(header(r, ChannelHeaders.ORDERING_KEY)).isEqualTo(key);
      idsByKey.computeIfAbsent(key, k -> new ArrayList<>()).add(id);
    }
    assertThat(idsByKey).containsOnlyKeys(accounts);
    // One partition: the records are in the order they were published.
    idsByKey.forEach(
        (key, ids) ->
            assertThat(ids).as("key %s", key).hasSize(10).isSorted().doesNotHaveDuplicates());
  }
}
