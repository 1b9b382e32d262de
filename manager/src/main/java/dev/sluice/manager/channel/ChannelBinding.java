package dev.sluice.manager.channel;

import dev.sluice.db.Durations;
import dev.sluice.db.QueueConfigException;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.QueueOptions;
import dev.sluice.db.QueueTable;
import dev.sluice.manager.config.ChannelConfig;
import dev.sluice.manager.config.ManagerConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * How one queue publishes to its channel, resolved from its options ({@code channel=} and the other
 * {@link QueueOptions#CHANNEL_OPTIONS}) against the manager's channels and the table's columns by
 * {@link #check}. Immutable.
 *
 * @param queue the queue (table) name
 * @param channel the configured channel it publishes to
 * @param target Kafka: the topic ({@code channel_target}, else the queue's name), unless {@code
 *     targetColumn} names it per row; RabbitMQ: the exchange ({@code channel_target}, "" = the
 *     default exchange)
 * @param routingKey RabbitMQ: the routing key ({@code channel_routing_key}, else the queue's name),
 *     unless {@code targetColumn} names it per row; null for Kafka
 * @param targetColumn the user column naming each event's topic (Kafka) or routing key (RabbitMQ),
 *     which must be one of the channel's {@code allowed_targets}; null when not used
 * @param keyColumn Kafka: the user column holding the record key; null: the tenant. Null for
 *     RabbitMQ
 * @param bodyColumn the user column whose value is the message body as is; null: a JSON object of
 *     the user columns
 * @param receivers whether gRPC receivers may subscribe to the queue too ({@code
 *     channel_receivers})
 */
public record ChannelBinding(
    String queue,
    ChannelConfig channel,
    String target,
    String routingKey,
    String targetColumn,
    String keyColumn,
    String bodyColumn,
    boolean receivers) {

  /**
   * How much longer than its channel's {@code publish_timeout} a queue's {@code ack_wait} must be:
   * a publish's outcome comes at most a second after the timeout (Kafka's slack, the sweeps), and
   * must reach the queue before the event's ack deadline, or the event comes back while its publish
   * is still pending (a duplicate, and a confirmed event counted as an ack timeout).
   */
  public static final Duration ACK_WAIT_MARGIN = Duration.ofSeconds(2);

  public ChannelBinding {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(channel, "channel");
    Objects.requireNonNull(target, "target");
    if (channel.kind() == ChannelConfig.Kind.RABBITMQ) {
      Objects.requireNonNull(routingKey, "routingKey");
      if (keyColumn != null) {
        throw new IllegalArgumentException("a RabbitMQ message has no key column");
      }
    } else if (routingKey != null) {
      throw new IllegalArgumentException("a Kafka record has no routing key");
    }
  }

  /** Whether the body is the JSON object of the user columns (not one column's value). */
  public boolean jsonBody() {
    return bodyColumn == null;
  }

  public boolean kafka() {
    return channel.kind() == ChannelConfig.Kind.KAFKA;
  }

  /** "queue orders -> kafka channel events-kafka, topic orders.due": for logs and status. */
  public String describe() {
    String where;
    if (kafka()) {
      where = targetColumn != null ? "topic from column " + targetColumn : "topic " + target;
    } else {
      where =
          (target.isEmpty() ? "the default exchange" : "exchange " + target)
              + (targetColumn != null
                  ? ", routing key from column " + targetColumn
                  : ", routing key " + routingKey);
    }
    return "queue " + queue + " -> " + channel.kind() + " channel " + channel.name() + ", " + where;
  }

  /**
   * What {@link #check} found: a binding, or nothing to bind (no {@code channel}), or the problems
   * that keep the queue from being served.
   *
   * @param binding the resolved binding; null when the queue has no channel or has problems
   * @param problems empty when the options are sound
   */
  public record Check(String queue, ChannelBinding binding, List<String> problems) {
    public Check {
      problems = List.copyOf(problems);
    }

    public boolean ok() {
      return problems.isEmpty();
    }

    /**
     * Why the queue cannot be served, naming it and every problem ("queue orders: channel binding:
     * ..."), or null when it can: what {@code QueueListener.problem} returns.
     */
    public String problem() {
      return ok() ? null : "queue " + queue + ": channel binding: " + String.join("; ", problems);
    }
  }

  /**
   * Checks a queue's table against the configuration: its comment's options with the
   * configuration's {@code queues.<name>} settings in their place, then {@link #check(String,
   * QueueOptions, List, Set)} with the table's columns.
   */
  public static Check check(QueueTable table, ManagerConfig config) {
    QueueOptions options;
    try {
      options = config.queueOptions(table.name(), table.options());
    } catch (QueueConfigException e) {
      return new Check(table.name(), null, List.of(e.getMessage()));
    }
    return check(table.name(), options, config.channels(), table.columns().keySet());
  }

  /**
   * Resolves a queue's channel options. Pure: no I/O, any thread.
   *
   * @param queue the queue's name: the Kafka topic and RabbitMQ routing key unless given
   * @param options the queue's options (the configuration's settings applied already)
   * @param channels the manager's channels
   * @param tableColumns every column of the table (any case)
   * @return the binding, or none when {@code channel} is not set, or every problem found: a channel
   *     that is not configured, an option the channel's kind does not take, options that exclude
   *     each other, a column the table does not have or that is Sluice's own, a target column on a
   *     channel without {@code allowed_targets}
   */
  public static Check check(
      String queue, QueueOptions options, List<ChannelConfig> channels, Set<String> tableColumns) {
    List<String> problems = new ArrayList<>();
    String name = options.channel();
    if (name.isEmpty()) {
      List<String> given = new ArrayList<>();
      QueueOptions defaults = QueueOptions.defaults();
      for (String o : options.changedFrom(defaults)) {
        if (QueueOptions.CHANNEL_OPTIONS.contains(o)) {
          given.add(o);
        }
      }
      if (!given.isEmpty()) {
        problems.add(
            String.join(", ", given)
                + (given.size() == 1 ? " is" : " are")
                + " given, but no channel= names the channel to publish to");
      }
      return new Check(queue, null, problems);
    }
    ChannelConfig channel =
        channels.stream().filter(c -> c.name().equals(name)).findFirst().orElse(null);
    if (channel == null) {
      problems.add(
          "channel '"
              + name
              + "' is not configured (channels of the manager's configuration: "
              + (channels.isEmpty()
                  ? "none"
                  : channels.stream().map(ChannelConfig::name).collect(Collectors.joining(", ")))
              + ")");
      return new Check(queue, null, problems);
    }
    Set<String> columns =
        tableColumns.stream().map(c -> c.toLowerCase(Locale.ROOT)).collect(Collectors.toSet());
    String targetColumn =
        column("channel_target_column", options.channelTargetColumn(), columns, problems);
    String keyColumn = column("channel_key_column", options.channelKeyColumn(), columns, problems);
    String bodyColumn =
        options.channelBody().equals(QueueOptions.BODY_JSON)
            ? null
            : column("channel_body", options.channelBody(), columns, problems);
    String target = options.channelTarget();
    String routingKey = null;
    String what = channel.kind() + " channel " + channel.name();
    if (channel.kind() == ChannelConfig.Kind.KAFKA) {
      if (!options.channelRoutingKey().isEmpty()) {
        problems.add(
            "channel_routing_key is for rabbitmq channels; "
                + what
                + " takes its topic from channel_target or channel_target_column");
      }
      if (!target.isEmpty() && targetColumn != null) {
        problems.add(
            "give channel_target (one topic) or channel_target_column (a topic per row), not"
                + " both");
      }
      if (!target.isEmpty()
          && (!ChannelConfig.KAFKA_TOPIC.matcher(target).matches()
              || target.equals(".")
              || target.equals(".."))) {
        problems.add(
            "channel_target="
                + target
                + " is not a Kafka topic name (1-249 letters, digits, '.', '_' or '-')");
      }
      if (target.isEmpty()) {
        target = queue;
      }
    } else {
      if (keyColumn != null) {
        problems.add(
            "channel_key_column is for kafka channels (the record key); "
                + what
                + " routes by channel_routing_key or channel_target_column");
        keyColumn = null;
      }
      if (!options.channelRoutingKey().isEmpty() && targetColumn != null) {
        problems.add(
            "give channel_routing_key (one routing key) or channel_target_column (a routing key"
                + " per row), not both");
      }
      routingKey = options.channelRoutingKey().isEmpty() ? queue : options.channelRoutingKey();
    }
    Duration floor = channel.publishTimeout().plus(ACK_WAIT_MARGIN);
    if (options.ackWait().compareTo(floor) < 0) {
      problems.add(
          "ack_wait="
              + Durations.format(options.ackWait())
              + " is shorter than "
              + what
              + "'s publish_timeout="
              + Durations.format(channel.publishTimeout())
              + " plus "
              + Durations.format(ACK_WAIT_MARGIN)
              + ": an event would come back, and be published again, while its publish still"
              + " waits for the broker's confirm; give ack_wait="
              + Durations.format(floor)
              + " or more, or the channel a shorter publish_timeout");
    }
    if (targetColumn != null && channel.allowedTargets().isEmpty()) {
      problems.add(
          "channel_target_column="
              + targetColumn
              + " needs the channel's allowed_targets, and "
              + what
              + " has none (a row may name only a "
              + (channel.kind() == ChannelConfig.Kind.KAFKA ? "topic" : "routing key")
              + " the configuration allows)");
    }
    if (!problems.isEmpty()) {
      return new Check(queue, null, problems);
    }
    return new Check(
        queue,
        new ChannelBinding(
            queue,
            channel,
            target,
            routingKey,
            targetColumn,
            keyColumn,
            bodyColumn,
            options.channelReceivers()),
        problems);
  }

  /** A user column of the table named by {@code option}, lower case; null when not given. */
  private static String column(
      String option, String value, Set<String> columns, List<String> problems) {
    if (value.isEmpty()) {
      return null;
    }
    String c = value.toLowerCase(Locale.ROOT);
    if (QueueConvention.SYSTEM_COLUMNS.contains(c)) {
      problems.add(
          option
              + "="
              + value
              + " is a Sluice column; name one of the table's own columns"
              + (option.equals("channel_key_column") ? " (the tenant is the default key)" : ""));
      return null;
    }
    if (!columns.contains(c)) {
      String own =
          columns.stream()
              .filter(x -> !QueueConvention.SYSTEM_COLUMNS.contains(x))
              .sorted()
              .collect(Collectors.joining(", "));
      problems.add(
          option
              + "="
              + value
              + ": the table has no such column (its own columns: "
              + (own.isEmpty() ? "none" : own)
              + ")");
      return null;
    }
    return c;
  }
}
