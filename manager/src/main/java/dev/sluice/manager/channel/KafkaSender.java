package dev.sluice.manager.channel;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * The send thread of a {@link KafkaPublisher} ({@code sluice-kafka-send-<client id>}, a daemon):
 * takes the messages from the outbox one at a time and hands each to {@link Producer#send}, which
 * can block up to {@code max.block.ms} (the publish timeout) while the producer's buffer is full or
 * it waits for metadata. It sends only to topics {@link KafkaTopics} knows to exist: a message for
 * a topic not known yet waits off this thread for the cluster's answer ({@link #resume} hands it
 * back), and one for a missing topic is refused at once, so a missing topic never holds up the
 * messages behind it. Messages whose future completed meanwhile (timed out) are not sent.
 *
 * <p>Not a core {@code LoopRunner}: its faults are counted per channel ({@link PublisherFaults},
 * loop {@value #LOOP}), and it has nothing to back off. A turn sends one message and whatever fails
 * is that message's, settled at once with Kafka's reason; nothing is retried here (the producer
 * retries and reconnects by itself, with its own backoff). A turn that throws what nothing expected
 * is counted and logged, the message's future is left to the timeout thread, and the next message
 * goes.
 *
 * <p>Threads: callers and the admin client's thread append to the outbox; this thread alone takes.
 */
final class KafkaSender {
  /** The send thread's loop, as {@link PublisherFaults} counts it. */
  static final String LOOP = "send";

  private final Producer<byte[], byte[]> producer;
  private final KafkaTopics topics;
  private final KafkaAnswers answers;
  private final KafkaFailures failures;
  private final PublisherFaults faults;
  private final BooleanSupplier closed;
  private final LinkedBlockingQueue<KafkaPending> outbox = new LinkedBlockingQueue<>();
  private final Thread thread;

  KafkaSender(
      String threadName,
      Producer<byte[], byte[]> producer,
      KafkaTopics topics,
      KafkaAnswers answers,
      KafkaFailures failures,
      PublisherFaults faults,
      BooleanSupplier closed) {
    this.producer = producer;
    this.topics = topics;
    this.answers = answers;
    this.failures = failures;
    this.faults = faults;
    this.closed = closed;
    this.thread = new Thread(this::loop, threadName);
    this.thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /** Queues {@code p} for the send thread. Any thread. */
  void add(KafkaPending p) {
    outbox.add(p);
  }

  /**
   * Ends the thread (the publisher is closed: the loop ends at its next look) and waits up to
   * {@code ms} for it: a send blocked in the producer is interrupted.
   */
  void stop(long ms) throws InterruptedException {
    thread.interrupt();
    thread.join(ms);
  }

  /** What the thread did not take; the outbox is empty after. */
  List<KafkaPending> drain() {
    List<KafkaPending> left = new ArrayList<>();
    outbox.drainTo(left);
    return left;
  }

  private void loop() {
    while (!closed.getAsBoolean()) {
      KafkaPending p;
      try {
        p = outbox.take();
      } catch (InterruptedException e) {
        continue; // close() interrupts; the loop condition ends it
      }
      if (!p.future.isDone()) {
        try {
          send(p);
        } catch (RuntimeException | Error e) { // an Error too: the thread must not die of it
          // Not expected (send settles its own errors); the timeout still completes the future.
          faults.caught(LOOP, e);
        }
      }
    }
  }

  private void send(KafkaPending p) {
    OutboundMessage m = p.message;
    KafkaTopics.Known topic = topics.lookup(m.target(), p, this::resume);
    if (topic == null) {
      return; // waits for the answer whether the topic exists; resume() hands it back
    }
    if (!topic.exists()) {
      p.future.completeExceptionally(KafkaFailures.noSuchTopic(m, topic));
      return;
    }
    try {
      ProducerRecord<byte[], byte[]> record =
          new ProducerRecord<>(m.target(), null, null, m.key(), m.body(), headers(m.headers()));
      producer.send(record, (metadata, e) -> answers.settle(p, e));
    } catch (RuntimeException e) {
      // Kafka reports most errors to the callback; what it throws (producer closed, interrupted)
      // comes here.
      answers.settle(p, e);
    }
  }

  /**
   * A message that waited for its topic's answer (admin client's thread): back to the send thread
   * when the topic exists, refused when it does not, failed as the broker not answering when the
   * cluster could not say.
   */
  private void resume(KafkaPending p, KafkaTopics.Known topic, String noAnswer) {
    if (p.future.isDone()) {
      return;
    }
    if (closed.getAsBoolean()) {
      p.future.completeExceptionally(failures.closed(p.message)); // the admin client closed too
    } else if (topic == null) {
      answers.fail(p, failures.topicUnanswered(p.message, noAnswer));
    } else if (topic.exists()) {
      outbox.add(p);
    } else {
      p.future.completeExceptionally(KafkaFailures.noSuchTopic(p.message, topic));
    }
  }

  private static List<Header> headers(Map<String, String> headers) {
    if (headers == null || headers.isEmpty()) {
      return List.of();
    }
    List<Header> list = new ArrayList<>(headers.size());
    headers.forEach(
        (k, v) ->
            list.add(new RecordHeader(k, v == null ? null : v.getBytes(StandardCharsets.UTF_8))));
    return list;
  }
}
