package dev.sluice.manager.channel;

import java.util.Map;

/**
 * One message for a broker, built from a delivered event.
 *
 * @param target the Kafka topic, or the RabbitMQ exchange ("" is the default exchange)
 * @param routingKey the RabbitMQ routing key; unused by Kafka
 * @param key the Kafka record key (may be null); unused by RabbitMQ
 * @param headers the event's identity and timing ({@link ChannelHeaders}), as header strings
 * @param body the message body
 * @param messageId this event's attempt ({@code shard/queue/id/attempt}): the same for a publish of
 *     one attempt repeated by the publisher, another for the event's next attempt (deduplicate on
 *     the shard, queue and id headers)
 */
public record OutboundMessage(
    String target,
    String routingKey,
    byte[] key,
    Map<String, String> headers,
    byte[] body,
    String messageId) {

  /** "topic orders.due" / "exchange x, routing key r" and the message id: for errors. */
  public String describe() {
    String where =
        routingKey == null
            ? "target " + target
            : "exchange '" + target + "', routing key '" + routingKey + "'";
    return where + " (" + messageId + ", " + (body == null ? 0 : body.length) + " bytes)";
  }
}
