package dev.sluice.manager.channel;

import java.util.concurrent.CompletableFuture;

/** One publish of a {@link KafkaPublisher} and its future. */
final class KafkaPending {
  final OutboundMessage message;

  /** When the timeout thread fails it, on the publisher's ticker. */
  final long deadline;

  final CompletableFuture<Void> future = new CompletableFuture<>();

  KafkaPending(OutboundMessage message, long deadline) {
    this.message = message;
    this.deadline = deadline;
  }
}
