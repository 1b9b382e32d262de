package dev.sluice.examples.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import dev.sluice.manager.channel.ChannelHeaders;
import dev.sluice.manager.config.ChannelConfig;
import dev.sluice.testkit.EmbeddedAmqpBroker;
import dev.sluice.testkit.EmbeddedKafka;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * {@code demo --outlet kafka|rabbitmq}: the demo's queue publishes to a broker channel instead of
 * receivers. An in-process broker (Kafka's own KRaft test kit, or Apache Qpid Broker-J speaking
 * AMQP 0-9-1) takes the messages, and a real consumer stands in for the receivers: it reads each
 * message's identity headers and body and records it in the {@link Tally} as a receiver's delivery
 * would be, so lost, early and duplicate events are counted from the consumer's view. Mid-run the
 * broker is stopped for a few seconds ({@link #outage}); the queue must wait and lose nothing.
 *
 * <p>Threads: one consumer thread ({@code demo-consumer}) polls (Kafka) or the client's own threads
 * deliver (RabbitMQ); both only write to the thread-safe tally.
 */
final class OutletSide implements AutoCloseable, Consumers {
  static final String CHANNEL = "demo-" + "channel";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration OUTAGE = Duration.ofSeconds(4);

  private final String kind;
  private final Tally tally;
  private final EmbeddedKafka kafka;
  private final EmbeddedAmqpBroker amqp;
  private final AtomicLong consumed = new AtomicLong();
  private volatile boolean running = true;
  private volatile long outageMs;
  private Thread kafkaConsumer;
  private Connection rabbit;

  private OutletSide(String kind, Tally tally) {
    this.kind = kind;
    this.tally = tally;
    if (kind.equals("kafka")) {
      kafka = EmbeddedKafka.start();
      kafka.createTopic(DemoDatabase.QUEUE, 1);
      amqp = null;
    } else {
      amqp = EmbeddedAmqpBroker.start();
      kafka = null;
    }
  }

  static OutletSide start(String kind, Tally tally) throws Exception {
    OutletSide s = new OutletSide(kind, tally);
    s.startConsumer();
    return s;
  }

  /** The channel the manager publishes to: the in-process broker, a 3 s publish timeout. */
  ChannelConfig channel() {
    return kafka != null
        ? new ChannelConfig(
            CHANNEL,
            ChannelConfig.Kind.KAFKA,
            kafka.bootstrapServers(),
            null,
            null,
            Duration.ofSeconds(3),
            ChannelConfig.DEFAULT_MAX_IN_FLIGHT,
            null)
        : new ChannelConfig(
            CHANNEL,
            ChannelConfig.Kind.RABBITMQ,
            null,
            null,
            amqp.uri(),
            Duration.ofSeconds(3),
            ChannelConfig.DEFAULT_MAX_IN_FLIGHT,
            null);
  }

  /**
   * The demo queue's binding, as the configuration's {@code queues:} section gives it (the table's
   * migration stays the demo's): Kafka topic {@code order_events}; RabbitMQ's default exchange with
   * routing key {@code order_events} (the queue of that name).
   */
  Map<String, String> binding() {
    return Map.of("channel", CHANNEL);
  }

  String describe() {
    return kafka != null
        ? "kafka " + kafka.bootstrapServers() + " (in-process KRaft), topic " + DemoDatabase.QUEUE
        : "rabbitmq "
            + "127.0.0.1:"
            + amqp.port()
            + " (in-process Qpid Broker-J), queue "
            + DemoDatabase.QUEUE;
  }

  private void startConsumer() throws Exception {
    if (kafka != null) {
      kafkaConsumer = new Thread(this::pollKafka, "demo-consumer");
      kafkaConsumer.setDaemon(true);
      kafkaConsumer.start();
    } else {
      consumeRabbit();
    }
  }

  private void pollKafka() {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
      TopicPartition tp = new TopicPartition(DemoDatabase.QUEUE, 0);
      c.assign(List.of(tp));
      c.seekToBeginning(List.of(tp));
      while (running) {
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) {
          record(
              header(r, ChannelHeaders.SHARD),
              header(r, ChannelHeaders.ID),
              header(r, ChannelHeaders.DUE_NS),
              r.value());
        }
      }
    }
  }

  private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
    var h = r.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  private void consumeRabbit() throws Exception {
    ConnectionFactory f = new ConnectionFactory();
    f.setUri(amqp.uri());
    f.setAutomaticRecoveryEnabled(true); // reconnects after the outage, declares its queue again
    f.setTopologyRecoveryEnabled(true);
    f.setNetworkRecoveryInterval(200);
    rabbit = f.newConnection("demo-consumer");
    Channel ch = rabbit.createChannel();
    ch.queueDeclare(DemoDatabase.QUEUE, true, false, false, null);
    ch.basicQos(500);
    ch.basicConsume(
        DemoDatabase.QUEUE,
        false,
        new DefaultConsumer(ch) {
          @Override
          public void handleDelivery(
              String tag, Envelope env, AMQP.BasicProperties props, byte[] body)
              throws java.io.IOException {
            Map<String, Object> h = props.getHeaders();
            record(
                text(h.get(ChannelHeaders.SHARD)),
                text(h.get(ChannelHeaders.ID)),
                text(h.get(ChannelHeaders.DUE_NS)),
                body);
            getChannel().basicAck(env.getDeliveryTag(), false);
          }
        });
  }

  private static String text(Object v) {
    return v == null ? null : v.toString();
  }

  /** One message as a receiver's delivery: the tally checks early, duplicate and lost events. */
  private void record(String shard, String id, String dueNs, byte[] body) {
    Instant now = Instant.now();
    long seenNs = now.getEpochSecond() * 1_000_000_000L + now.getNano();
    long orderId;
    try {
      JsonNode json = JSON.readTree(body);
      orderId = json.get("order_id").asLong();
    } catch (java.io.IOException e) {
      throw new IllegalStateException("demo: a message body is not the order's JSON", e);
    }
    EventKey key = new EventKey(shard, Long.parseLong(id));
    tally.delivered(key, orderId, Long.parseLong(dueNs), seenNs, "consumer");
    tally.handled(key);
    consumed.incrementAndGet();
  }

  /**
   * Stops the broker for a few seconds while events flow, then starts it again.
   *
   * <p>The in-process AMQP broker keeps messages in memory only: what it confirmed and the consumer
   * had not read yet would die with it, a loss of the broker's making. So before that broker stops,
   * the queue is paused for a moment ({@code pause}) until the consumer has read everything; it is
   * resumed at once, and its events then meet the broker down. Kafka keeps its log: no pause.
   */
  void outage(Progress progress, java.util.function.Consumer<Boolean> pause) throws Exception {
    if (amqp != null) {
      pause.accept(true);
      long seen = -1;
      while (seen != consumed.get()) { // quiet for 300 ms: the broker's queue is empty
        seen = consumed.get();
        Thread.sleep(300);
      }
    }
    progress.note("broker stopped (for " + OUTAGE.toSeconds() + " s): the queue must wait");
    long t0 = System.nanoTime();
    if (kafka != null) {
      kafka.stopBroker();
      Thread.sleep(OUTAGE.toMillis());
      kafka.restartBroker();
    } else {
      amqp.stop();
      pause.accept(false);
      Thread.sleep(OUTAGE.toMillis());
      amqp.restart(); // empty: the consumer's recovery declares its queue again
    }
    outageMs = (System.nanoTime() - t0) / 1_000_000;
    progress.note("broker back after " + outageMs + " ms");
  }

  @Override
  public int liveCount() {
    return 1;
  }

  @Override
  public int inFlight() {
    return 0;
  }

  /** Appended to the summary line. */
  String summary() {
    return " outlet=" + kind + " consumed=" + consumed.get() + " broker_outage_ms=" + outageMs;
  }

  @Override
  public void close() throws Exception {
    running = false;
    if (kafkaConsumer != null) {
      kafkaConsumer.join(5_000);
    }
    if (rabbit != null) {
      try {
        rabbit.close(2_000);
      } catch (Exception ignored) {
        // the broker may be gone already
      }
    }
    if (kafka != null) {
      kafka.close();
    }
    if (amqp != null) {
      amqp.close();
    }
  }
}
