package dev.sluice.manager.channel;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.Method;
import com.rabbitmq.client.ShutdownSignalException;
import com.rabbitmq.client.SocketConfigurators;
import com.rabbitmq.client.impl.ForgivingExceptionHandler;
import java.io.IOException;
import java.net.Socket;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
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
 *       backoff (100 ms doubling to 5 s; the client's automatic recovery is off), opens channels,
 *       publishes, and settles confirms, returns and closes. It can block in a socket write while
 *       the broker reads nothing; the timeout thread then cuts the connection.
 *   <li>The client's <b>I/O thread</b> ({@code AMQP Connection <host:port>}, a daemon) reads the
 *       socket and runs the confirm, return, blocked and shutdown listeners, which only post events
 *       to the inbox (tagged with the channel or connection they came from, so that an event of a
 *       channel that is gone is ignored: sequence numbers start again on every channel).
 *   <li>The <b>timeout thread</b> ({@code sluice-rabbit-timeout-<connection name>}) fails, every 50
 *       ms, the futures older than the publish timeout: the bound on every future even if the
 *       broker never answers. When a message that was sent times out, it closes the connection's
 *       socket (a connection that confirms nothing for that long is treated as lost); everything
 *       else unconfirmed on it then fails and the publisher reconnects.
 *   <li>{@link #close} runs on the caller's thread.
 * </ul>
 *
 * Futures complete on the publisher, timeout or closing thread: what depends on them must not
 * block. A future that failed may still have been taken by the broker (a lost confirm, a timeout, a
 * resend after a channel error): the channel headers and message id let consumers drop such a
 * duplicate.
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

  private static final long SWEEP_MS = 50;

  /** How long a nacked message waits for a return that tells it was unroutable. */
  private static final long NACK_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

  private static final long BACKOFF_MIN_MS = 100;
  private static final long BACKOFF_MAX_MS = 5000;

  /** Messages sent per turn of the publisher loop before it looks at its inbox again. */
  private static final int SEND_BATCH = 256;

  private final RabbitChannelSettings settings;
  private final String description;
  private final long timeoutNanos;
  private final String timeoutText;
  private final ConnectionFactory factory;

  /** Appended by callers and the I/O thread; taken by the publisher thread. */
  private final LinkedBlockingQueue<Event> inbox = new LinkedBlockingQueue<>();

  /** Every publish in the order of its deadline; the timeout thread drops the settled ones. */
  private final ConcurrentLinkedQueue<Pending> byDeadline = new ConcurrentLinkedQueue<>();

  private final Thread publisherThread;
  private final ScheduledExecutorService timeoutThread;
  private final AtomicBoolean closed = new AtomicBoolean();

  // Published by the publisher thread for the others.

  /** A connection with an open channel, and the broker not blocking publishers. */
  private volatile boolean up;

  /** A message sent on the current connection timed out (see {@link #connected}). */
  private volatile boolean unanswered;

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

  private final ArrayDeque<Pending> outbox = new ArrayDeque<>();
  private final TreeMap<Long, Pending> unconfirmed = new TreeMap<>();
  private final List<Pending> nacked = new ArrayList<>();
  private int probesUnconfirmed;
  private boolean blocked;
  private String blockedReason;
  private long nextConnectAt;
  private long backoffMs;
  private long downSince;
  private boolean stopping;

  /** One publish and its future. */
  private static final class Pending {
    final OutboundMessage message;
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

    Pending(OutboundMessage message, long deadline) {
      this.message = message;
      this.deadline = deadline;
    }
  }

  private sealed interface Event {}

  private record Publish(Pending pending) implements Event {}

  private record Confirm(long channelGen, long tag, boolean multiple, boolean ack)
      implements Event {}

  private record Returned(
      long channelGen, int code, String text, String exchange, String routingKey, String messageId)
      implements Event {}

  private record ChannelDown(long channelGen, ShutdownSignalException cause) implements Event {}

  private record ConnectionDown(long connectionGen, ShutdownSignalException cause)
      implements Event {}

  private record Blocked(long connectionGen, String reason) implements Event {}

  private record Unblocked(long connectionGen) implements Event {}

  private record Stop() implements Event {}

  public RabbitPublisher(RabbitChannelSettings settings) {
    this.settings = Objects.requireNonNull(settings, "settings");
    this.description = "rabbitmq " + settings.redactedUri();
    long timeoutMs = settings.publishTimeout().toMillis();
    this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    this.timeoutText = timeoutMs % 1000 == 0 ? timeoutMs / 1000 + " s" : timeoutMs + " ms";
    String name = settings.connectionName();

    this.factory = new ConnectionFactory();
    // Before the URI: amqps adds host name verification to this configurator.
    this.factory.setSocketConfigurator(
        socket -> {
          SocketConfigurators.defaultConfigurator().configure(socket);
          lastSocket = socket;
        });
    settings.applyTo(factory);
    int timeout = (int) timeoutMs;
    factory.setAutomaticRecoveryEnabled(false);
    factory.setTopologyRecoveryEnabled(false);
    factory.setConnectionTimeout(timeout);
    factory.setHandshakeTimeout(timeout);
    factory.setChannelRpcTimeout(timeout);
    factory.setRequestedHeartbeat((int) Math.max(1, Math.min(30, timeoutMs / 2000)));
    factory.setExceptionHandler(new QuietExceptionHandler());
    factory.setThreadFactory(
        r -> {
          Thread t = new Thread(r, "sluice-rabbit-io-" + name); // the client renames it
          t.setDaemon(true);
          return t;
        });

    this.publisherThread = new Thread(this::run, "sluice-rabbit-" + name);
    this.publisherThread.setDaemon(true);
    this.timeoutThread =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "sluice-rabbit-timeout-" + name);
              t.setDaemon(true);
              return t;
            });
    this.publisherThread.start();
    this.timeoutThread.scheduleWithFixedDelay(
        this::expire, SWEEP_MS, SWEEP_MS, TimeUnit.MILLISECONDS);
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
    Pending p = new Pending(message, System.nanoTime() + timeoutNanos);
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
    } else if (message.target() == null) {
      p.future.completeExceptionally(
          new PublishFailure(
              description
                  + " refused "
                  + message.describe()
                  + ": no exchange (the channel's target is null; \"\" is the default exchange)",
              false));
    } else {
      inbox.add(new Publish(p));
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
    return !closed.get() && up && !unanswered;
  }

  @Override
  public String describe() {
    return description;
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
    inbox.add(new Stop());
    if (Thread.currentThread() == publisherThread) {
      return; // called from a future's callback: the thread fails the rest as it stops
    }
    long graceMs = Math.min(TimeUnit.NANOSECONDS.toMillis(timeoutNanos), 1000);
    try {
      publisherThread.join(graceMs + 2000);
      if (publisherThread.isAlive()) {
        // Stuck in a socket write to a broker that reads nothing.
        closeQuietly(liveSocket);
        publisherThread.join(2000);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    failTheRest();
    log.info("{}: publisher closed", description);
  }

  /** After close: stops the timeout thread and fails whatever is still listed. Any thread. */
  private void failTheRest() {
    timeoutThread.shutdownNow();
    for (Pending p; (p = byDeadline.poll()) != null; ) {
      p.future.completeExceptionally(closedFailure(p.message));
    }
    up = false;
  }

  // ---------------------------------------------------------------- publisher thread

  private void run() {
    nextConnectAt = System.nanoTime();
    downSince = nextConnectAt;
    try {
      while (!stopping) {
        Event e = inbox.poll(waitNanos(), TimeUnit.NANOSECONDS);
        if (e != null) {
          handle(e);
          // Drain what else arrived before sending more, so that a close or a confirm is seen
          // before the next batch.
          for (Event more; !stopping && (more = inbox.poll()) != null; ) {
            handle(more);
          }
        }
        if (stopping) {
          break;
        }
        expireNackGrace();
        if (connection == null && System.nanoTime() - nextConnectAt >= 0) {
          connect();
        }
        if (connection != null && channel == null && !channelBroken) {
          openChannel();
        }
        send();
      }
      finish();
      if (closed.get()) {
        failTheRest(); // close() may have been called on this thread and not waited
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      finish();
    } catch (RuntimeException | Error e) {
      log.error("{}: publisher thread failed; failing what it held", description, e);
      finish();
      throw e;
    }
  }

  private long waitNanos() {
    long now = System.nanoTime();
    long wait = TimeUnit.SECONDS.toNanos(1);
    if (connection == null) {
      wait = Math.min(wait, Math.max(0, nextConnectAt - now));
    } else if (channel == null && !channelBroken) {
      return 0;
    } else if (canSend()) {
      return 0;
    }
    for (Pending p : nacked) {
      wait = Math.min(wait, Math.max(0, p.nackedAt + NACK_GRACE_NANOS - now));
    }
    return wait;
  }

  private void handle(Event e) {
    if (e instanceof Publish p) {
      outbox.addLast(p.pending());
    } else if (e instanceof Confirm c) {
      onConfirm(c);
    } else if (e instanceof Returned r) {
      onReturn(r);
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
      if (up || backoffMs == 0) {
        log.warn("{}: cannot connect: {}; retrying with backoff", description, why);
      } else {
        log.debug("{}: cannot connect: {}", description, why);
      }
      downReason = "cannot connect: " + why;
      backoffMs = backoffMs == 0 ? BACKOFF_MIN_MS : Math.min(BACKOFF_MAX_MS, backoffMs * 2);
      nextConnectAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backoffMs);
      return;
    }
    long gen = ++connectionGen;
    connection = c;
    cutReason.set(null);
    liveSocket = lastSocket;
    liveConnection = c;
    unanswered = false;
    blocked = false;
    c.addShutdownListener(cause -> inbox.add(new ConnectionDown(gen, cause)));
    c.addBlockedListener(
        reason -> inbox.add(new Blocked(gen, reason)), () -> inbox.add(new Unblocked(gen)));
    long downMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - downSince);
    if (connectionGen == 1) {
      log.info("{}: connected", description);
    } else {
      log.info("{}: connected again after {} ms", description, downMs);
    }
    backoffMs = 0;
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
    if (channel == null || channelBroken || blocked || probesUnconfirmed > 0) {
      return false;
    }
    Pending next = outbox.peekFirst();
    return next != null && (!next.probe || unconfirmed.isEmpty());
  }

  private void send() {
    for (int n = 0; n < SEND_BATCH && canSend(); n++) {
      Pending p = outbox.pollFirst();
      if (p.future.isDone()) {
        continue; // timed out while waiting
      }
      OutboundMessage m = p.message;
      Map<String, Object> headers = m.headers() == null ? null : new HashMap<>(m.headers());
      AMQP.BasicProperties props =
          new AMQP.BasicProperties.Builder()
              .deliveryMode(2)
              .messageId(m.messageId())
              .headers(headers)
              .build();
      byte[] body = m.body() == null ? new byte[0] : m.body();
      long seq = channel.getNextPublishSeqNo();
      // Handed over before the write, which may block: its timeout then cuts the connection.
      p.sentOn = connection;
      try {
        channel.basicPublish(m.target(), routingKey(m), true, props, body);
      } catch (IOException | RuntimeException e) {
        // The channel or connection closed under us: its shutdown event says why. The message
        // goes first again.
        p.sentOn = null;
        outbox.addFirst(p);
        channelBroken = true;
        if (!(e instanceof ShutdownSignalException)) {
          cut(connection, "a publish failed: " + reason(e));
        }
        return;
      }
      p.seq = seq;
      unconfirmed.put(seq, p);
      if (p.probe) {
        probesUnconfirmed++;
      }
    }
  }

  private Pending removeUnconfirmed(long seq) {
    Pending p = unconfirmed.remove(seq);
    if (p != null && p.probe) {
      probesUnconfirmed--;
    }
    return p;
  }

  private void onConfirm(Confirm c) {
    if (c.channelGen() != channelGen) {
      return; // of a channel that is gone: its messages were settled when it went
    }
    unanswered = false;
    List<Pending> settled = new ArrayList<>();
    if (c.multiple()) {
      NavigableMap<Long, Pending> head = unconfirmed.headMap(c.tag(), true);
      for (Long seq : List.copyOf(head.keySet())) {
        settled.add(removeUnconfirmed(seq));
      }
    } else {
      Pending p = removeUnconfirmed(c.tag());
      if (p != null) {
        settled.add(p);
      }
    }
    long now = System.nanoTime();
    for (Pending p : settled) {
      if (p.returnReason != null) {
        fail(p, p.returnReason, false);
      } else if (c.ack()) {
        p.future.complete(null);
      } else {
        // Qpid sends the nack of an unroutable message before its return: wait a moment for it.
        p.nackedAt = now;
        nacked.add(p);
      }
    }
  }

  private void onReturn(Returned r) {
    if (r.channelGen() != channelGen) {
      return;
    }
    // 506: a queue it routes to is full and rejects publishes (Qpid returns such a message).
    boolean full = r.code() == AMQP.RESOURCE_ERROR;
    String reason =
        (full ? "rabbitmq returned message " : "rabbitmq could not route message ")
            + r.messageId()
            + " to exchange '"
            + r.exchange()
            + "' with routing key '"
            + r.routingKey()
            + "': "
            + replyText(r.code(), r.text());
    for (Iterator<Pending> it = nacked.iterator(); it.hasNext(); ) {
      Pending p = it.next();
      if (matches(p, r)) {
        it.remove();
        fail(p, reason, false);
        return;
      }
    }
    for (Pending p : unconfirmed.values()) {
      if (p.returnReason == null && matches(p, r)) {
        p.returnReason = reason; // failed when its confirm comes
        return;
      }
    }
    log.debug("{}: a return matched no unconfirmed message: {}", description, reason);
  }

  private static boolean matches(Pending p, Returned r) {
    return Objects.equals(p.message.target(), r.exchange())
        && Objects.equals(routingKey(p.message), r.routingKey())
        && Objects.equals(p.message.messageId(), r.messageId());
  }

  private void expireNackGrace() {
    if (nacked.isEmpty()) {
      return;
    }
    long now = System.nanoTime();
    for (Iterator<Pending> it = nacked.iterator(); it.hasNext(); ) {
      Pending p = it.next();
      if (now - p.nackedAt >= NACK_GRACE_NANOS) {
        it.remove();
        failNacked(p);
      }
    }
  }

  /**
   * A nack: a queue the message routes to is full and rejects publishes, or could not store it.
   * That destination's fault, not the broker's: the broker confirms other messages meanwhile.
   */
  private void failNacked(Pending p) {
    fail(
        p,
        description
            + " refused "
            + p.message.describe()
            + " (nack): a queue it routes to is full and rejects publishes (x-overflow"
            + " reject-publish), or could not store it",
        false);
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
    String why = brokerReason(cause);
    List<Pending> suspects = new ArrayList<>();
    for (Pending p : unconfirmed.values()) {
      if (!p.future.isDone()) {
        suspects.add(p);
      }
    }
    unconfirmed.clear();
    probesUnconfirmed = 0;
    if (suspects.size() == 1) {
      Pending p = suspects.get(0);
      log.warn(
          "{}: the broker closed the channel on {}: {}; opening a new one",
          description,
          p.message.describe(),
          why);
      fail(p, description + " refused " + p.message.describe() + ": " + why, false);
      return;
    }
    log.warn(
        "{}: the broker closed the channel: {}; opening a new one{}",
        description,
        why,
        suspects.isEmpty()
            ? ""
            : " and sending the "
                + suspects.size()
                + " unconfirmed messages again, one at a time, to find the one it refuses");
    for (int i = suspects.size() - 1; i >= 0; i--) {
      Pending p = suspects.get(i);
      p.probe = true;
      p.sentOn = null;
      p.returnReason = null;
      outbox.addFirst(p);
    }
  }

  private void onConnectionDown(ConnectionDown d) {
    if (d.connectionGen() != connectionGen || connection == null) {
      return;
    }
    String cut = cutReason.get();
    String why = cut != null ? cut : shutdownReason(d.cause());
    connection = null;
    channel = null;
    channelBroken = false;
    liveConnection = null;
    liveSocket = null;
    blocked = false;
    up = false;
    downReason = why;
    downSince = System.nanoTime();
    int failed = 0;
    for (Pending p : unconfirmed.values()) {
      if (fail(
          p,
          description
              + ": connection lost before the broker confirmed "
              + p.message.describe()
              + ": "
              + why,
          true)) {
        failed++;
      }
    }
    unconfirmed.clear();
    probesUnconfirmed = 0;
    for (Pending p : nacked) {
      failNacked(p);
    }
    nacked.clear();
    if (!stopping) {
      log.warn(
          "{}: connection lost: {}; {} unconfirmed messages failed; reconnecting",
          description,
          why,
          failed);
    }
    backoffMs = BACKOFF_MIN_MS;
    nextConnectAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backoffMs);
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
    long graceEnd = System.nanoTime() + Math.min(timeoutNanos, TimeUnit.SECONDS.toNanos(1));
    try {
      while (!unconfirmed.isEmpty() && connection != null && System.nanoTime() - graceEnd < 0) {
        Event e = inbox.poll(Math.max(0, graceEnd - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (e instanceof Confirm || e instanceof Returned || e instanceof ConnectionDown) {
          handle(e);
        } else if (e instanceof Publish p) {
          outbox.addLast(p.pending());
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (Event e; (e = inbox.poll()) != null; ) {
      if (e instanceof Publish p) {
        outbox.addLast(p.pending());
      }
    }
    List<Pending> left = new ArrayList<>(unconfirmed.values());
    left.addAll(nacked);
    left.addAll(outbox);
    unconfirmed.clear();
    nacked.clear();
    outbox.clear();
    for (Pending p : left) {
      p.future.completeExceptionally(closedFailure(p.message));
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
      closeQuietly(liveSocket);
    }
    liveConnection = null;
    liveSocket = null;
  }

  // ---------------------------------------------------------------- timeout thread

  private void expire() {
    try {
      long now = System.nanoTime();
      for (Pending p; (p = byDeadline.peek()) != null; ) {
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
            p.future.completeExceptionally(
                new PublishFailure(
                    description
                        + ": "
                        + p.message.describe()
                        + " was not confirmed within "
                        + timeoutText
                        + why,
                    true));
        if (failed && sentOn != null) {
          unanswered = true;
          cut(sentOn, "no confirm within " + timeoutText + "; the publisher closed the connection");
        }
      }
    } catch (RuntimeException e) {
      log.error("{}: timeout sweep failed", description, e);
    }
  }

  private String heldReason() {
    if (closed.get()) {
      return " (the publisher is closing)";
    }
    String down = downReason;
    return down == null ? " (still waiting to be sent)" : " (not sent: " + down + ")";
  }

  /**
   * Closes the socket of the connection if it is still the current one, once: the client's I/O
   * thread then reports the connection lost. Any thread.
   */
  private void cut(Connection c, String why) {
    if (c == null || c != liveConnection || !cutReason.compareAndSet(null, why)) {
      return;
    }
    log.warn("{}: {}", description, why);
    closeQuietly(liveSocket);
  }

  // ---------------------------------------------------------------- helpers

  private boolean fail(Pending p, String reason, boolean brokerDown) {
    boolean done = p.future.completeExceptionally(new PublishFailure(reason, brokerDown));
    if (done) {
      log.debug("{}: {} failed: {}", description, p.message.messageId(), reason);
    }
    return done;
  }

  private PublishFailure closedFailure(OutboundMessage m) {
    return new PublishFailure(
        description + ": the publisher was closed before the broker confirmed " + m.describe(),
        true);
  }

  private static String routingKey(OutboundMessage m) {
    return m.routingKey() == null ? "" : m.routingKey();
  }

  private static void closeQuietly(Socket s) {
    if (s != null) {
      try {
        s.close();
      } catch (IOException e) {
        // closing anyway
      }
    }
  }

  /** "channel closed by the broker: 404 NOT_FOUND - no exchange 'x' in vhost '/'". */
  private static String brokerReason(ShutdownSignalException s) {
    Method m = s.getReason();
    if (m instanceof AMQP.Channel.Close c) {
      return "channel closed by the broker: " + replyText(c.getReplyCode(), c.getReplyText());
    }
    return shutdownReason(s);
  }

  private static String shutdownReason(ShutdownSignalException s) {
    Method m = s.getReason();
    if (m instanceof AMQP.Connection.Close c) {
      return (s.isInitiatedByApplication() ? "closed by the publisher: " : "closed by the broker: ")
          + replyText(c.getReplyCode(), c.getReplyText());
    }
    if (m instanceof AMQP.Channel.Close c) {
      return "channel closed: " + replyText(c.getReplyCode(), c.getReplyText());
    }
    Throwable cause = s.getCause();
    return cause != null ? reason(cause) : String.valueOf(s.getMessage());
  }

  /** The reply code's name, then the broker's text when it says more: "NO_ROUTE". */
  static String replyText(int code, String text) {
    String name = codeName(code);
    if (text == null || text.isBlank() || text.equals(name)) {
      return name + " (" + code + ")";
    }
    return text.startsWith(name) ? code + " " + text : code + " " + name + " - " + text;
  }

  private static String codeName(int code) {
    return switch (code) {
      case 311 -> "CONTENT_TOO_LARGE";
      case 312 -> "NO_ROUTE";
      case 313 -> "NO_CONSUMERS";
      case 320 -> "CONNECTION_FORCED";
      case 402 -> "INVALID_PATH";
      case 403 -> "ACCESS_REFUSED";
      case 404 -> "NOT_FOUND";
      case 405 -> "RESOURCE_LOCKED";
      case 406 -> "PRECONDITION_FAILED";
      case 501 -> "FRAME_ERROR";
      case 502 -> "SYNTAX_ERROR";
      case 503 -> "COMMAND_INVALID";
      case 504 -> "CHANNEL_ERROR";
      case 505 -> "UNEXPECTED_FRAME";
      case 506 -> "RESOURCE_ERROR";
      case 530 -> "NOT_ALLOWED";
      case 540 -> "NOT_IMPLEMENTED";
      case 541 -> "INTERNAL_ERROR";
      default -> "reply code";
    };
  }

  private static String reason(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t && t.getMessage() == null) {
      t = t.getCause();
    }
    if (t instanceof ShutdownSignalException s) {
      return shutdownReason(s);
    }
    String msg = t.getMessage();
    return msg == null ? t.getClass().getSimpleName() : t.getClass().getSimpleName() + ": " + msg;
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
