package dev.sluice.manager.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.db.QueueOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code channels} and {@code queues} sections of sluice.yaml. */
class ChannelConfigTest {
  static final String SHARDS = "shards:\n  - {name: a, url: 'jdbc:mysql://a/q'}\n";

  @TempDir Path dir;

  ManagerConfig load(String yaml) throws Exception {
    return load(yaml, Map.of());
  }

  ManagerConfig load(String yaml, Map<String, String> env) throws Exception {
    Path f = dir.resolve("sluice.yaml");
    Files.writeString(f, SHARDS + yaml);
    return new ConfigLoader(env::get).load(f);
  }

  @Test
  void readsKafkaAndRabbitChannels() throws Exception {
    ManagerConfig c =
        load(
            """
            channels:
              - name: events-kafka
                kind: kafka
                bootstrap_servers: 127.0.0.1:9092
                properties: {linger.ms: "5", compression.type: zstd, sasl.jaas.config: "${JAAS}"}
                publish_timeout: 20s
                max_in_flight: 500
                allowed_targets: [reminders.due, payments.timeout]
              - name: events-rabbit
                kind: RabbitMQ
                uri: amqp://sluice:${RABBIT_PASSWORD}@mq.example:5672/%2f
            """,
            Map.of("JAAS", "secret-jaas", "RABBIT_PASSWORD", "p%40ss:w0rd"));
    assertThat(c.channels()).hasSize(2);
    ChannelConfig k = c.channel("events-kafka").orElseThrow();
    assertThat(k.kind()).isEqualTo(ChannelConfig.Kind.KAFKA);
    assertThat(k.bootstrapServers()).isEqualTo("127.0.0.1:9092");
    assertThat(k.properties())
        .containsEntry("linger.ms", "5")
        .containsEntry("compression.type", "zstd")
        .containsEntry("sasl.jaas.config", "secret-jaas");
    assertThat(k.publishTimeout()).isEqualTo(Duration.ofSeconds(20));
    assertThat(k.maxInFlight()).isEqualTo(500);
    assertThat(k.allowedTargets()).containsExactly("reminders.due", "payments.timeout");
    assertThat(k.allows("reminders.due")).isTrue();
    assertThat(k.allows("other")).isFalse();
    assertThat(k.kafkaSettings().producerConfig())
        .containsEntry("bootstrap.servers", "127.0.0.1:9092")
        .containsEntry("delivery.timeout.ms", "20000")
        .containsEntry("client.id", "sluice-events-kafka")
        .containsEntry("compression.type", "zstd");
    assertThat(k.toString()).doesNotContain("secret-jaas").contains("sasl.jaas.config");

    ChannelConfig r = c.channel("events-rabbit").orElseThrow();
    assertThat(r.kind()).isEqualTo(ChannelConfig.Kind.RABBITMQ);
    assertThat(r.uri()).isEqualTo("amqp://sluice:p%40ss:w0rd@mq.example:5672/%2f");
    assertThat(r.publishTimeout()).isEqualTo(ChannelConfig.DEFAULT_PUBLISH_TIMEOUT);
    assertThat(r.maxInFlight()).isEqualTo(ChannelConfig.DEFAULT_MAX_IN_FLIGHT);
    assertThat(r.allowedTargets()).isEmpty();
    assertThat(r.maskedUri()).isEqualTo("amqp://sluice:****@mq.example:5672/%2f");
    assertThat(r.toString()).doesNotContain("w0rd").contains("amqp://sluice:****@mq.example");
    assertThat(r.describe()).doesNotContain("w0rd");
    assertThat(c.toString()).doesNotContain("w0rd").doesNotContain("secret-jaas");
    assertThatThrownBy(r::kafkaSettings).hasMessageContaining("rabbitmq channel");
  }

  @Test
  void noChannelsIsTheDefault() throws Exception {
    ManagerConfig c = load("");
    assertThat(c.channels()).isEmpty();
    assertThat(c.queueOverrides()).isEmpty();
    assertThat(c.channel("x")).isEmpty();
  }

