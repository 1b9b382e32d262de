package dev.sluice.receiver;

import io.grpc.ManagedChannel;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/** Builds a {@link SluiceReceiver}; get one with {@link SluiceReceiver#builder()}. */
public final class SluiceReceiverBuilder {
  private String target;
  private ManagedChannel channel;
  private String queue;
  private String receiverId;
  private int concurrency = 8;
  private Integer maxInFlight;
  private EventHandler handler;
  private Duration reconnectMin = Duration.ofMillis(100);
  private Duration reconnectMax = Duration.ofSeconds(5);
  private Duration shutdownTimeout = Duration.ofSeconds(30);

  SluiceReceiverBuilder() {}

  /** The manager's "host:port", reached over plaintext; the receiver owns the channel. */
  public SluiceReceiverBuilder target(String target) {
    this.target = target;
    return this;
  }

  /** A channel the caller owns: the receiver uses it but never shuts it down. */
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

  /** Unacked events the stream may hold. Default: the concurrency. */
  public SluiceReceiverBuilder maxInFlight(int maxInFlight) {
    this.maxInFlight = maxInFlight;
    return this;
  }

  public SluiceReceiverBuilder handler(EventHandler handler) {
    this.handler = handler;
    return this;
  }

  /** Bounds of the exponential reconnect backoff. Default 100 ms to 5 s. */
  public SluiceReceiverBuilder reconnectBackoff(Duration min, Duration max) {
    this.reconnectMin = min;
    this.reconnectMax = max;
    return this;
  }

  /** How long close() lets in-flight handlings run before interrupting them. Default 30 s. */
  public SluiceReceiverBuilder shutdownTimeout(Duration shutdownTimeout) {
    this.shutdownTimeout = shutdownTimeout;
    return this;
  }

  /** Validates the settings; throws IllegalArgumentException naming the first bad field. */
  public SluiceReceiver build() {
    if (target == null && channel == null) {
      throw new IllegalArgumentException("target or channel is required");
    }
    if (target != null && channel != null) {
      throw new IllegalArgumentException("only one of target and channel may be set");
    }
    if (target != null && target.isBlank()) {
      throw new IllegalArgumentException("target must not be blank");
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
    String id = receiverId == null ? defaultReceiverId() : receiverId;
    return new SluiceReceiver(
        new ReceiverConfig(
            target,
            channel,
            queue,
            id,
            concurrency,
            window,
            handler,
            reconnectMin,
            reconnectMax,
            shutdownTimeout));
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
