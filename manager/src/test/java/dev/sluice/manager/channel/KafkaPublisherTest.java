package dev.sluice.manager.channel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.config.KafkaChannelSettings;
import dev.sluice.testkit.EmbeddedKafka;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NetworkException;
import org.apache.kafka.common.errors.NotEnoughReplicasAfterAppendException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/** {@link KafkaPublisher} against an in-process Kafka broker (real broker, no mocks). */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KafkaPublisherTest {
  private static final Duration SHORT_TIMEOUT = Duration.ofSeconds(3);

  /** The longest a future may take: the publish timeout, its slack, and room for a slow machine. */
  private static final Duration BOUND = SHORT_TIMEOUT.plusSeconds(5);

  private static EmbeddedKafka kafka;

  @BeforeAll
  static void startKafka() {
    kafka = EmbeddedKafka.start();
  }

  @AfterAll
  static void stopKafka() {
    if (kafka != null) {
      kafka.close();
    }
  }

  // ---- failures first

  @Test
  @Order(1)
  void unreachableBrokerNeverBlocksPublishAndFailsEveryMessageAsBrokerDown() throws Exception {
    String nowhere = "127.0.0.1:" + unusedPort();
    KafkaChannelSettings settings =
        new KafkaChannelSettings(nowhere, Duration.ofSeconds(1), Map.of(), "unreachable-test");
    KafkaPublisher publisher = new KafkaPublisher(settings);
    try {
      List<CompletableFuture<Void>> futures = new ArrayList<>();
      int returnedBeforeAnswer = 0;
      for (int i = 0; i < 50; i++) {
        CompletableFuture<Void> f = publisher.publish(message("orders", i, body(i)));
        if (!f.isDone()) {
          returnedBeforeAnswer++;
        }
        futures.add(f);
      }
      // publish() handed every message over and returned before anything could answer.
      assertThat(returnedBeforeAnswer).isEqualTo(50);
      for (CompletableFuture<Void> f : futures) {
        PublishFailure failure = failureOf(f, BOUND);
        assertThat(failure.brokerDown()).isTrue();
        assertThat(failure.getMessage()).contains("kafka " + nowhere).contains("topic orders");
      }
      assertThat(publisher.connected()).isFalse();

      // close() completes what is still outstanding.
      List<CompletableFuture<Void>> outstanding = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        outstanding.add(publisher.publish(message("orders", 100 + i, body(i))));
      }
      publisher.close();
      for (CompletableFuture<Void> f : outstanding) {
        assertThat(f).isDone();
        PublishFailure failure = failureOf(f, Duration.ZERO);
        assertThat(failure.brokerDown()).isTrue();
        assertThat(failure.getMessage()).contains("closed");
      }
      PublishFailure afterClose =
          failureOf(publisher.publish(message("orders", 999, body(1))), Duration.ZERO);
      assertThat(afterClose.brokerDown()).isTrue();
      assertThat(afterClose.getMessage()).contains("closed");
    } finally {
      publisher.close();
    }
  }

  @Test
  void errorsThatNameOneTopicAreThatMessagesFaultNotTheBrokers() {
    // Kafka calls these retriable, and the producer retried them until the publish timeout; they
    // say one topic (or partition) cannot take the message, not that the cluster is down. (One
    // in-process broker cannot produce too few in-sync replicas: it caps min.insync.replicas.)
    assertThat(KafkaFailures.refused(new UnknownTopicOrPartitionException("no topic"))).isTrue();
    assertThat(KafkaFailures.refused(new NotEnoughReplicasException("isr 1 < 2"))).isTrue();
    assertThat(KafkaFailures.refused(new NotEnoughReplicasAfterAppendException("isr"))).isTrue();
    assertThat(KafkaFailures.refused(new TopicAuthorizationException("t"))).isTrue();
    assertThat(KafkaFailures.refused(new RecordTooLargeException("big"))).isTrue();
    // The cluster's or the connection's.
    assertThat(KafkaFailures.refused(new NetworkException("reset"))).isFalse();
    assertThat(KafkaFailures.refused(new NotLeaderOrFollowerException("moved"))).isFalse();
    assertThat(KafkaFailures.refused(new TimeoutException("no answer"))).isFalse();
  }

  @Test
  @Order(2)
  void brokerThatAcceptsConnectionsButNeverAnswersStillFailsEveryFutureInTime() throws Exception {
    List<Socket> accepted = new CopyOnWriteArrayList<>();
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread acceptor =
          new Thread(
              () -> {
                try {
                  while (true) {
                    accepted.add(silent.accept()); // and never a byte back
                  }
                } catch (IOException closed) {
                  // the test is over
                }
              },
              "silent-broker");
      acceptor.setDaemon(true);
      acceptor.start();
      String servers = "127.0.0.1:" + silent.getLocalPort();
      KafkaChannelSettings settings =
          new KafkaChannelSettings(servers, Duration.ofSeconds(1), Map.of(), "silent-test");
      try (KafkaPublisher publisher = new KafkaPublisher(settings)) {
        List<CompletableFuture<Void>> futures = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
          futures.add(publisher.publish(message("orders", i, body(i))));
        }
        for (CompletableFuture<Void> f : futures) {
          PublishFailure failure = failureOf(f, Duration.ofSeconds(6));
          assertThat(failure.brokerDown()).isTrue();
          assertThat(failure.getMessage()).contains("within 1000 ms");
        }
        assertThat(accepted).isNotEmpty(); // it did connect: the silence is the broker's
        assertThat(publisher.connected()).isFalse();
      }
    } finally {
      for (Socket s : accepted) {
        s.close();
      }
    }
  }

  @Test
  @Order(3)
  void messageOverTheTopicSizeLimitIsRefusedWithTheReasonAndTheNextOneGoesThrough()
      throws Exception {
    kafka.createTopic("small", 1, Map.of("max.message.bytes", Integer.toString(64 * 1024)));
    try (KafkaPublisher publisher = new KafkaPublisher(settings(SHORT_TIMEOUT, "size-test"))) {
      publisher.publish(message("small", 1, body(1))).get(30, TimeUnit.SECONDS);

      PublishFailure failure =
          failureOf(publisher.publish(message("small", 2, new byte[200 * 1024])), BOUND);

      assertThat(failure.brokerDown()).isFalse();
      assertThat(failure.getMessage())
          .startsWith("kafka refused the message for topic small")
          .contains("s1/orders/2/1")
          .contains("RecordTooLargeException");
      // The broker is fine: the next message is confirmed, the channel still counts as up.
      publisher.publish(message("small", 3, body(3))).get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
      assertThat(publisher.connected()).isTrue();
      assertThat(consume("small", 2)).hasSize(2);
    }
  }

  @Test
  @Order(4)
  void brokerStoppedMidRunFailsOutstandingAndNewMessagesAsBrokerDownThenRecovers()
      throws Exception {
    kafka.createTopic("down", 2);
    try (KafkaPublisher publisher = new KafkaPublisher(settings(SHORT_TIMEOUT, "down-test"))) {
      publisher.publish(message("down", 0, body(0))).get(30, TimeUnit.SECONDS);
      assertThat(publisher.connected()).isTrue();

      List<CompletableFuture<Void>> beforeStop = new ArrayList<>();
      for (int i = 1; i <= 20; i++) {
        beforeStop.add(publisher.publish(message("down", i, body(i))));
      }
      kafka.stopBroker();

      List<CompletableFuture<Void>> whileDown = new ArrayList<>();
      int returnedBeforeAnswer = 0;
      for (int i = 21; i <= 40; i++) {
        CompletableFuture<Void> f = publisher.publish(message("down", i, body(i)));
        if (!f.isDone()) {
          returnedBeforeAnswer++;
        }
        whileDown.add(f);
      }
      assertThat(returnedBeforeAnswer).isEqualTo(20);

      for (CompletableFuture<Void> f : whileDown) {
        PublishFailure failure = failureOf(f, BOUND);
        assertThat(failure.brokerDown()).isTrue();
        assertThat(failure.getMessage()).contains("topic down");
      }
      // Sent before the stop: confirmed, or failed as broker down; none is left hanging.
      List<Integer> confirmedBefore = new ArrayList<>();
      for (int i = 0; i < beforeStop.size(); i++) {
        CompletableFuture<Void> f = beforeStop.get(i);
        Throwable t = catchThrowable(() -> f.get(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        if (t == null) {
          confirmedBefore.add(i + 1);
        } else {
          assertThat(t).isInstanceOf(ExecutionException.class);
          assertThat(t.getCause()).isInstanceOf(PublishFailure.class);
          assertThat(((PublishFailure) t.getCause()).brokerDown()).isTrue();
        }
      }
      await().atMost(Duration.ofSeconds(15)).until(() -> !publisher.connected());

      kafka.restartBroker();

      // It reconnects by itself: a publish is confirmed again, then every one.
      await()
          .atMost(Duration.ofSeconds(40))
          .pollInterval(Duration.ofMillis(200))
          .until(() -> confirms(publisher, message("down", 50, body(50))));
      List<CompletableFuture<Void>> afterRestart = new ArrayList<>();
      for (int i = 51; i <= 60; i++) {
        afterRestart.add(publisher.publish(message("down", i, body(i))));
      }
      for (CompletableFuture<Void> f : afterRestart) {
        f.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
      }
      assertThat(publisher.connected()).isTrue();

      // What was confirmed is in the topic (the broker kept its data across the restart).
      List<String> ids =
          consume("down", 1 + confirmedBefore.size() + 10).stream()
              .map(r -> header(r, ChannelHeaders.ID))
              .toList();
      for (int i : confirmedBefore) {
        assertThat(ids).contains(Integer.toString(i));
      }
      for (int i = 51; i <= 60; i++) {
        assertThat(ids).contains(Integer.toString(i));
      }
    } finally {
      if (!kafka.brokerRunning()) {
        kafka.restartBroker();
      }
    }
  }

  @Test
  @Order(5)
  void closeCompletesEveryOutstandingFuture() throws Exception {
    kafka.createTopic("closing", 1);
    KafkaPublisher publisher = new KafkaPublisher(settings(SHORT_TIMEOUT, "close-test"));
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      futures.add(publisher.publish(message("closing", i, body(i))));
    }
    publisher.close();

    int confirmed = 0;
    for (CompletableFuture<Void> f : futures) {
      assertThat(f).isDone();
      Throwable t = catchThrowable(f::join);
      if (t == null) {
        confirmed++;
      } else {
        assertThat(t.getCause()).isInstanceOf(PublishFailure.class);
        assertThat(((PublishFailure) t.getCause()).brokerDown()).isTrue();
      }
    }
    assertThat(consume("closing", confirmed).size()).isGreaterThanOrEqualTo(confirmed);
    assertThat(publisher.connected()).isFalse();
  }

  @Test
  @Order(6)
  void settingsRefuseWhatSluiceOwnsAndKafkasTimeoutRule() {
    assertThatThrownBy(() -> new KafkaChannelSettings("h:9092", null, Map.of("acks", "1"), null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("[acks]");
    assertThatThrownBy(
            () ->
                new KafkaChannelSettings(
                    "h:9092", Duration.ofSeconds(3), Map.of("request.timeout.ms", "30000"), null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("must not exceed the publish timeout");
    KafkaChannelSettings s =
        new KafkaChannelSettings(
            "h:9092", Duration.ofSeconds(3), Map.of("sasl.jaas.config", "password=\"hush\""), "c");
    assertThat(s.toString()).contains("sasl.jaas.config").doesNotContain("hush");
    Map<String, Object> config = s.producerConfig();
    assertThat(config)
        .containsEntry("acks", "all")
        .containsEntry("enable.idempotence", "true")
        .containsEntry("delivery.timeout.ms", "3000")
        .containsEntry("linger.ms", "5")
        .containsEntry("request.timeout.ms", "2995");
    assertThat(KafkaChannelSettings.of("h:9092").publishTimeout()).hasSeconds(10);
  }

  // ---- the normal path

  @Test
  @Order(7)
  void everyMessageArrivesWithKeyHeadersAndBodyIntact() throws Exception {
    kafka.createTopic("orders.due", 3);
    int n = 300;
    Map<String, OutboundMessage> sent = new HashMap<>();
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    try (KafkaPublisher publisher = new KafkaPublisher(settings(SHORT_TIMEOUT, "roundtrip"))) {
      for (int i = 0; i < n; i++) {
        OutboundMessage m = message("orders.due", i, body(i));
        sent.put(Integer.toString(i), m);
        futures.add(publisher.publish(m));
      }
      CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
      assertThat(publisher.connected()).isTrue();
      assertThat(publisher.describe()).isEqualTo("kafka " + kafka.bootstrapServers());
    }

    List<ConsumerRecord<byte[], byte[]>> records = consume("orders.due", n);
    assertThat(records).hasSize(n);
    for (ConsumerRecord<byte[], byte[]> r : records) {
      OutboundMessage m = sent.remove(header(r, ChannelHeaders.ID));
      assertThat(m).as("record %s", r).isNotNull();
      assertThat(r.key()).isEqualTo(m.key());
      assertThat(r.value()).isEqualTo(m.body());
      Map<String, String> headers = new LinkedHashMap<>();
      for (Header h : r.headers()) {
        headers.put(h.key(), new String(h.value(), StandardCharsets.UTF_8));
      }
      assertThat(headers).isEqualTo(m.headers());
    }
    assertThat(sent).isEmpty();
  }

  // ---- helpers

  private static KafkaChannelSettings settings(Duration timeout, String clientId) {
    return new KafkaChannelSettings(kafka.bootstrapServers(), timeout, Map.of(), clientId);
  }

  private static OutboundMessage message(String topic, int i, byte[] body) {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put(ChannelHeaders.SHARD, "s1");
    headers.put(ChannelHeaders.QUEUE, "orders");
    headers.put(ChannelHeaders.ID, Integer.toString(i));
    headers.put(ChannelHeaders.ATTEMPT, "1");
    headers.put(ChannelHeaders.TENANT, "tenant-ü-" + (i % 3));
    headers.put(ChannelHeaders.DUE_NS, Long.toString(1_700_000_000_000_000_000L + i));
    return new OutboundMessage(
        topic,
        null,
        ("key-" + i).getBytes(StandardCharsets.UTF_8),
        headers,
        body,
        "s1/orders/" + i + "/1");
  }

  private static byte[] body(int i) {
    return ("{\"order\":" + i + ",\"note\":\"" + "x".repeat(i % 50) + "\"}")
        .getBytes(StandardCharsets.UTF_8);
  }

  /** The failure of {@code f}, which must complete (exceptionally) within {@code within}. */
  private static PublishFailure failureOf(CompletableFuture<Void> f, Duration within) {
    Throwable t = catchThrowable(() -> f.get(within.toMillis(), TimeUnit.MILLISECONDS));
    assertThat(t).as("outcome of the publish").isInstanceOf(ExecutionException.class);
    assertThat(t.getCause()).isInstanceOf(PublishFailure.class);
    return (PublishFailure) t.getCause();
  }

  private static boolean confirms(KafkaPublisher publisher, OutboundMessage m) throws Exception {
    try {
      publisher.publish(m).get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (ExecutionException e) {
      return false;
    }
  }

  private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
    Header h = r.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  /** Reads a topic from the beginning (no consumer group) until {@code expected} records came. */
  private static List<ConsumerRecord<byte[], byte[]>> consume(String topic, int expected) {
    Properties p = new Properties();
    p.put("bootstrap.servers", kafka.bootstrapServers());
    p.put("key.deserializer", ByteArrayDeserializer.class.getName());
    p.put("value.deserializer", ByteArrayDeserializer.class.getName());
    p.put("enable.auto.commit", "false");
    List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
      List<TopicPartition> partitions =
          consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
              .map(info -> new TopicPartition(topic, info.partition()))
              .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (records.size() < expected && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(records::add);
      }
      // A little longer, to see a record too many.
      consumer.poll(Duration.ofMillis(200)).forEach(records::add);
    }
    return records;
  }

  private static int unusedPort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