  @Test
  void eachErrorNamesTheEntryAndTheSetting() {
    bad("channels: {a: 1}\n", "'channels' must be a list of channels");
    bad("channels: [x]\n", "channels[0] must be a mapping");
    bad(
        "channels:\n  - {kind: kafka, bootstrap_servers: 'h:1'}\n",
        "channels[0]: 'name' is required");
    bad("channels:\n  - {name: k, bootstrap_servers: 'h:1'}\n", "channels[k]: 'kind' is required");
    bad(
        "channels:\n  - {name: k, kind: pulsar}\n",
        "channels[k].kind must be kafka or rabbitmq, was 'pulsar'");
    bad(
        "channels:\n  - {name: k, kind: kafka, bootstrap_server: 'h:1'}\n",
        "unknown setting 'channels[k].bootstrap_server'");
    bad(
        "channels:\n  - {name: 'a b', kind: kafka, bootstrap_servers: 'h:1'}\n",
        "channels[]: name must be 1-64 letters, digits");
    bad(
        "channels:\n  - {name: k, kind: kafka}\n",
        "channels[k]: bootstrap_servers is required for a kafka channel");
    bad(
        "channels:\n  - {name: k, kind: kafka, bootstrap_servers: 'h:1', uri: 'amqp://h/'}\n",
        "channels[k]: uri is for rabbitmq channels");
    bad(
        "channels:\n  - {name: k, kind: kafka, bootstrap_servers: 'h:1', properties: {acks: '1'}}\n",
        "channels[k]: kafka channel h:1: producer properties [acks] are set by Sluice");
    bad(
        "channels:\n  - {name: k, kind: kafka, bootstrap_servers: 'h:1', properties: [a]}\n",
        "channels[k].properties must be a mapping");
    bad(
        "channels:\n  - {name: k, kind: kafka, bootstrap_servers: 'h:1', publish_timeout: 50ms}\n",
        "channels[k]: publish_timeout must be from 100ms to 1h, was 50ms");
    bad(
        "channels:\n  - {name: k, kind: kafka, bootstrap_servers: 'h:1', publish_timeout: 5}\n",
        "channels[k].publish_timeout:");
    bad(
        "channels:\n  - {name: k, kind: kafka, bootstrap_servers: 'h:1', max_in_flight: 0}\n",
        "channels[k]: max_in_flight must be from 1 to 1000000, was 0");
    bad(
        "channels:\n  - {name: k, kind: kafka, bootstrap_servers: 'h:1', max_in_flight: lots}\n",
        "channels[k].max_in_flight must be a whole number, was 'lots'");
    bad(
        "channels:\n  - {name: k, kind: kafka, bootstrap_servers: 'h:1', allowed_targets: a}\n",
        "channels[k].allowed_targets must be a list");
    bad(
        "channels:\n  - {name: k, kind: kafka, bootstrap_servers: 'h:1',"
            + " allowed_targets: [a, a]}\n",
        "channels[k]: allowed_targets names 'a' twice");
    bad(
        "channels:\n  - {name: k, kind: kafka, bootstrap_servers: 'h:1',"
            + " allowed_targets: ['a/b']}\n",
        "channels[k]: allowed_targets: 'a/b' is not a Kafka topic name");
    bad(
        "channels:\n  - {name: r, kind: rabbitmq}\n",
        "channels[r]: uri is required for a rabbitmq channel");
    bad(
        "channels:\n  - {name: r, kind: rabbitmq, uri: 'amqp://h/', bootstrap_servers: 'h:1'}\n",
        "channels[r]: bootstrap_servers is for kafka channels");
    bad(
        "channels:\n  - {name: r, kind: rabbitmq, uri: 'amqp://h/', properties: {a: b}}\n",
        "channels[r]: properties are for kafka channels");
    bad(
        "channels:\n  - {name: r, kind: rabbitmq, uri: 'http://u:hunter2@h/'}\n",
        "channels[r]: uri 'http://u:****@h/' must start with amqp:// or amqps://");
    bad(
        "channels:\n  - {name: r, kind: rabbitmq, uri: 'amqp://u:hunter2@/'}\n",
        "channels[r]: uri 'amqp://u:****@/' names no host");
    bad(
        "channels:\n  - {name: r, kind: rabbitmq, uri: 'amqp://u:hunt@r2@h/'}\n",
        "channels[r]: uri 'amqp://u:****@h/' names no host (an '@', ':' or '/' in the user or"
            + " password is written %40");
    bad(
        "channels:\n  - {name: r, kind: rabbitmq, uri: 'amqp://u:hun ter2@h/'}\n",
        "channels[r]: uri 'amqp://u:****@h/' is not a valid URI");
    bad(
        "channels:\n  - {name: k, kind: kafka, bootstrap_servers: 'h:1'}\n"
            + "  - {name: k, kind: rabbitmq, uri: 'amqp://h/'}\n",
        "channels: the name 'k' is used twice");
  }

