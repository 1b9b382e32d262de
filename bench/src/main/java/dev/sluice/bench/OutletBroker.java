package dev.sluice.bench;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.db.QueueOptions;
import dev.sluice.manager.channel.ChannelBinding;
import dev.sluice.manager.channel.ChannelMessages;
import dev.sluice.manager.channel.ChannelOutlets;
import dev.sluice.manager.channel.ChannelPublisher;
import dev.sluice.manager.channel.OutboundMessage;
import dev.sluice.manager.config.ChannelConfig;
import dev.sluice.testkit.AmqpBrokers;
import dev.sluice.testkit.EmbeddedAmqpBroker;
import dev.sluice.testkit.EmbeddedKafka;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/**
 * The broker of {@code drain --outlet K}, and the channel Sluice's queue is bound to: an embedded
 * Kafka (one broker, KRaft, in this JVM) with the queue's topic created, or for RabbitMQ the local
 * broker at 127.0.0.1:5672 when {@link AmqpBrokers#local} finds one, else an embedded Qpid
 * Broker-J, with a durable queue of its own that the queue's routing key reaches through the
 * default exchange. Both channel peers (the queue bound to it, and the broker floor) publish to the
 * same destination; {@link #reset} empties it between them where that matters (RabbitMQ).
 *
 * <p>Threads: the bench's main thread only.
 */
final class OutletBroker implements AutoCloseable {
  /** The channel's name in the manager's configuration. */
  static final String CHANNEL = "bench-outlet";

  /** The topic's partitions: one, so that the floor and the channel write the same log. */
  static final int PARTITIONS = 1;

  final ChannelConfig.Kind kind;
  private final ChannelConfig channel;
  private final String description;
  private final EmbeddedKafka kafka;
  private final EmbeddedAmqpBroker qpid;

  /**
   * RabbitMQ: the broker queue the messages are routed to (unique per run: the broker is shared).
   */
  private final String rabbitQueue;

  private OutletBroker(
      ChannelConfig.Kind kind,
      ChannelConfig channel,
      String description,
      EmbeddedKafka kafka,
      EmbeddedAmqpBroker qpid,
      String rabbitQueue) {
    this.kind = kind;
    this.channel = channel;
    this.description = description;
    this.kafka = kafka;
    this.qpid = qpid;
    this.rabbitQueue = rabbitQueue;
  }

  /** {@code kafka} or {@code rabbitmq}, as {@code --outlet} names it. */
  static ChannelConfig.Kind kindOf(String word) {
    ChannelConfig.Kind k = ChannelConfig.Kind.of(word);
    if (k == null) {
      throw new IllegalArgumentException(
          "--outlet: expected kafka or rabbitmq, got '" + word + "'");
    }
    return k;
  }

  /** Starts (or finds) the broker and creates the destination of {@link SluiceSide#QUEUE}. */
  static OutletBroker start(ChannelConfig.Kind kind) throws Exception {
    if (kind == ChannelConfig.Kind.KAFKA) {
      EmbeddedKafka kafka = EmbeddedKafka.start();
      try {
        kafka.createTopic(SluiceSide.QUEUE, PARTITIONS);
        ChannelConfig c = ChannelConfig.kafka(CHANNEL, kafka.bootstrapServers());
        return new OutletBroker(
            kind,
            c,
            String.format(
                Locale.ROOT,
                "embedded Kafka %s (one KRaft broker in this JVM), topic %s with %d partition",
                kafka.bootstrapServers(),
                SluiceSide.QUEUE,
                PARTITIONS),
            kafka,
            null,
            null);
      } catch (RuntimeException | Error e) {
        kafka.close();
        throw e;
      }
    }
    String local = AmqpBrokers.local().orElse(null);
    EmbeddedAmqpBroker qpid = local == null ? EmbeddedAmqpBroker.start() : null;
    try {
      String uri = local != null ? local : qpid.uri();
      String queue =
          "sluice-bench.drain."
              + Long.toHexString(System.nanoTime() ^ ProcessHandle.current().pid());
      ChannelConfig c = ChannelConfig.rabbitmq(CHANNEL, uri);
      OutletBroker b =
          new OutletBroker(
              kind,
              c,
              (local != null
                      ? "the local RabbitMQ at 127.0.0.1:5672"
                      : "the embedded AMQP broker (Qpid Broker-J, in this JVM, in-memory store) at "
                          + "127.0.0.1:"
                          + qpid.port()
                          + " (no RabbitMQ answers at 127.0.0.1:5672)")
                  + ", default exchange, durable queue "
                  + queue,
              null,
              qpid,
              queue);
      b.amqp(ch -> ch.queueDeclare(queue, true, false, false, null));
      return b;
    } catch (Exception | Error e) {
      if (qpid != null) {
        qpid.close();
      }
      throw e;
    }
  }

