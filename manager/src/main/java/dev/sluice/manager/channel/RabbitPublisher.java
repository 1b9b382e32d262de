package dev.sluice.manager.channel;

import com.rabbitmq.client.Connection;
import dev.sluice.core.loop.Ticker;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.Socket;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes channel messages to RabbitMQ (AMQP 0-9-1) with publisher confirms: a future completes
 * once the broker confirmed the message, which for a persistent message routed to durable queues
 * means written to disk.
 *
 * <p>Exchange = {@link OutboundMessage#target()} ("" is the default exchange), routing key = {@link
 * OutboundMessage#routingKey()} (null means ""), {@code mandatory}, delivery mode 2 (persistent),
 * message id = {@link OutboundMessage#messageId()}, one string header per entry of {@link
 * OutboundMessage#headers()}, body as given; nothing else is set.
 *
 * <h2>Threads</h2>
 *
 * <ul>
 *   <li>Callers (the queues' dispatcher threads) only append to the inbox and the deadline list:
 *       {@link #publish} never waits for the broker, whether it is down, silent or blocking
 *       publishers ({@code connection.blocked}).
 *   <li>The <b>publisher thread</b> ({@code sluice-rabbit-<connection name>}) owns the {@link
 *       Connection}, the one {@link Channel} (a channel is not safe for concurrent publishing) and
 *       every bookkeeping structure: the messages waiting to be sent, the unconfirmed ones by
 *       sequence number, the nacked ones waiting for their return. It connects, reconnects with
 *       backoff ({@link RabbitReconnects#RECONNECT}: 100 ms doubling to 5 s, with jitter; the
 *       client's automatic recovery is off), opens channels, publishes, and settles confirms,
 *       returns and closes ({@link RabbitLink}, with the messages' bookkeeping in {@link
 *       RabbitConfirms}). It can block in a socket write while the broker reads nothing; the
 *       timeout thread then cuts the connection.
 *   <li>The client's <b>I/O thread</b> ({@code AMQP Connection <host:port>}, a daemon) reads the
 *       socket and runs the confirm, return, blocked and shutdown listeners, which only post events
 *       to the inbox (tagged with the channel or connection they came from, so that an event of a
 *       channel that is gone is ignored: sequence numbers start again on every channel).
 *   <li>The <b>timeout thread</b> ({@code sluice-rabbit-timeout-<connection name>}, a {@link
 *       TimeoutSweeper}) fails, every 50 ms on the ticker, the futures older than the publish
 *       timeout: the bound on every future even if the broker never answers. When a message that
 *       was sent times out, it closes the connection's socket (a connection that confirms nothing
 *       for that long is treated as lost); everything else unconfirmed on it then fails and the
 *       publisher reconnects.
 *   <li>{@link #close} runs on the caller's thread.
 * </ul>
 *
 * Futures complete on the publisher, timeout or closing thread: what depends on them must not
 * block. A future that failed may still have been taken by the broker (a lost confirm, a timeout, a
 * resend after a channel error): the channel headers and message id let consumers drop such a
 * duplicate.
 *
 * <h2>Loops</h2>
 *
 * Neither thread runs through core's {@code LoopRunner}, whose faults are counted per shard and
 * queue (a publisher serves every queue bound to its channel, on every shard) and whose pause after
 * a failure is a sleep (the publisher thread must go on taking its inbox while it waits to
 * reconnect, and the timeout thread must not slow down). They keep its discipline: the one named,
 * jittered {@link RabbitReconnects#RECONNECT} backoff, measured on the injected {@link Ticker} (as
 * are the deadlines, the sweeps and the nack grace); failures counted per channel ({@link
 * PublisherFaults}: {@code sluice_channel_connect_failures_total}, {@code
 * sluice_channel_loop_errors_total}); an outage logged when it starts, when its reason changes and
 * when it ends, not at every attempt; an unexpected error survived (the publisher thread drops its
 * connection and reconnects, the timeout thread sweeps again at its next turn).
 *
 * <h2>Failures</h2>
 *
 * <ul>
 *   <li>Unroutable ({@code basic.return}, NO_ROUTE): {@link PublishFailure#brokerDown()} false.
 *   <li>A queue it routes to is full and rejects publishes ({@code x-overflow reject-publish}; a
 *       nack from RabbitMQ, a return with RESOURCE_ERROR from Qpid): false. That destination
 *       refused this message; the broker takes others.
 *   <li>The broker closed the channel because of the message (a missing exchange, 404 NOT_FOUND; a
 *       message over the broker's size limit; no access): false, with the broker's reason. The
 *       other messages unconfirmed on that channel did not fail: they are sent again on a new
 *       channel, one at a time until the one the broker refuses is found.
 *   <li>Any other nack (a queue it routes to could not store it): false, for the same reason.
 *   <li>No confirm within the publish timeout, the connection lost or closed by the broker, not
 *       connected, connections blocked by the broker, the publisher closed: true.
 * </ul>
 */
public final class RabbitPublisher implements ChannelPublisher {
  private static final Logger log = LoggerFactory.getLogger(RabbitPublisher.class);

  private final RabbitChannelSettings settings;
  private final String description;
  private final long timeoutNanos;
  private final String timeoutText;
  private final Ticker ticker;
  private final PublisherFaults faults;
  private final RabbitLink link;

  /** Every publish in the order of its deadline; the timeout thread drops the settled ones. */
  private final ConcurrentLinkedQueue<RabbitPending> byDeadline = new ConcurrentLinkedQueue<>();

  private final Thread publisherThread;
  private final TimeoutSweeper timeouts;
  private final AtomicBoolean closed = new AtomicBoolean();

  public RabbitPublisher(RabbitChannelSettings settings) {
    this(settings, Ticker.SYSTEM);
  }

  /**
   * With the ticker that dates every publish and drives the deadlines, the reconnect backoff and
   * the nack grace: {@link Ticker#SYSTEM} but in tests of timing rules.
   */
  RabbitPublisher(RabbitChannelSettings settings, Ticker ticker) {
    this.settings = Objects.requireNonNull(settings, "settings");
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.description = "rabbitmq " + settings.redactedUri();
    long timeoutMs = settings.publishTimeout().toMillis();
    this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    this.timeoutText = timeoutMs % 1000 == 0 ? timeoutMs / 1000 + " s" : timeoutMs + " ms";
    this.faults =
        new PublisherFaults(description, ticker, true, RabbitLink.LOOP, TimeoutSweeper.LOOP);
    this.link = new RabbitLink(settings, description, ticker, faults);
    String name = settings.connectionName();
    this.publisherThread = new Thread(this::run, "sluice-rabbit-" + name);
    this.publisherThread.setDaemon(true);
    this.timeouts =
        new TimeoutSweeper("sluice-rabbit-timeout-" + name, ticker, faults, this::expire);
    this.publisherThread.start();
    this.timeouts.start();
    log.info(
        "{}: publisher started (connection name {}, publish timeout {})",
        description,
        name,
        timeoutText);
  }

  public RabbitChannelSettings settings() {
    return settings;
  }

  @Override
  public CompletableFuture<Void> publish(OutboundMessage message) {
    Objects.requireNonNull(message, "message");
    RabbitPending p = new RabbitPending(message, ticker.nanos() + timeoutNanos);
    if (closed.get()) {
      p.future.completeExceptionally(closedFailure(description, message));
      return p.future;
    }
    // Listed first, then the closed check again: close() sets the flag before it fails what is
    // listed, so a publish racing with it is failed by one or the other.
    byDeadline.add(p);
    if (closed.get()) {
      byDeadline.remove(p);
      p.future.completeExceptionally(closedFailure(description, message));
    } else if (message.target() == null) {
      p.future.completeExceptionally(
          new PublishFailure(
              description
                  + " refused "
                  + message.describe()
                  + ": no exchange (the channel's target is null; \"\" is the default exchange)",
              false));
    } else {
      link.inbox.add(new RabbitEvent.Publish(p));
    }
    return p.future;
  }

  /**
   * True while the publisher holds a connection with an open channel, the broker does not block
   * publishers, and no message sent on this connection went unconfirmed for the publish timeout.
   * False before the first connection, while reconnecting, and while blocked. A refused message
   * (unroutable, too large, a missing exchange) does not change it.
   */
  @Override
  public boolean connected() {
    return !closed.get() && link.connected();
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
   * connection. Every future is complete when this returns.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    link.inbox.add(new RabbitEvent.Stop());
    if (Thread.currentThread() == publisherThread) {
      return; // called from a future's callback: the thread fails the rest as it stops
    }
    long graceMs = Math.min(TimeUnit.NANOSECONDS.toMillis(timeoutNanos), 1000);
    try {
      publisherThread.join(graceMs + 2000);
      if (publisherThread.isAlive()) {
        // Stuck in a socket write to a broker that reads nothing.
        closeQuietly(link.liveSocket());
        publisherThread.join(2000);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    failTheRest();
    log.info("{}: publisher closed", description);
  }

  /** The publisher thread: {@link RabbitLink#run}, then what close() may not have waited for. */
  private void run() {
    link.run();
    if (closed.get()) {
      failTheRest(); // close() may have been called on this thread and not waited
    }
  }

  /** After close: stops the timeout thread and fails whatever is still listed. Any thread. */
  private void failTheRest() {
    timeouts.stop();
    for (RabbitPending p; (p = byDeadline.poll()) != null; ) {
      p.future.completeExceptionally(closedFailure(description, p.message));
    }
    link.down();
  }

  // ---------------------------------------------------------------- timeout thread

  /** One sweep: fails what is due. A sweep that throws is counted by the {@link TimeoutSweeper}. */
  private void expire() {
    long now = ticker.nanos();
    for (RabbitPending p; (p = byDeadline.peek()) != null; ) {
      if (p.future.isDone()) {
        byDeadline.poll();
        continue;
      }
      if (p.deadline - now > 0) {
        break;
      }
      byDeadline.poll();
      Connection sentOn = p.sentOn;
      String why = sentOn != null ? "" : heldReason();
      boolean failed =
          p.fail(
              description
                  + ": "
                  + p.message.describe()
                  + " was not confirmed within "
                  + timeoutText
                  + why,
              true);
      if (failed && sentOn != null) {
        link.unanswered(sentOn);
        link.cut(
            sentOn, "no confirm within " + timeoutText + "; the publisher closed the connection");
      }
    }
  }

  private String heldReason() {
    if (closed.get()) {
      return " (the publisher is closing)";
    }
    String down = link.downReason();
    return down == null ? " (still waiting to be sent)" : " (not sent: " + down + ")";
  }

  // ---------------------------------------------------------------- helpers

  static PublishFailure closedFailure(String description, OutboundMessage m) {
    return new PublishFailure(
        description + ": the publisher was closed before the broker confirmed " + m.describe(),
        true);
  }

  static void closeQuietly(Socket s) {
    if (s != null) {
      try {
        s.close();
      } catch (IOException e) {
        // closing anyway
      }
    }
  }
}