  @Test
  void aUriErrorNeverShowsThePassword() {
    for (String uri :
        List.of(
            "http://u:hunter2@h/",
            "amqp://u:hunter2@/",
            "amqp://u:hunter2@x@h/",
            "amqp://u:hunter2@h:port/",
            "amqp://u:hun ter2@h/",
            "u:hunter2@h")) {
      assertThatThrownBy(
              () -> load("channels:\n  - {name: r, kind: rabbitmq, uri: '" + uri + "'}\n"))
          .as(uri)
          .isInstanceOf(IllegalArgumentException.class)
          .message()
          .doesNotContain("hunter2");
    }
  }

  @Test
  void queuesBindByConfiguration() throws Exception {
    ManagerConfig c =
        load(
            """
            channels:
              - {name: events-kafka, kind: kafka, bootstrap_servers: 'h:1'}
            queues:
              orders: {channel: events-kafka, channel_target: orders.due, channel_receivers: true}
              payments:
                channel_target:
            """);
    assertThat(c.queueOverrides().get("orders"))
        .containsEntry("channel", "events-kafka")
        .containsEntry("channel_target", "orders.due")
        .containsEntry("channel_receivers", "true");
    assertThat(c.queueOverrides().get("payments")).containsEntry("channel_target", "");
    // The configuration wins over the comment; what it does not set stays the comment's.
    QueueOptions fromComment =
        QueueOptions.parseComment(
            "orders", "sluice_queue ack_wait=5s channel=other channel_body=payload");
    QueueOptions o = c.queueOptions("orders", fromComment);
    assertThat(o.channel()).isEqualTo("events-kafka");
    assertThat(o.channelTarget()).isEqualTo("orders.due");
    assertThat(o.channelReceivers()).isTrue();
    assertThat(o.channelBody()).isEqualTo("payload");
    assertThat(o.ackWait()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.queueOptions("unlisted", fromComment)).isSameAs(fromComment);
  }

  @Test
  void refusesBadQueueSettingsNamingQueueAndKey() {
    String kafka = "channels:\n  - {name: k, kind: kafka, bootstrap_servers: 'h:1'}\n";
    bad(kafka + "queues: [a]\n", "'queues' must be a mapping of queue names to options");
    bad(kafka + "queues:\n  orders: k\n", "queues.orders must be a mapping of options");
    bad(
        kafka + "queues:\n  orders: {channel: nope}\n",
        "queues.orders.channel: channel 'nope' is not configured (channels: k)");
    bad(
        kafka + "queues:\n  orders: {ack_wait: 5s}\n",
        "queues.orders: 'ack_wait' cannot be set here");
    bad(
        kafka + "queues:\n  orders: {channel: k, channel_body: 'a b'}\n",
        "queues.orders: channel_body='a b' must be json or a column name");
    bad(
        kafka + "queues:\n  orders: {channel: k, channel_receivers: maybe}\n",
        "queues.orders: channel_receivers='maybe' must be true or false");
    bad(
        kafka + "queues:\n  orders: {channel: k, channel_target: [a]}\n",
        "queues.orders.channel_target must be a single value");
    bad(kafka + "queues:\n  'or-ders': {channel: k}\n", "queues.or-ders: the queue name must be");
  }

  @Test
  void channelSettingsComeFromTheEnvironmentToo() throws Exception {
    Map<String, String> env = new HashMap<>();
    env.put("SLUICE_CHANNELS_EVENTS_RABBIT_URI", "amqp://u:envpass@env-host/");
    env.put("SLUICE_CHANNELS_0_MAX_IN_FLIGHT", "7");
    env.put("SLUICE_CHANNELS_1_NAME", "added");
    env.put("SLUICE_CHANNELS_1_KIND", "kafka");
    env.put("SLUICE_CHANNELS_1_BOOTSTRAP_SERVERS", "k1:9092,k2:9092");
    env.put("SLUICE_CHANNELS_1_PUBLISH_TIMEOUT", "3s");
    ManagerConfig c =
        load(
            "channels:\n  - {name: events-rabbit, kind: rabbitmq, uri: 'amqp://file-host/'}\n",
            env);
    ChannelConfig r = c.channel("events-rabbit").orElseThrow();
    assertThat(r.uri()).isEqualTo("amqp://u:envpass@env-host/");
    assertThat(r.maxInFlight()).isEqualTo(7);
    ChannelConfig added = c.channel("added").orElseThrow();
    assertThat(added.bootstrapServers()).isEqualTo("k1:9092,k2:9092");
    assertThat(added.publishTimeout()).isEqualTo(Duration.ofSeconds(3));
  }

  void bad(String yaml, String message) {
    assertThatThrownBy(() -> load(yaml))
        .as(yaml)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(message);
  }
}
