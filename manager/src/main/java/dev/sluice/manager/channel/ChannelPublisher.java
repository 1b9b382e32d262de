package dev.sluice.manager.channel;

import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.CompletableFuture;

/**
 * Publishes messages to one broker connection (a Kafka producer, a RabbitMQ connection with
 * publisher confirms).
 *
 * <h2>Contract</h2>
 *
 * <ul>
 *   <li>{@link #publish} returns at once, whatever the broker's state: the network work runs on the
 *       publisher's own threads (a down broker must never block the caller, which is a queue's
 *       dispatcher thread).
 *   <li>The future completes normally only once the broker confirmed the message durably (Kafka
 *       {@code acks=all}; RabbitMQ a publisher confirm for a persistent, routed message), and
 *       exceptionally with a {@link PublishFailure} otherwise: refused, unroutable, too large, not
 *       confirmed within the publisher's timeout, or the broker unreachable. Every future
 *       completes, within the timeout at the latest.
 *   <li>It reconnects by itself after the broker comes back.
 * </ul>
 */
public interface ChannelPublisher extends AutoCloseable {

  CompletableFuture<Void> publish(OutboundMessage message);

  /** Whether the broker is reachable as far as the publisher knows (for health and status). */
  boolean connected();

  /** "kafka 127.0.0.1:9092", "rabbitmq amqp://127.0.0.1:5672/": for logs and status, no secrets. */
  String describe();

  /**
   * Registers in {@code registry} what the publisher's own threads count of their failures, tagged
   * with the channel's name ({@code sluice_channel_loop_errors_total{channel,loop}}, and {@code
   * sluice_channel_connect_failures_total{channel}} for a publisher that connects itself). Once per
   * publisher, by the manager that built it; the counts run from its start.
   */
  void registerMetrics(MeterRegistry registry, String channel);

  /** Fails what is still unconfirmed and closes the connection. */
  @Override
  void close();
}