  ChannelConfig channel() {
    return channel;
  }

  /** "embedded Kafka 127.0.0.1:40123 ...": which broker, and where the messages go. */
  String describe() {
    return description;
  }

  /**
   * The options binding {@link SluiceSide#QUEUE} to the channel, as the configuration's {@code
   * queues:} section gives them: Kafka publishes to the topic named after the queue; RabbitMQ to
   * the default exchange with this run's broker queue as routing key.
   */
  Map<String, String> queueOptions() {
    Map<String, String> o = new LinkedHashMap<>();
    o.put("channel", CHANNEL);
    if (kind == ChannelConfig.Kind.RABBITMQ) {
      o.put("channel_routing_key", rabbitQueue);
    }
    return o;
  }

  /**
   * How Sluice resolves the queue's binding (its comment's options with {@link #queueOptions} in
   * their place): the floor's messages are made from it by {@link ChannelMessages}.
   */
  ChannelBinding binding() {
    QueueOptions options =
        QueueOptions.parseComment(SluiceSide.QUEUE, SluiceSide.comment())
            .with(queueOptions(), "drain --outlet");
    ChannelBinding.Check check =
        ChannelBinding.check(SluiceSide.QUEUE, options, List.of(channel), Set.of("payload"));
    if (!check.ok()) {
      throw new IllegalStateException(check.problem());
    }
    return check.binding();
  }

  /**
   * The message Sluice publishes for event {@code id} of the bench's queue table (its shard, the
   * first attempt, tenant "", payload {@code e<index>}): the same headers, body and sizes.
   */
  static OutboundMessage message(ChannelMessages messages, long id, long index, long dueNs) {
    Delivery d =
        new Delivery(
            SluiceSide.SHARD,
            SluiceSide.QUEUE,
            id,
            1,
            "",
            0,
            dueNs,
            dueNs,
            dueNs,
            "",
            List.of(),
            Map.of("payload", "e" + index));
    return messages.toMessage(d);
  }

  /** A publisher of the channel with the settings the manager gives it. */
  ChannelPublisher publisher(String managerId) {
    return ChannelOutlets.publisher(channel, managerId);
  }

  /** RabbitMQ: empties the broker queue, so that each peer starts on an empty one. */
  void reset() throws Exception {
    if (kind == ChannelConfig.Kind.RABBITMQ) {
      amqp(ch -> ch.queuePurge(rabbitQueue));
    }
  }

  /** The messages the destination holds: the topic's end offset, or the broker queue's count. */
  long held() throws Exception {
    if (kind == ChannelConfig.Kind.KAFKA) {
      try (Admin admin = kafka.admin()) {
        long sum = 0;
        Map<TopicPartition, OffsetSpec> ask = new LinkedHashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
          ask.put(new TopicPartition(SluiceSide.QUEUE, p), OffsetSpec.latest());
        }
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> got =
            admin.listOffsets(ask).all().get(30, TimeUnit.SECONDS);
        for (ListOffsetsResult.ListOffsetsResultInfo i : got.values()) {
          sum += i.offset();
        }
        return sum;
      }
    }
    long[] count = {0};
    amqp(ch -> count[0] = ch.queueDeclarePassive(rabbitQueue).getMessageCount());
    return count[0];
  }

  /** Where {@link #held} counts: "topic bench_events", "queue sluice-bench.drain.1f2e". */
  String destination() {
    return kind == ChannelConfig.Kind.KAFKA ? "topic " + SluiceSide.QUEUE : "queue " + rabbitQueue;
  }

  private interface AmqpWork {
    void run(Channel ch) throws Exception;
  }

  /** One short AMQP connection for the bench's own declarations. */
  private void amqp(AmqpWork work) throws Exception {
    ConnectionFactory f = new ConnectionFactory();
    f.setUri(channel.uri());
    f.setAutomaticRecoveryEnabled(false);
    f.setConnectionTimeout(10_000);
    try (Connection c = f.newConnection("sluice-bench-admin");
        Channel ch = c.createChannel()) {
      work.run(ch);
    }
  }

  /** Deletes this run's RabbitMQ queue; stops the embedded broker. */
  @Override
  public void close() {
    if (kind == ChannelConfig.Kind.RABBITMQ) {
      try {
        amqp(ch -> ch.queueDelete(rabbitQueue));
      } catch (Exception e) {
        Progress.note("could not delete " + destination() + ": " + e);
      }
    }
    if (kafka != null) {
      kafka.close();
    }
    if (qpid != null) {
      qpid.close();
    }
  }
}
