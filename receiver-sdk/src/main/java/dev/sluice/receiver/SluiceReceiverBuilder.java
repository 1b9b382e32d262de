package dev.sluice.receiver;

import io.grpc.ManagedChannel;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/** Builds a {@link SluiceReceiver}; get one with {@link SluiceReceiver#builder()}. */
public final class SluiceReceiverBuilder {
  private List<String> targets;
  private ManagedChannel channel;
  private String queue;
  private String receiverId;
  private int concurrency = 8;
  private Integer maxInFlight;
  private String keyRange = "";
  private EventHandler handler;
  private final List<ReceiverObserver> observers = new java.util.ArrayList<>();
  private Duration reconnectMin = Duration.ofMillis(100);
  private Duration reconnectMax = Duration.ofSeconds(5);
  private java.util.concurrent.ThreadFactory handlerThreads;
  private Duration shutdownTimeout = Duration.ofSeconds(30);
  private boolean autoExtend = true;
  private double autoExtendAt = 0.5;
  private Path tlsCa;
  private Path clientCert;
  private Path clientKey;
  private String token;

  /**
   * Connects over TLS, trusting the CA certificates in {@code caFile} (PEM). Without it the
   * receiver connects in plain text.
   */
  public SluiceReceiverBuilder tls(Path caFile) {
    this.tlsCa = caFile;
    return this;
  }

  /** Presents this client certificate (PEM chain) and key (PEM, PKCS#8): mutual TLS. */
  public SluiceReceiverBuilder clientCertificate(Path certFile, Path keyFile) {
    this.clientCert = certFile;
    this.clientKey = keyFile;
    return this;
  }

  /** Sends {@code Authorization: Bearer <token>} with every call; the token is never logged. */
  public SluiceReceiverBuilder token(String token) {
    this.token = token;
    return this;
  }

  SluiceReceiverBuilder() {}

  /**
   * One manager endpoint, reached over plaintext; the receiver owns the channel. Any gRPC target
   * works: {@code "host:port"}, or {@code "dns:///sluice.example:7470"}. A name that resolves to
   * several addresses still gives <em>one</em> channel and <em>one</em> stream, connected to one of
   * those addresses (gRPC's default pick_first policy; after a failure it may land on another), so
   * the receiver only gets events of the shards that one manager leads. With several managers, give
   * each one with {@link #targets(List)}: that is the reliable way. Replaces earlier targets.
   */
  public SluiceReceiverBuilder target(String target) {
    this.targets = target == null ? null : Collections.singletonList(target);
    return this;
  }

  /**
   * Several manager endpoints, one per manager process of the deployment (each leads some shards).
   * The receiver keeps one Subscribe stream to each, with its own reconnect backoff, and feeds all
   * of them to the same handler threads; acks and nacks go back to the endpoint the event came
   * from. Replaces earlier targets.
   */
  public SluiceReceiverBuilder targets(List<String> targets) {
    this.targets = targets == null ? null : new ArrayList<>(targets);
    return this;
  }

  /**
   * A channel the caller owns, as the one endpoint: the receiver uses it but never shuts it down,
   * nor cuts short its connection backoff (on channels it owns, the receiver's reconnect backoff
   * decides when to retry). It must accept messages of 4 MiB (gRPC's default; the manager sends
   * events in messages up to that size) and should keep alive as the receiver's own channels do: a
   * ping after 10 s, a 5 s timeout.
   */
  public SluiceReceiverBuilder channel(ManagedChannel channel) {
    this.channel = channel;
    return this;
  }

  public SluiceReceiverBuilder queue(String queue) {
    this.queue = queue;
    return this;
  }

  /** Stable identity across reconnects; defaults to hostname-pid-random. */
  public SluiceReceiverBuilder receiverId(String receiverId) {
    this.receiverId = receiverId;
    return this;
  }

  /** Handler threads, i.e. events handled at once. Default 8. */
  public SluiceReceiverBuilder concurrency(int concurrency) {
    this.concurrency = concurrency;
    return this;
  }

  /**
   * Unacked events each stream may hold (its credits). It applies per stream, i.e. per endpoint:
   * with n targets, the receiver may hold up to n &times; maxInFlight events, queued for its {@link
   * #concurrency(int)} handler threads. Default: the concurrency.
   */
  public SluiceReceiverBuilder maxInFlight(int maxInFlight) {
    this.maxInFlight = maxInFlight;
    return this;
  }

  /**
   * Only events of shards overlapping this key range, Vitess style: {@code "-80"}, {@code "80-"},
   * {@code "40-c0"} (bounds are even-length lowercase hex, start below end). Default {@code ""}:
   * every shard; {@code "-"} means the same.
   */
  public SluiceReceiverBuilder keyRange(String keyRange) {
    this.keyRange = keyRange;
    return this;
  }

  public SluiceReceiverBuilder handler(EventHandler handler) {
    this.handler = handler;
    return this;
  }

  /** Bounds of the exponential reconnect backoff. Default 100 ms to 5 s. */
  /**
   * Adds an observer of every handling: {@link MicrometerReceiverMetrics}, {@link
   * OpenTelemetryTracing} or the application's own. Observers start in the order added.
   */
  public SluiceReceiverBuilder observer(ReceiverObserver observer) {
    observers.add(java.util.Objects.requireNonNull(observer, "observer"));
    return this;
  }

