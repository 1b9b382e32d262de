package dev.sluice.manager.channel;

import dev.sluice.core.loop.Ticker;
import dev.sluice.manager.config.KafkaChannelSettings;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
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
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes channel messages to Kafka with an idempotent producer ({@code acks=all}): a future
 * completes once every in-sync replica has the record.
 *
 * <p>Topic = {@link OutboundMessage#target()}, record key = {@link OutboundMessage#key()}, value =
 * the body, and one header per entry of {@link OutboundMessage#headers()} (UTF-8); nothing else is
 * added. The partition is Kafka's choice (the key's hash, or sticky batches without a key).
 *
 * <h2>Threads</h2>
 *
 * <ul>
 *   <li>Callers (the queues' dispatcher threads) only append to the outbox and the deadline list:
 *       {@link #publish} never waits for the broker.
 *   <li>The <b>send thread</b> ({@code sluice-kafka-send-<client id>}) owns the calls to {@link
 *       KafkaProducer#send}, which can block up to {@code max.block.ms} (= the publish timeout)
 *       while the producer's buffer is full or it waits for metadata. It sends only to topics
 *       {@link KafkaTopics} knows to exist: a message for a topic not known yet waits off this
 *       thread for the cluster's answer, and one for a missing topic is refused at once, so a
 *       missing topic never holds up the messages behind it. Messages whose future completed
 *       meanwhile (timed out) are not sent.
 *   <li>The admin client's thread (of {@link KafkaTopics}) answers whether a topic exists and hands
 *       the messages that waited back to the outbox (or fails them).
 *   <li>Kafka's I/O thread ({@code kafka-producer-network-thread | <client id>}) runs the send
 *       callbacks, which complete the futures.
 *   <li>The <b>timeout thread</b> ({@code sluice-kafka-timeout-<client id>}) fails, every 50 ms,
 *       the futures older than the publish timeout plus a slack (a tenth of it, 200 ms to 1 s): the
 *       bound on every future even if the broker never answers. Kafka's own {@code
 *       delivery.timeout.ms} normally fails them first, with its reason.
 *   <li>{@link #close} runs on the caller's thread.
 * </ul>
 *
 * Futures complete on those threads: what depends on them must not block (the queues' outcome
 * handlers only enqueue). A future failed by the timeout or by {@link #close} may still have been
 * written by the broker: the channel headers let consumers drop such a duplicate.
 *
 * <h2>Failures</h2>
 *
 * A message the broker refused (too large, invalid topic, not authorized, a policy) or that its one
 * destination could not take (a topic that does not exist, too few in-sync replicas) fails with
 * {@link PublishFailure#brokerDown()} false and Kafka's reason: the event's fault, not the
 * channel's. A message that got no confirmation in time (the broker down or unreachable, a timeout,
 * a failed login, the producer closed) fails with {@code brokerDown} true. The producer reconnects
 * by itself.
 */
public final class KafkaPublisher implements ChannelPublisher {
  private static final Logger log = LoggerFactory.getLogger(KafkaPublisher.class);

  private static final long SWEEP_MS = 50;

  private final KafkaChannelSettings settings;
  private final String description;
  private final long timeoutMs;
  private final long deadlineNanos;
  private final long closeGraceMs;
  private final Producer<byte[], byte[]> producer;

  /** Which topics exist: the send thread never waits for the metadata of a missing one. */
  private final KafkaTopics topics;

  /** Appended by callers; taken by the send thread. */
  private final LinkedBlockingQueue<Pending> outbox = new LinkedBlockingQueue<>();

  /** Every publish in the order of its deadline; the timeout thread drops the settled ones. */
  private final ConcurrentLinkedQueue<Pending> byDeadline = new ConcurrentLinkedQueue<>();

  private final Ticker ticker;
  private final Thread sendThread;
  private final ScheduledExecutorService timeoutThread;
  private final AtomicBoolean closed = new AtomicBoolean();

  /** The last send that settled got no answer from the broker (see {@link #connected}). */
  private final AtomicBoolean unanswered = new AtomicBoolean();

  private volatile Metric connectionCount;

  private static final class Pending {
    final OutboundMessage message;
    final long deadline;
    final CompletableFuture<Void> future = new CompletableFuture<>();

    Pending(OutboundMessage message, long deadline) {
      this.message = message;
      this.deadline = deadline;
    }
  }

  public KafkaPublisher(KafkaChannelSettings settings) {
    this(settings, Ticker.SYSTEM);
  }

  /**
   * With the ticker that dates every publish and drives the timeout thread's deadlines: {@link
   * Ticker#SYSTEM} but in tests of timing rules.
   */
  KafkaPublisher(KafkaChannelSettings settings, Ticker ticker) {
    this.settings = Objects.requireNonNull(settings, "settings");
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.description = "kafka " + settings.bootstrapServers();
    this.timeoutMs = settings.publishTimeout().toMillis();
    long slackMs = Math.max(200, Math.min(1000, timeoutMs / 10));
    this.deadlineNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs + slackMs);
    this.closeGraceMs = Math.min(timeoutMs, 1000);
    try {
      this.producer = new KafkaProducer<>(settings.producerConfig());
    } catch (KafkaException e) {
      throw new IllegalArgumentException(
          description + ": cannot create the producer: " + reason(e), e);
    }
    try {
      this.topics =
          new KafkaTopics(
              description, settings.producerConfig(), settings.publishTimeout(), ticker);
    } catch (IllegalArgumentException e) {
      producer.close(Duration.ZERO);
      throw e;
    }
    String client = settings.clientId();
    this.sendThread = new Thread(this::sendLoop, "sluice-kafka-send-" + client);
    this.sendThread.setDaemon(true);
    this.timeoutThread =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "sluice-kafka-timeout-" + client);
              t.setDaemon(true);
              return t;
            });
    this.sendThread.start();
    this.timeoutThread.scheduleWithFixedDelay(
        this::expire, SWEEP_MS, SWEEP_MS, TimeUnit.MILLISECONDS);
    log.info(
        "{}: publisher started (client id {}, publish timeout {} ms)",
        description,
        client,
        timeoutMs);
  }

  public KafkaChannelSettings settings() {
    return settings;
  }

  @Override
  public CompletableFuture<Void> publish(OutboundMessage message) {
    Objects.requireNonNull(message, "message");
    Pending p = new Pending(message, ticker.nanos() + deadlineNanos);
    if (closed.get()) {
      p.future.completeExceptionally(closedFailure(message));
      return p.future;
    }
    // Listed first, then the closed check again: close() sets the flag before it fails what is
    // listed, so a publish racing with it is failed by one or the other.
    byDeadline.add(p);
    if (closed.get()) {
      byDeadline.remove(p);
      p.future.completeExceptionally(closedFailure(message));
    } else if (message.target() == null || message.target().isBlank()) {
      p.future.completeExceptionally(
          new PublishFailure(
              "kafka refused the message for "
                  + where(message)
                  + ": no topic (the channel's target is empty)",
              false));
    } else {
      outbox.add(p);
    }
    return p.future;
  }

  /**
   * True when the producer holds a connection to the cluster and the last send that settled was not
   * left unanswered. False before the producer first reached a broker, after the broker closed the
   * connection, and from a send that timed out or found the broker unreachable until a later one is
   * confirmed. A refusal (e.g. a message too large) does not change it.
   */
  @Override
  public boolean connected() {
    return !closed.get() && !unanswered.get() && connectionCount() > 0;
  }

  @Override
  public String describe() {
    return description;
  }

  /**
   * Stops taking messages, gives the ones sent a short grace (the publish timeout, at most 1 s) to
   * be confirmed, then fails what is still unconfirmed ({@code brokerDown} true) and closes the
   * producer. Every future is complete when this returns.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    // The timeout thread is stopped first: from here on, this thread alone takes from byDeadline.
    timeoutThread.shutdownNow();
    sendThread.interrupt();
    try {
      timeoutThread.awaitTermination(1, TimeUnit.SECONDS);
      sendThread.join(timeoutMs + 1000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    int failed = 0;
    for (Pending p; (p = outbox.poll()) != null; ) {
      if (p.future.completeExceptionally(closedFailure(p.message))) {
        failed++;
      }
    }
    topics.close();
    try {
      producer.close(Duration.ofMillis(closeGraceMs));
    } catch (RuntimeException e) {
      log.warn("{}: producer did not close cleanly: {}", description, reason(e));
    }
    for (Pending p; (p = byDeadline.poll()) != null; ) {
      if (p.future.completeExceptionally(closedFailure(p.message))) {
        failed++;
      }
    }
    log.info(
        "{}: publisher closed{}",
        description,
        failed == 0 ? "" : " (" + failed + " unconfirmed messages failed here)");
  }

  // ---- send thread

  private void sendLoop() {
    while (!closed.get()) {
      Pending p;
      try {
        p = outbox.take();
      } catch (InterruptedException e) {
        continue; // close() interrupts; the loop condition ends it
      }
      if (!p.future.isDone()) {
        try {
          send(p);
        } catch (RuntimeException e) {
          // Not expected (send settles its own errors); the timeout still completes the future.
          log.error("{}: sending {} failed", description, where(p.message), e);
        }
      }
    }
  }

  private void send(Pending p) {
    OutboundMessage m = p.message;
    KafkaTopics.Known topic = topics.lookup(m.target(), p, this::resume);
    if (topic == null) {
      return; // waits for the answer whether the topic exists; resume() hands it back
    }
    if (!topic.exists()) {
      p.future.completeExceptionally(noSuchTopic(m, topic));
      return;
    }
    try {
      ProducerRecord<byte[], byte[]> record =
          new ProducerRecord<>(m.target(), null, null, m.key(), m.body(), headers(m.headers()));
      producer.send(record, (metadata, e) -> settle(p, e));
    } catch (RuntimeException e) {
      // Kafka reports most errors to the callback; what it throws (producer closed, interrupted)
      // comes here.
      settle(p, e);
    }
  }

  /**
   * A message that waited for its topic's answer (admin client's thread): back to the send thread
   * when the topic exists, refused when it does not, failed as the broker not answering when the
   * cluster could not say.
   */
  private void resume(Pending p, KafkaTopics.Known topic, String noAnswer) {
    if (p.future.isDone()) {
      return;
    }
    if (closed.get()) {
      p.future.completeExceptionally(closedFailure(p.message)); // the admin client closed too
    } else if (topic == null) {
      String why =
          description
              + " did not confirm the message for "
              + where(p.message)
              + " within "
              + timeoutMs
              + " ms: no answer whether the topic exists: "
              + noAnswer;
      if (p.future.completeExceptionally(new PublishFailure(why, true))) {
        brokerUnanswered(why);
      }
    } else if (topic.exists()) {
      outbox.add(p);
    } else {
      p.future.completeExceptionally(noSuchTopic(p.message, topic));
    }
  }

  /** The message's topic does not exist (or may not be described): that destination's fault. */
  private static PublishFailure noSuchTopic(OutboundMessage m, KafkaTopics.Known topic) {
    return new PublishFailure(
        "kafka refused the message for "
            + where(m)
            + ": no such topic (auto-creation off, or not allowed): "
            + topic.reason(),
        false);
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

  // ---- Kafka's I/O thread (callbacks), the send thread (thrown errors)

  private void settle(Pending p, Exception e) {
    if (e == null) {
      if (unanswered.compareAndSet(true, false)) {
        log.info("{}: the broker confirms messages again", description);
      }
      p.future.complete(null);
      return;
    }
    PublishFailure failure = closed.get() ? closedFailure(p.message, e) : failure(p.message, e);
    if (failure.brokerDown()) {
      brokerUnanswered(failure.getMessage());
    }
    p.future.completeExceptionally(failure);
  }

  private void brokerUnanswered(String why) {
    if (unanswered.compareAndSet(false, true) && !closed.get()) {
      log.warn("{}: broker not confirming messages: {}", description, why);
    }
  }

  PublishFailure failure(OutboundMessage m, Throwable e) {
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

  private PublishFailure closedFailure(OutboundMessage m) {
    return new PublishFailure(
        description + " publisher closed before the broker confirmed the message for " + where(m),
        true);
  }

  private PublishFailure closedFailure(OutboundMessage m, Throwable e) {
    return new PublishFailure(
        description
            + " publisher closed before the broker confirmed the message for "
            + where(m)
            + ": "
            + reason(e),
        true,
        e);
  }

  private static String where(OutboundMessage m) {
    return "topic "
        + m.target()
        + " ("
        + m.messageId()
        + ", "
        + (m.body() == null ? 0 : m.body().length)
        + " bytes)";
  }

  static String reason(Throwable e) {
    String text = e.getMessage();
    return e.getClass().getSimpleName() + (text == null || text.isBlank() ? "" : ": " + text);
  }

  // ---- timeout thread

  private void expire() {
    try {
      long now = ticker.nanos();
      // In deadline order; stops at the first one not yet due. The iterator removes exactly the
      // element it returned, whatever else removes meanwhile.
      for (Iterator<Pending> it = byDeadline.iterator(); it.hasNext(); ) {
        Pending p = it.next();
        if (!p.future.isDone() && now - p.deadline < 0) {
          return;
        }
        it.remove();
        if (!p.future.isDone()) {
          String why =
              description
                  + " did not confirm the message for "
                  + where(p.message)
                  + " within "
                  + timeoutMs
                  + " ms (no answer from the broker)";
          if (p.future.completeExceptionally(new PublishFailure(why, true))) {
            brokerUnanswered(why);
          }
        }
      }
    } catch (RuntimeException e) {
      log.error("{}: timeout sweep failed", description, e);
    }
  }

  // ---- any thread

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
