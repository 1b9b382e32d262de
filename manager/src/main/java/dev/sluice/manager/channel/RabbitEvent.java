package dev.sluice.manager.channel;

import com.rabbitmq.client.ShutdownSignalException;

/**
 * What the publisher thread of a {@link RabbitPublisher} takes from its inbox: publishes from the
 * callers, and what the client's I/O thread reported, tagged with the channel or connection it came
 * from (an event of a channel that is gone is ignored: sequence numbers start again on every
 * channel).
 */
sealed interface RabbitEvent {
  record Publish(RabbitPending pending) implements RabbitEvent {}

  record Confirm(long channelGen, long tag, boolean multiple, boolean ack) implements RabbitEvent {}

  record Returned(
      long channelGen, int code, String text, String exchange, String routingKey, String messageId)
      implements RabbitEvent {}

  record ChannelDown(long channelGen, ShutdownSignalException cause) implements RabbitEvent {}

  record ConnectionDown(long connectionGen, ShutdownSignalException cause) implements RabbitEvent {}

  record Blocked(long connectionGen, String reason) implements RabbitEvent {}

  record Unblocked(long connectionGen) implements RabbitEvent {}

  record Stop() implements RabbitEvent {}
}
