package dev.sluice.manager.channel;

import dev.sluice.manager.channel.KafkaTopics.Known;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.InvalidPidMappingException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.NotEnoughReplicasAfterAppendException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnknownProducerIdException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.errors.UnsupportedVersionException;

/**
 * The failures of a {@link KafkaPublisher}'s messages, in words an operator reads as an event's
 * dead reason: whose fault each is ({@link PublishFailure#brokerDown()}: the message's, or the
 * channel's), Kafka's reason, and where the message was going. Immutable; any thread.
 */
final class KafkaFailures {
  private final String description;
  private final long timeoutMs;

  /**
   * @param description the publisher's ("kafka 127.0.0.1:9092")
   * @param timeoutMs its publish timeout, as the failures say it
   */
  KafkaFailures(String description, long timeoutMs) {
    this.description = description;
    this.timeoutMs = timeoutMs;
  }

  /** What Kafka reported for a send: refused, or the broker not confirming. */
  PublishFailure of(OutboundMessage m, Throwable e) {
    if (refused(e)) {
      return new PublishFailure(
          "kafka refused the message for " + where(m) + ": " + reason(e), false, e);
    }
    if (e instanceof TimeoutException) {
      return new PublishFailure(
          description
              + " did not confirm the message for "
              + where(m)
              + " within "
              + timeoutMs
              + " ms: "
              + reason(e),
          true,
          e);
    }
    return new PublishFailure(
        description + " could not take the message for " + where(m) + ": " + reason(e), true, e);
  }

  /**
   * The broker answered, and no: the message itself is wrong for it (too large, invalid topic, not
   * authorized, a policy). Errors of the connection (retriable ones, a failed login) and of the
   * producer's own state (fenced, sequence) are the channel's, not the message's.
   */
  static boolean refused(Throwable e) {
    if (e instanceof UnknownTopicOrPartitionException
        || e instanceof NotEnoughReplicasException
        || e instanceof NotEnoughReplicasAfterAppendException) {
      // Retriable for Kafka, and the producer retried them until the delivery timeout: they name
      // one topic (or partition), not the cluster, so they are that destination's fault.
      return true;
    }
    return e instanceof ApiException
        && !(e instanceof RetriableException)
        && !(e instanceof AuthenticationException)
        && !(e instanceof UnsupportedVersionException)
        && !(e instanceof ProducerFencedException)
        && !(e instanceof InvalidProducerEpochException)
        && !(e instanceof OutOfOrderSequenceException)
        && !(e instanceof UnknownProducerIdException)
        && !(e instanceof InvalidPidMappingException);
  }

  /** No confirmation within the timeout (the timeout thread's bound): the broker's fault. */
  PublishFailure timedOut(OutboundMessage m) {
    return new PublishFailure(
        description
            + " did not confirm the message for "
            + where(m)
            + " within "
            + timeoutMs
            + " ms (no answer from the broker)",
        true);
  }

  /** The message has no topic: the channel's target is empty. */
  static PublishFailure noTopic(OutboundMessage m) {
    return new PublishFailure(
        "kafka refused the message for " + where(m) + ": no topic (the channel's target is empty)",
        false);
  }

  /** The message's topic does not exist (or may not be described): that destination's fault. */
  static PublishFailure noSuchTopic(OutboundMessage m, Known topic) {
    return new PublishFailure(
        "kafka refused the message for "
            + where(m)
            + ": no such topic (auto-creation off, or not allowed): "
            + topic.reason(),
        false);
  }

  /** The cluster did not say whether the message's topic exists: the broker's fault. */
  PublishFailure topicUnanswered(OutboundMessage m, String noAnswer) {
    return new PublishFailure(
        description
            + " did not confirm the message for "
            + where(m)
            + " within "
            + timeoutMs
            + " ms: no answer whether the topic exists: "
            + noAnswer,
        true);
  }

  PublishFailure closed(OutboundMessage m) {
    return closed(m, null);
  }

  /** The publisher closed before the broker answered; {@code e}, when not null, is why. */
  PublishFailure closed(OutboundMessage m, Throwable e) {
    String what =
        description + " publisher closed before the broker confirmed the message for " + where(m);
    return e == null
        ? new PublishFailure(what, true)
        : new PublishFailure(what + ": " + reason(e), true, e);
  }

  /** "topic orders (0/orders/1/1, 12 bytes)". */
  static String where(OutboundMessage m) {
    return "topic "
        + m.target()
        + " ("
        + m.messageId()
        + ", "
        + (m.body() == null ? 0 : m.body().length)
        + " bytes)";
  }

  /** Kafka's exception as a reason: "TimeoutException: Topic orders not present in metadata". */
  static String reason(Throwable e) {
    String text = e.getMessage();
    return e.getClass().getSimpleName() + (text == null || text.isBlank() ? "" : ": " + text);
  }
}
