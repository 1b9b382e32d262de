package dev.sluice.manager.channel;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.client.EventProducer;
import dev.sluice.db.QueueConvention;
import dev.sluice.manager.Harness;
import dev.sluice.manager.config.ChannelConfig;
import dev.sluice.manager.config.ManagerConfig;
import dev.sluice.testkit.EmbeddedKafka;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * A manager gone between the broker's confirm and the ack's write: the event was published, its row
 * is still fired. The next manager publishes it again after its ack deadline, with the same shard,
 * queue and id (and the next attempt), so consumers can drop the duplicate; then it is acked.
 * Nothing is lost.
 */
class KafkaChannelCrashTest {

  @Test
  void aPublishWhoseAckNeverLandedIsPublishedAgainWithTheSameIdentity() throws Exception {
    try (EmbeddedKafka kafka = EmbeddedKafka.start();
        Harness h = new Harness(KafkaChannelCrashTest.class)) {
      kafka.createTopic("again", 1);
      ManagerConfig config =
          h.configBuilder()
              .channel(
                  new ChannelConfig(
                      "k",
                      ChannelConfig.Kind.KAFKA,
                      kafka.bootstrapServers(),
                      null,
                      null,
                      Duration.ofSeconds(3),
                      100,
                      null))
              .build();
      h.exec(
          QueueConvention.createTableSql(
              "ch_again",
              List.of("`order_id` BIGINT NULL"),
              "sluice_queue channel=k channel_target=again ack_wait=5s"));
      // Every ack of this table fails in the database, as if the manager died before writing it.
      h.exec(
          "CREATE TRIGGER no_acks BEFORE UPDATE ON ch_again FOR EACH ROW"
              + " IF NEW.state = 2 THEN SIGNAL SQLSTATE '45000'"
              + " SET MESSAGE_TEXT = 'the manager is gone'; END IF");
      h.startManager(config, Clock.systemUTC());
      await().atMost(10, SECONDS).until(() -> h.server().engine().find("ch_again").isPresent());
      long id;
      try (Connection c = h.connect()) {
        id = EventProducer.insert(c, "ch_again", Map.of("order_id", 7L));
      }
      List<ConsumerRecord<byte[], byte[]>> first = read(kafka, 1);
      assertThat(first).hasSize(1);
      h.stopManager();
      assertThat(h.queryLong("SELECT state FROM ch_again WHERE id = ?", id)).isEqualTo(1); // fired

      h.exec("DROP TRIGGER no_acks");
      h.startManager(config, Clock.systemUTC());
      await()
          .atMost(30, SECONDS)
          .until(() -> h.queryLong("SELECT state FROM ch_again WHERE id = ?", id) == 2);
      List<ConsumerRecord<byte[], byte[]>> got = read(kafka, 2);
      assertThat(got).hasSize(2);
      assertThat(got).allSatisfy(r -> assertThat(header(r, ChannelHeaders.ID)).isEqualTo("" + id));
      assertThat(got)
          .allSatisfy(r -> assertThat(header(r, ChannelHeaders.QUEUE)).isEqualTo("ch_again"));
      assertThat(got).allSatisfy(r -> assertThat(header(r, ChannelHeaders.SHARD)).isEqualTo("s1"));
      assertThat(got.stream().map(r -> header(r, ChannelHeaders.ATTEMPT)))
          .containsExactly("1", "2");
    }
  }

  static List<ConsumerRecord<byte[], byte[]>> read(EmbeddedKafka kafka, int n) {
    return TopicReader.read(kafka.bootstrapServers(), "again", n);
  }

  static String header(ConsumerRecord<byte[], byte[]> r, String name) {
    return TopicReader.header(r, name);
  }
}
