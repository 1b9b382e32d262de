package dev.sluice.manager.channel;

import com.rabbitmq.client.Connection;
import java.util.concurrent.CompletableFuture;

/** One publish of a {@link RabbitPublisher} and its future. */
final class RabbitPending {
  final OutboundMessage message;

  /** When the timeout thread fails it, on the publisher's ticker. */
  final long deadline;

  final CompletableFuture<Void> future = new CompletableFuture<>();

  /** The connection it was handed to; null while it waits to be sent. */
  volatile Connection sentOn;

  // Publisher thread only.
  long seq;
  String returnReason;
  long nackedAt;

  /** Sent again after a channel error: alone, so that a refusal names it. */
  boolean probe;

  RabbitPending(OutboundMessage message, long deadline) {
    this.message = message;
    this.deadline = deadline;
  }

  /** Fails the future; true when this completed it (it was not settled before). */
  boolean fail(String reason, boolean brokerDown) {
    return future.completeExceptionally(new PublishFailure(reason, brokerDown));
  }
}
