package dev.sluice.manager.channel;

import static dev.sluice.manager.channel.RabbitReplies.brokerReason;
import static dev.sluice.manager.channel.RabbitReplies.reason;
import static dev.sluice.manager.channel.RabbitReplies.shutdownReason;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.ShutdownSignalException;
import com.rabbitmq.client.impl.ForgivingExceptionHandler;
import dev.sluice.core.loop.Ticker;
import dev.sluice.manager.channel.RabbitEvent.Blocked;
import dev.sluice.manager.channel.RabbitEvent.ChannelDown;
import dev.sluice.manager.channel.RabbitEvent.Confirm;
import dev.sluice.manager.channel.RabbitEvent.ConnectionDown;
import dev.sluice.manager.channel.RabbitEvent.Publish;
import dev.sluice.manager.channel.RabbitEvent.Returned;
import dev.sluice.manager.channel.RabbitEvent.Stop;
import dev.sluice.manager.channel.RabbitEvent.Unblocked;
import java.io.IOException;
import java.net.Socket;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The publisher thread of a {@link RabbitPublisher} and the connection it owns: connects,
 * reconnects when {@link RabbitReconnects} says (the client's automatic recovery is off), opens the
 * one channel, sends what {@link RabbitConfirms} holds and hands it the confirms and returns.
 *
 * <p>Its loop takes what arrived in the inbox, waiting at most until the next thing due on the
 * ticker (a reconnect, a nack's grace). It is not a core {@code LoopRunner} (see {@link
 * RabbitPublisher}, Loops): while it waits out the reconnect backoff it still takes publishes and
 * the stop. A turn that throws what nothing expected (a bug, an {@code Error}) is counted and
 * logged ({@link PublisherFaults#caught}, loop {@value #LOOP}); the connection is then dropped as
 * if lost, so that the next one starts from a known state after the backoff, and the thread goes
 * on.
 *
 * <p>The fields marked volatile are read by the other threads: whether it is up, why not, and the
 * connection and socket that {@link #cut} closes. Every other field is the publisher thread's.
 */
final class RabbitLink {
  private static final Logger log = LoggerFactory.getLogger(RabbitPublisher.class);

  /** The publisher thread's loop, as {@link PublisherFaults} counts it. */
  static final String LOOP = "publisher";

  private final RabbitChannelSettings settings;
  private final String description;
  private final long timeoutNanos;
  private final Ticker ticker;
  private final ConnectionFactory factory;
  private final RabbitConfirms confirms;
  private final PublisherFaults faults;
  private final RabbitReconnects reconnects;

  /** Appended by callers and the I/O thread; taken by the publisher thread. */
  final LinkedBlockingQueue<RabbitEvent> inbox = new LinkedBlockingQueue<>();

  // Published by the publisher thread for the others.

  /** A connection with an open channel, and the broker not blocking publishers. */
  private volatile boolean up;

  /** The connection on which a sent message timed out (see {@link #connected}). */
  private volatile Connection unansweredOn;

  /** Why the publisher is not up: for the reasons of timeouts. */
  private volatile String downReason = "not connected yet";

  /** The current connection and its socket, which the timeout thread may cut. */
  private volatile Connection liveConnection;

  private volatile Socket liveSocket;

  /** Why the connection was cut, set by whoever cut it (once per connection). */
  private final AtomicReference<String> cutReason = new AtomicReference<>();

  /** The socket the client opened last: set by the socket configurator on the publisher thread. */
  private Socket lastSocket;

  // Publisher thread only.

  private Connection connection;
  private long connectionGen;
  private Channel channel;
  private long channelGen;

  /** The channel threw on a publish: nothing more is sent on it until its close is handled. */
  private boolean channelBroken;

  private boolean blocked;
  private String blockedReason;
  private boolean stopping;

  RabbitLink(
      RabbitChannelSettings settings, String description, Ticker ticker, PublisherFaults faults) {
    this.settings = settings;
    this.description = description;
    this.ticker = ticker;
    this.faults = faults;
    this.reconnects = new RabbitReconnects(description, ticker, faults);
    this.timeoutNanos = settings.publishTimeout().toNanos();
    this.confirms = new RabbitConfirms(description);
    this.factory =
        settings.connectionFactory(socket -> lastSocket = socket, new QuietExceptionHandler());
  }

  // ---------------------------------------------------------------- any thread

  /**
   * Up, and no message sent on this connection went unconfirmed for the publish timeout. A message
   * of an earlier connection that times out late does not count against this one.
   */
  boolean connected() {
    Connection unanswered = unansweredOn;
    return up && (unanswered == null || unanswered != liveConnection);
  }

  /** A message sent on {@code c} was not confirmed in time. */
  void unanswered(Connection c) {
    unansweredOn = c;
  }

  void down() {
    up = false;
  }

  String downReason() {
    return downReason;
  }

  Socket liveSocket() {
    return liveSocket;
  }

  /**
   * Closes the socket of the connection if it is still the current one, once: the client's I/O
   * thread then reports the connection lost.
   */
  void cut(Connection c, String why) {
    if (c == null || c != liveConnection || !cutReason.compareAndSet(null, why)) {
      return;
    }
    log.warn("{}: {}", description, why);
    RabbitPublisher.closeQuietly(liveSocket);
  }

  // ---------------------------------------------------------------- publisher thread

  void run() {
    try {
      while (!stopping) {
        try {
          turn();
        } catch (RuntimeException | Error e) { // an Error too: the thread must not die of it
          recover(e);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      finish();
    } catch (RuntimeException | Error e) { // the publisher fails what is left as it closes
      faults.caught(LOOP, e);
    }
  }

  /** One turn: what arrived, then what is due (a nack's grace, a reconnect, a channel, sends). */
  private void turn() throws InterruptedException {
    RabbitEvent e = inbox.poll(waitNanos(), TimeUnit.NANOSECONDS);
    if (e != null) {
      handle(e);
      // Drain what else arrived before sending more, so that a close or a confirm is seen before
      // the next batch.
      for (RabbitEvent more; !stopping && (more = inbox.poll()) != null; ) {
        handle(more);
      }
    }
    if (stopping) {
      return;
    }
    confirms.expireNackGrace(ticker.nanos());
    if (connection == null && reconnects.due()) {
      connect();
    }
    if (connection != null && channel == null && !channelBroken) {
      openChannel();
    }
    send();
  }

  /**
   * A turn threw what nothing expected: counted and logged, the connection dropped as if lost (what
   * it had not confirmed fails, broker down; its socket is closed), and the next connection attempt
   * waits the backoff. What the turn was handling when it threw is failed by the timeout thread.
   */
  private void recover(Throwable t) {
    faults.caught(LOOP, t);
    if (connection != null) {
      String why = "the publisher thread failed (" + t + "); the publisher closed the connection";
      if (cutReason.compareAndSet(null, why)) {
        RabbitPublisher.closeQuietly(liveSocket);
      }
      drop(cutReason.get());
    }
    reconnects.turnFailed();
  }

  private long waitNanos() {
    long now = ticker.nanos();
    long wait = TimeUnit.SECONDS.toNanos(1);
    if (connection == null) {
      wait = reconnects.waitNs(wait);
    } else if (channel == null && !channelBroken) {
      return 0;
    } else if (canSend()) {
      return 0;
    }
    return confirms.nackWait(now, wait);
  }

  private void handle(RabbitEvent e) {
    if (e instanceof Publish p) {
      confirms.add(p.pending());
    } else if (e instanceof Confirm c) {
      if (c.channelGen() == channelGen) { // else of a channel that is gone, settled when it went
        unansweredOn = null;
        confirms.onConfirm(c, ticker.nanos());
      }
    } else if (e instanceof Returned r) {
      if (r.channelGen() == channelGen) {
        confirms.onReturn(r);
      }
    } else if (e instanceof ChannelDown d) {
      onChannelDown(d);
    } else if (e instanceof ConnectionDown d) {
      onConnectionDown(d);
    } else if (e instanceof Blocked b) {
      onBlocked(b);
    } else if (e instanceof Unblocked u) {
      onUnblocked(u);
    } else if (e instanceof Stop) {
      stopping = true;
    }
  }

  private void connect() {
    Connection c;
    try {
      lastSocket = null;
      c = factory.newConnection(settings.connectionName());
    } catch (IOException | TimeoutException | RuntimeException e) {
      String why = reason(e);
      reconnects.failed(why);
      downReason = "cannot connect: " + why;
      return;
    }
    long gen = ++connectionGen;
    connection = c;
    cutReason.set(null);
    liveSocket = lastSocket;
    liveConnection = c;
    blocked = false;
    channelBroken = false; // a late close of the last connection's channel said nothing of this one
    c.addShutdownListener(cause -> inbox.add(new ConnectionDown(gen, cause)));
    c.addBlockedListener(
        reason -> inbox.add(new Blocked(gen, reason)), () -> inbox.add(new Unblocked(gen)));
    reconnects.connected();
  }

  private void openChannel() {
    Connection c = connection;
    Channel ch;
    try {
      ch = c.createChannel();
      if (ch == null) {
        throw new IOException("the broker has no channel number left");
      }
      ch.confirmSelect();
    } catch (IOException | RuntimeException e) {
      log.warn("{}: cannot open a channel: {}; reconnecting", description, reason(e));
      cut(c, "cannot open a channel: " + reason(e));
      channelBroken = true;
      return;
    }
    long gen = ++channelGen;
    ch.addConfirmListener(
        (tag, multiple) -> inbox.add(new Confirm(gen, tag, multiple, true)),
        (tag, multiple) -> inbox.add(new Confirm(gen, tag, multiple, false)));
    ch.addReturnListener(
        r ->
            inbox.add(
                new Returned(
                    gen,
                    r.getReplyCode(),
                    r.getReplyText(),
                    r.getExchange(),
                    r.getRoutingKey(),
                    r.getProperties() == null ? null : r.getProperties().getMessageId())));
    ch.addShutdownListener(cause -> inbox.add(new ChannelDown(gen, cause)));
    channel = ch;
    channelBroken = false;
    setUp();
  }

  private void setUp() {
    boolean now = connection != null && channel != null && !blocked;
    if (now) {
      downReason = null;
    }
    up = now;
  }

  private boolean canSend() {
    return channel != null && !channelBroken && !blocked && confirms.canSendNext();
  }

  private void send() {
    if (!canSend()) {
      return;
    }
    Exception e = confirms.send(channel, connection);
    if (e != null) {
      // The channel or connection closed under us: its shutdown event says why.
      channelBroken = true;
      if (!(e instanceof ShutdownSignalException)) {
        cut(connection, "a publish failed: " + reason(e));
      }
    }
  }

  private void onChannelDown(ChannelDown d) {
    if (d.channelGen() != channelGen) {
      return;
    }
    channel = null;
    channelBroken = false;
    up = false;
    ShutdownSignalException cause = d.cause();
    if (cause.isHardError() || connection == null) {
      // The connection went: its own event fails what is unconfirmed and reconnects.
      channelBroken = true;
      return;
    }
    confirms.channelClosed(brokerReason(cause));
  }

  private void onConnectionDown(ConnectionDown d) {
    if (d.connectionGen() != connectionGen || connection == null) {
      return;
    }
    String cut = cutReason.get();
    String why = cut != null ? cut : shutdownReason(d.cause());
    int failed = drop(why);
    if (!stopping) {
      log.warn(
          "{}: connection lost: {}; {} unconfirmed messages failed; reconnecting",
          description,
          why,
          failed);
    }
  }

  /**
   * Forgets the connection ({@code why} it went): later events of it and of its channel are
   * ignored, and what it had not confirmed fails. How many that failed.
   */
  private int drop(String why) {
    connection = null;
    channel = null;
    channelGen++; // no channel has this number: the old channel's late events match none
    channelBroken = false;
    liveConnection = null;
    liveSocket = null;
    blocked = false;
    up = false;
    downReason = why;
    reconnects.lost();
    return confirms.connectionLost(why);
  }

  private void onBlocked(Blocked b) {
    if (b.connectionGen() != connectionGen) {
      return;
    }
    blocked = true;
    blockedReason = b.reason();
    downReason = "the broker is blocking publishers (" + b.reason() + ")";
    up = false;
    log.warn("{}: the broker blocks publishers: {}", description, b.reason());
  }

  private void onUnblocked(Unblocked u) {
    if (u.connectionGen() != connectionGen || !blocked) {
      return;
    }
    blocked = false;
    log.info("{}: the broker takes messages again (was blocked: {})", description, blockedReason);
    setUp();
  }

  /**
   * On stop: a grace for what was sent, then everything still held fails and the connection goes.
   */
  private void finish() {
    stopping = true;
    long graceEnd = ticker.nanos() + Math.min(timeoutNanos, TimeUnit.SECONDS.toNanos(1));
    try {
      while (confirms.hasUnconfirmed() && connection != null && ticker.nanos() - graceEnd < 0) {
        RabbitEvent e = inbox.poll(Math.max(0, graceEnd - ticker.nanos()), TimeUnit.NANOSECONDS);
        if (e instanceof Confirm || e instanceof Returned || e instanceof ConnectionDown) {
          handle(e);
        } else if (e instanceof Publish p) {
          confirms.add(p.pending());
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (RabbitEvent e; (e = inbox.poll()) != null; ) {
      if (e instanceof Publish p) {
        confirms.add(p.pending());
      }
    }
    for (RabbitPending p : confirms.takeAll()) {
      p.future.completeExceptionally(RabbitPublisher.closedFailure(description, p.message));
    }
    Connection c = connection;
    connection = null;
    channel = null;
    up = false;
    if (c != null) {
      if (cutReason.get() == null) {
        try {
          c.abort(1000); // connection.close, waiting at most 1 s for the broker's answer
        } catch (RuntimeException e) {
          log.debug("{}: closing the connection: {}", description, e.toString());
        }
      }
      RabbitPublisher.closeQuietly(liveSocket);
    }
    liveConnection = null;
    liveSocket = null;
  }

  /**
   * The client's handler for errors on its own threads: the connection driver's errors (a socket
   * closed, reset or silent) are what the shutdown listener reports anyway, so they are logged at
   * debug; an error in a listener (they only post events) at warn, without a stack trace.
   */
  private final class QuietExceptionHandler extends ForgivingExceptionHandler {
    @Override
    public void handleUnexpectedConnectionDriverException(Connection conn, Throwable exception) {
      log.debug("{}: connection driver error: {}", description, exception.toString());
    }

    @Override
    protected void log(String message, Throwable e) {
      log.warn("{}: {}: {}", description, message, e.toString());
    }
  }
}