  public SluiceReceiverBuilder reconnectBackoff(Duration min, Duration max) {
    this.reconnectMin = min;
    this.reconnectMax = max;
    return this;
  }

  /**
   * Makes the handler threads (still at most {@code concurrency} of them), for instance virtual
   * threads on Java 21 ({@code Thread.ofVirtual().name("handler-", 0).factory()}). Default: the
   * SDK's own named platform threads.
   */
  public SluiceReceiverBuilder handlerThreads(java.util.concurrent.ThreadFactory factory) {
    this.handlerThreads = factory;
    return this;
  }

  /**
   * Whether the receiver extends the deadline of an event while its handler runs (default: true):
   * once a share ({@link #autoExtendAt}) of the queue's ack_wait has passed, it asks for another
   * ack_wait from now, again and again until the handler ends, up to the queue's max_hold. Off, a
   * handler running past ack_wait sees its event delivered again to another receiver while it still
   * works.
   */
  public SluiceReceiverBuilder autoExtend(boolean on) {
    this.autoExtend = on;
    return this;
  }

  /**
   * The share of ack_wait after which automatic extension asks for more: above 0, below 1 (default
   * 0.5). Lower leaves more margin for a slow network or a failover.
   */
  public SluiceReceiverBuilder autoExtendAt(double share) {
    if (!(share > 0 && share < 1)) {
      throw new IllegalArgumentException("autoExtendAt must be above 0 and below 1, was " + share);
    }
    this.autoExtendAt = share;
    return this;
  }

  /** How long close() lets in-flight handlings run before interrupting them. Default 30 s. */
  public SluiceReceiverBuilder shutdownTimeout(Duration shutdownTimeout) {
    this.shutdownTimeout = shutdownTimeout;
    return this;
  }

  /** Validates the settings; throws IllegalArgumentException naming the first bad field. */
  public SluiceReceiver build() {
    if (targets == null && channel == null) {
      throw new IllegalArgumentException("target or channel is required");
    }
    if (targets != null && channel != null) {
      throw new IllegalArgumentException("only one of target and channel may be set");
    }
    if (targets != null) {
      checkTargets();
    }
    if (queue == null || queue.isBlank()) {
      throw new IllegalArgumentException("queue is required");
    }
    if (handler == null) {
      throw new IllegalArgumentException("handler is required");
    }
    if (receiverId != null && receiverId.isBlank()) {
      throw new IllegalArgumentException("receiverId must not be blank");
    }
    if (concurrency < 1) {
      throw new IllegalArgumentException("concurrency must be >= 1, was " + concurrency);
    }
    int window = maxInFlight == null ? concurrency : maxInFlight;
    if (window < 1) {
      throw new IllegalArgumentException("maxInFlight must be >= 1, was " + window);
    }
    String range = KeyRange.check(keyRange);
    if (reconnectMin == null || reconnectMax == null) {
      throw new IllegalArgumentException("reconnectBackoff min and max are required");
    }
    if (reconnectMin.isNegative() || reconnectMin.isZero()) {
      throw new IllegalArgumentException("reconnectBackoff min must be > 0, was " + reconnectMin);
    }
    if (reconnectMax.compareTo(reconnectMin) < 0) {
      throw new IllegalArgumentException(
          "reconnectBackoff max must be >= min, was " + reconnectMax + " < " + reconnectMin);
    }
    if (shutdownTimeout == null || shutdownTimeout.isNegative()) {
      throw new IllegalArgumentException("shutdownTimeout must be >= 0, was " + shutdownTimeout);
    }
    ChannelSecurity security = new ChannelSecurity(tlsCa, clientCert, clientKey, token);
    if (channel != null && !security.equals(ChannelSecurity.PLAINTEXT)) {
      throw new IllegalArgumentException(
          "tls, clientCertificate and token apply to targets; set them on your own channel");
    }
    String id = receiverId == null ? defaultReceiverId() : receiverId;
    return new SluiceReceiver(
        new ReceiverConfig(
            targets == null ? null : List.copyOf(targets),
            channel,
            queue,
            id,
            concurrency,
            window,
            range,
            observers.isEmpty() ? handler : new ObservedHandler(handler, observers),
            reconnectMin,
            reconnectMax,
            shutdownTimeout,
            security,
            handlerThreads,
            List.copyOf(observers),
            autoExtend,
            autoExtendAt));
  }

  private void checkTargets() {
    if (targets.isEmpty()) {
      throw new IllegalArgumentException("targets must not be empty");
    }
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < targets.size(); i++) {
      String t = targets.get(i);
      if (t == null || t.isBlank()) {
        throw new IllegalArgumentException(
            targets.size() == 1 ? "target must not be blank" : "targets[" + i + "] is blank");
      }
      if (!seen.add(t)) {
        // Two streams of one receiver to one manager: a typo, not a way to get more credits.
        throw new IllegalArgumentException("targets lists " + t + " twice");
      }
    }
  }

  static String defaultReceiverId() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (Exception e) {
      host = Objects.requireNonNullElse(System.getenv("HOSTNAME"), "unknown-host");
    }
    long pid = ProcessHandle.current().pid();
    String random = Integer.toHexString(ThreadLocalRandom.current().nextInt(0x100000, 0x1000000));
    return host + "-" + pid + "-" + random;
  }
}
