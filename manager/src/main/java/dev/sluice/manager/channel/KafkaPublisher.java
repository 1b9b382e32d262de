package dev.sluice.manager.channel;

import dev.sluice.core.loop.Ticker;
import dev.sluice.manager.config.KafkaChannelSettings;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Iterator;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.KafkaException;
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
 *   <li>The <b>send thread</b> ({@code sluice-kafka-send-<client id>}, a {@link KafkaSender}) owns
 *       the calls to {@link KafkaProducer#send}, which can block up to {@code max.block.ms} (= the
 *       publish timeout). It sends only to topics {@link KafkaTopics} knows to exist, so a missing
 *       topic never holds up the messages behind it.
 *   <li>The admin client's thread (of {@link KafkaTopics}) answers whether a topic exists and hands
 *       the messages that waited back to the outbox (or fails them).
 *   <li>Kafka's I/O thread ({@code kafka-producer-network-thread | <client id>}) runs the send
 *       callbacks, which complete the futures ({@link KafkaAnswers}).
 *   <li>The <b>timeout thread</b> ({@code sluice-kafka-timeout-<client id>}, a {@link
 *       TimeoutSweeper}) fails, every 50 ms on the ticker, the futures older than the publish
 *       timeout plus a slack (a tenth of it, 200 ms to 1 s): the bound on every future even if the
 *       broker never answers. Kafka's own {@code delivery.timeout.ms} normally fails them first,
 *       with its reason.
 *   <li>{@link #close} runs on the caller's thread.
 * </ul>
 *
 * Futures complete on those threads: what depends on them must not block (the queues' outcome
 * handlers only enqueue). A future failed by the timeout or by {@link #close} may still have been
 * written by the broker: the channel headers let consumers drop such a duplicate.
 *
 * <h2>Loops</h2>
 *
 * Neither the send thread nor the timeout thread runs through core's {@code LoopRunner}, whose
 * faults are counted per shard and queue (a publisher serves every queue bound to its channel, on
 * every shard) and which backs off after a failed pass: the send thread retries nothing (each
 * message is settled with its own reason; the producer reconnects by itself), and the timeout
 * thread is the bound on every future, so it must not slow down. They keep its discipline: time on
 * the injected {@link Ticker} (the deadlines, the sweeps), and what they did not expect counted per
 * channel ({@link PublisherFaults}, {@code sluice_channel_loop_errors_total{loop=send|timeout}}),
 * logged with its stack at most every 10 s, and survived.
 *
 * <h2>Failures</h2>
 *
 * A message the broker refused (too large, invalid topic, not authorized, a policy) or that its one
 * destination could not take (a topic that does not exist, too few in-sync replicas) fails with
 * {@link PublishFailure#brokerDown()} false and Kafka's reason: the event's fault, not the
 * channel's. A message that got no confirmation in time (the broker down or unreachable, a timeout,
 * a failed login, the producer closed) fails with {@code brokerDown} true ({@link KafkaFailures}).
 * The producer reconnects by itself.
 */
public final class KafkaPublisher implements ChannelPublisher {
  private static final Logger log = LoggerFactory.getLogger(KafkaPublisher.class);

  private final KafkaChannelSettings settings;
  private final String description;
  private final long timeoutMs;
  private final long deadlineNanos;
  private final long closeGraceMs;
  private final Ticker ticker;
  private final Producer<byte[], byte[]> producer;
  private final KafkaFailures failures;
  private final KafkaAnswers answers;
  private final PublisherFaults faults;

  /** Which topics exist: the send thread never waits for the metadata of a missing one. */
  private final KafkaTopics topics;

  private final KafkaSender sender;

  /** Every publish in the order of its deadline; the timeout thread drops the settled ones. */
  private final ConcurrentLinkedQueue<KafkaPending> byDeadline = new ConcurrentLinkedQueue<>();

  private final TimeoutSweeper timeouts;
  private final AtomicBoolean closed = new AtomicBoolean();

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
    this.failures = new KafkaFailures(description, timeoutMs);
    try {
      this.producer = new KafkaProducer<>(settings.producerConfig());
    } catch (KafkaException e) {
      throw new IllegalArgumentException(
          description + ": cannot create the producer: " + KafkaFailures.reason(e), e);
    }
    try {
      this.topics =
          new KafkaTopics(
              description, settings.producerConfig(), settings.publishTimeout(), ticker);
    } catch (IllegalArgumentException e) {
      producer.close(Duration.ZERO);
      throw e;
    }
    this.answers = new KafkaAnswers(description, failures, producer, closed::get);
    this.faults =
        new PublisherFaults(description, ticker, false, KafkaSender.LOOP, TimeoutSweeper.LOOP);
    String client = settings.clientId();
    this.sender =
        new KafkaSender(
            "sluice-kafka-send-" + client,
            producer,
            topics,
            answers,
            failures,
            faults,
            closed::get);
    this.timeouts =
        new TimeoutSweeper("sluice-kafka-timeout-" + client, ticker, faults, this::expire);
    this.sender.start();
    this.timeouts.start();
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
    KafkaPending p = new KafkaPending(message, ticker.nanos() + deadlineNanos);
    if (closed.get()) {
      p.future.completeExceptionally(failures.closed(message));
      return p.future;
    }
    // Listed first, then the closed check again: close() sets the flag before it fails what is
    // listed, so a publish racing with it is failed by one or the other.
    byDeadline.add(p);
    if (closed.get()) {
      byDeadline.remove(p);
      p.future.completeExceptionally(failures.closed(message));
    } else if (message.target() == null || message.target().isBlank()) {
      p.future.completeExceptionally(KafkaFailures.noTopic(message));
    } else {
      sender.add(p);
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
    return !closed.get() && answers.connected();
  }

  @Override
  public String describe() {
    return description;
  }

  @Override
  public void registerMetrics(MeterRegistry registry, String channel) {
    faults.register(registry, channel);
  }

  /** What its threads counted of their failures. */
  PublisherFaults faults() {
    return faults;
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
    timeouts.stop();
    try {
      timeouts.join(1000);
      sender.stop(timeoutMs + 1000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    int failed = 0;
    for (KafkaPending p : sender.drain()) {
      if (p.future.completeExceptionally(failures.closed(p.message))) {
        failed++;
      }
    }
    topics.close();
    try {
      producer.close(Duration.ofMillis(closeGraceMs));
    } catch (RuntimeException e) {
      log.warn("{}: producer did not close cleanly: {}", description, KafkaFailures.reason(e));
    }
    for (KafkaPending p; (p = byDeadline.poll()) != null; ) {
      if (p.future.completeExceptionally(failures.closed(p.message))) {
        failed++;
      }
    }
    log.info(
        "{}: publisher closed{}",
        description,
        failed == 0 ? "" : " (" + failed + " unconfirmed messages failed here)");
  }

  // ---- timeout thread

  /** One sweep: fails what is due. A sweep that throws is counted by the {@link TimeoutSweeper}. */
  private void expire() {
    long now = ticker.nanos();
    // In deadline order; stops at the first one not yet due. The iterator removes exactly the
    // element it returned, whatever else removes meanwhile.
    for (Iterator<KafkaPending> it = byDeadline.iterator(); it.hasNext(); ) {
      KafkaPending p = it.next();
      if (!p.future.isDone() && now - p.deadline < 0) {
        return;
      }
      it.remove();
      if (!p.future.isDone()) {
        answers.fail(p, failures.timedOut(p.message));
      }
    }
  }
}
