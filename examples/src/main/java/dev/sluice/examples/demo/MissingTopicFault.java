package dev.sluice.examples.demo;

import dev.sluice.examples.demo.PoisonLedger.Expect;
import dev.sluice.manager.config.ChannelConfig;
import dev.sluice.testkit.EmbeddedKafka;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A Kafka topic that does not exist: a queue publishes to a topic the cluster does not have (and
 * does not create on demand), while another queue on the same channel publishes to one it has.
 * Contained: the events for the missing topic end dead with Kafka's reason after their {@code
 * max_attempts}, the channel is never taken for down, and every event of the other queue is
 * published and acked.
 *
 * <p>The channel's broker is an in-process Kafka ({@link Broker}), started before the manager so
 * that the manager's configuration has the channel: no Docker, no RabbitMQ.
 */
final class MissingTopicFault implements Fault {
  static final String CHANNEL = "poison-kafka";
  private static final String QUEUE = "poison_topic";
  private static final String NEIGHBOUR = "poison_topic_ok";
  private static final String MISSING_TOPIC = "poison.no.such.topic";
  private static final String PRESENT_TOPIC = "poison.topic.ok";
  private static final String OPTIONS =
      " ack_wait=5s min_backoff=200ms max_backoff=500ms max_attempts=3 channel=" + CHANNEL;

  private final List<Long> missing = new ArrayList<>();
  private final List<Long> neighbours = new ArrayList<>();

  /** The in-process Kafka the fault's channel publishes to: topics are not created on demand. */
  static final class Broker implements AutoCloseable {
    private final EmbeddedKafka kafka;

    private Broker(EmbeddedKafka kafka) {
      this.kafka = kafka;
    }

    static Broker start() {
      EmbeddedKafka k = EmbeddedKafka.start(0, Map.of("auto.create.topics.enable", "false"));
      k.createTopic(PRESENT_TOPIC, 1);
      return new Broker(k);
    }

    /** The channel for the manager's configuration: a 3 s publish timeout. */
    ChannelConfig channel() {
      return new ChannelConfig(
          CHANNEL,
          ChannelConfig.Kind.KAFKA,
          kafka.bootstrapServers(),
          null,
          null,
          Duration.ofSeconds(3),
          ChannelConfig.DEFAULT_MAX_IN_FLIGHT,
          null);
    }

    @Override
    public void close() {
      kafka.close();
    }
  }

  @Override
  public String name() {
    return "kafka topic that does not exist";
  }

  @Override
  public String queue() {
    return QUEUE;
  }

  /** No canaries: a channel-bound queue has no receivers; its neighbour is judged instead. */
  @Override
  public String watchedQueue() {
    return null;
  }

  @Override
  public String comment() {
    return "sluice_queue" + OPTIONS + " channel_target=" + MISSING_TOPIC;
  }

  @Override
  public boolean receiverUpFront() {
    return false;
  }

  @Override
  public void inject(PoisonRun run) throws Exception {
    run.note(
        "fault: "
            + QUEUE
            + ": 5 events to Kafka topic "
            + MISSING_TOPIC
            + ", which does not exist; "
            + NEIGHBOUR
            + ": 20 events to "
            + PRESENT_TOPIC
            + " on the same channel");
    run.tables.create(NEIGHBOUR, "sluice_queue" + OPTIONS + " channel_target=" + PRESENT_TOPIC);
    PoisonRun.await(Duration.ofSeconds(10), () -> run.manager.engine().find(NEIGHBOUR).isPresent());
    for (int i = 0; i < 5; i++) {
      missing.add(run.add(QUEUE, "no-topic", Expect.DEAD));
    }
    for (int i = 0; i < 20; i++) {
      neighbours.add(run.add(NEIGHBOUR, "neighbour", Expect.DELIVERED));
    }
    PoisonRun.awaitDb(
        Duration.ofSeconds(20),
        () -> run.allAcked(NEIGHBOUR, neighbours) && deadCount(run) == missing.size());
  }

  private long deadCount(PoisonRun run) throws java.sql.SQLException {
    long n = 0;
    for (long id : missing) {
      if (run.tables.state(QUEUE, id) == PoisonTables.DEAD) {
        n++;
      }
    }
    return n;
  }

  @Override
  public Verdict judge(PoisonRun run) throws Exception {
    long dead = deadCount(run);
    List<String> reasons = new ArrayList<>();
    boolean kafkasReason = true;
    for (long id : missing) {
      Optional<String> r = run.tables.deadReason(QUEUE, id);
      kafkasReason &= r.filter(x -> x.contains("UnknownTopicOrPartition")).isPresent();
      if (reasons.isEmpty()) {
        r.ifPresent(reasons::add);
      }
    }
    String notAcked = run.notAcked(NEIGHBOUR, neighbours);
    List<String> down = new ArrayList<>();
    for (Map<String, Object> s : run.manager.channels().status()) {
      Object q = s.get("queue");
      if ((QUEUE.equals(q) || NEIGHBOUR.equals(q)) && !Boolean.TRUE.equals(s.get("up"))) {
        down.add(q + " (" + s.get("last_error") + ")");
      }
    }
    boolean ok = dead == missing.size() && kafkasReason && notAcked.isEmpty() && down.isEmpty();
    return Verdict.of(
        ok,
        String.format(
            "%d of %d events for the missing topic dead, reason %s; neighbour queue %s; channel"
                + " %s",
            dead,
            missing.size(),
            reasons.isEmpty() ? "none recorded" : "'" + reasons.get(0) + "'",
            notAcked.isEmpty() ? "all acked" : "not acked: " + notAcked,
            down.isEmpty() ? "up throughout" : "taken for down on " + down));
  }
}
