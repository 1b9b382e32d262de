package dev.sluice.manager.channel;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.client.EventProducer;
import dev.sluice.db.QueueConvention;
import dev.sluice.manager.Harness;
import dev.sluice.manager.config.ChannelConfig;
import dev.sluice.testkit.EmbeddedKafka;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A fault that names one destination (here a topic that does not exist while the cluster does not
 * create topics on demand) is the event's, not the broker's: it spends the event's attempts (dead
 * after max_attempts with Kafka's reason), the channel is not taken for down, and the other queues
 * on the same channel go on publishing at full speed. A real manager, a real database, an
 * in-process Kafka (KRaft) with {@code auto.create.topics.enable} off.
 */
class KafkaDestinationFaultTest {
  static EmbeddedKafka kafka;
  static Harness h;

  @BeforeAll
  static void start() {
    kafka = EmbeddedKafka.start(0, Map.of("auto.create.topics.enable", "false"));
    h = new Harness(KafkaDestinationFaultTest.class);
    h.startManager(
        h.configBuilder()
            .channel(
                new ChannelConfig(
                    "k",
                    ChannelConfig.Kind.KAFKA,
                    kafka.bootstrapServers(),
                    null,
                    null,
                    Duration.ofSeconds(5),
                    100,
                    List.of()))
            .build(),
        Clock.systemUTC());
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
            name, List.of("`payload` TEXT NULL"), "sluice_queue " + options));
    await().atMost(10, SECONDS).until(() -> h.server().engine().find(name).isPresent());
  }

  static long insert(String queue, String payload) throws Exception {
    Map<String, Object> cols = new HashMap<>();
    cols.put("payload", payload);
    try (Connection c = h.connect()) {
      return EventProducer.insert(c, queue, cols);
    }
  }

  static long count(String queue, int state) throws Exception {
    return h.queryLong("SELECT COUNT(*) FROM " + queue + " WHERE state = ?", state);
  }

  static String deadReason(String queue, long id) throws Exception {
    return h.queryString(
        "SELECT reason FROM sluice_dead_reason WHERE queue = ? AND id = ?", queue, id);
  }

  static double downs(String queue) {
    return h.registry
        .get("sluice.channel.failures")
        .tag("queue", queue)
        .tag("kind", "down")
        .counter()
        .count();
  }

  @Test
  void aMissingTopicKillsItsEventsWithKafkasReasonAndTheOtherQueuesOnTheChannelGoOn()
      throws Exception {
    kafka.createTopic("present", 1);
    queue("kd_present", "channel=k channel_target=present");
    queue(
        "kd_missing",
        "channel=k channel_target=no.such.topic max_attempts=2 min_backoff=100ms"
            + " max_backoff=100ms");
    List<Long> missing = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      missing.add(insert("kd_missing", "m" + i));
    }
    for (int i = 0; i < 30; i++) {
      insert("kd_present", "p" + i);
    }
    // Well within one publish timeout (5 s): the send thread is never held by the missing topic.
    await().atMost(4, SECONDS).until(() -> count("kd_present", 2) == 30);
    await().atMost(20, SECONDS).until(() -> count("kd_missing", 3) == 3);
    for (long id : missing) {
      assertThat(deadReason("kd_missing", id))
          .startsWith("max_attempts 2 reached; last attempt: nack:")
          .contains("no.such.topic")
          .contains("UnknownTopicOrPartition");
    }
    assertThat(downs("kd_missing")).isZero();
    assertThat(downs("kd_present")).isZero();
    assertThat(h.registry.get("sluice.channel.up").tag("queue", "kd_missing").gauge().value())
        .isEqualTo(1);
  }

  @Test
  void aTopicCreatedLaterIsPublishedTo() throws Exception {
    queue(
        "kd_later",
        "channel=k channel_target=later max_attempts=1000 min_backoff=200ms max_backoff=200ms");
    long id = insert("kd_later", "x");
    await().atMost(10, SECONDS).until(() -> downs("kd_later") + failures("kd_later") > 0);
    kafka.createTopic("later", 1);
    await().atMost(30, SECONDS).until(() -> count("kd_later", 2) == 1);
    assertThat(TopicReader.read(kafka.bootstrapServers(), "later", 1))
        .extracting(r -> TopicReader.header(r, ChannelHeaders.ID))
        .containsExactly(Long.toString(id));
  }

  static double failures(String queue) {
    return h.registry
        .get("sluice.channel.failures")
        .tag("queue", queue)
        .tag("kind", "refused")
        .counter()
        .count();
  }
}
