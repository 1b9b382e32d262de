package dev.sluice.manager.channel;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the futures of a {@link KafkaPublisher} complete, and what that says of the broker: a send
 * that settled without an answer (a timeout, the broker unreachable) marks the channel unanswered,
 * logged once, until a later send is confirmed, logged once too. {@link #connected} adds the
 * producer's own count of its connections.
 *
 * <p>Threads: Kafka's I/O thread (send callbacks), the send thread (what {@code send} threw), the
 * admin client's (topics that got no answer) and the timeout thread complete futures here; the flag
 * is an atomic, the metric a volatile cache.
 */
final class KafkaAnswers {
  private static final Logger log = LoggerFactory.getLogger(KafkaPublisher.class);

  private final String description;
  private final KafkaFailures failures;
  private final Producer<byte[], byte[]> producer;
  private final BooleanSupplier closed;

  /** The last send that settled got no answer from the broker (see {@link #connected}). */
  private final AtomicBoolean unanswered = new AtomicBoolean();

  private volatile Metric connectionCount;

  KafkaAnswers(
      String description,
      KafkaFailures failures,
      Producer<byte[], byte[]> producer,
      BooleanSupplier closed) {
    this.description = description;
    this.failures = failures;
    this.producer = producer;
    this.closed = closed;
  }

  /** Kafka's answer to a send ({@code e} null: confirmed), or what {@code send} threw. */
  void settle(KafkaPending p, Exception e) {
    if (e == null) {
      if (unanswered.compareAndSet(true, false)) {
        log.info("{}: the broker confirms messages again", description);
      }
      p.future.complete(null);
      return;
    }
    PublishFailure failure =
        closed.getAsBoolean() ? failures.closed(p.message, e) : failures.of(p.message, e);
    if (failure.brokerDown()) {
      unanswered(failure.getMessage()); // Kafka's own word, even if the timeout was first
    }
    p.future.completeExceptionally(failure);
  }

  /**
   * Fails {@code p} on Sluice's side (the timeout, a topic with no answer); one that this failure
   * completed and that is the broker's fault ({@code brokerDown}) marks the broker unanswered.
   */
  void fail(KafkaPending p, PublishFailure failure) {
    if (p.future.completeExceptionally(failure) && failure.brokerDown()) {
      unanswered(failure.getMessage());
    }
  }

  private void unanswered(String why) {
    if (unanswered.compareAndSet(false, true) && !closed.getAsBoolean()) {
      log.warn("{}: broker not confirming messages: {}", description, why);
    }
  }

  /**
   * True when the producer holds a connection to the cluster and the last send that settled was not
   * left unanswered.
   */
  boolean connected() {
    return !unanswered.get() && connectionCount() > 0;
  }

  private double connectionCount() {
    Metric metric = connectionCount;
    if (metric == null) {
      for (Map.Entry<MetricName, ? extends Metric> e : producer.metrics().entrySet()) {
        MetricName name = e.getKey();
        if (name.name().equals("connection-count") && name.group().equals("producer-metrics")) {
          metric = e.getValue();
          connectionCount = metric;
          break;
        }
      }
      if (metric == null) {
        return 0;
      }
    }
    Object value = metric.metricValue();
    return value instanceof Number n ? n.doubleValue() : 0;
  }
}
