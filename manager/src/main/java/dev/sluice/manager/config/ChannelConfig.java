package dev.sluice.manager.config;

import dev.sluice.db.QueueOptions;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * One broker connection of the manager's configuration ({@code channels[]} in sluice.yaml), which
 * queues are bound to by name ({@code channel=} in a table comment, or the configuration's {@code
 * queues} section). Validated when built; every error starts with {@code channels[<name>]} and
 * names the setting.
 *
 * @param name what queues refer to: 1-64 letters, digits, '.', '_' or '-'
 * @param bootstrapServers Kafka only: "host:port[,host:port...]"
 * @param properties Kafka only: extra producer properties (never printed: they may hold secrets);
 *     the settings Sluice makes itself are refused ({@link KafkaChannelSettings#RESERVED})
 * @param uri RabbitMQ only: {@code amqp://user:password@host:port/vhost} or {@code amqps://...};
 *     printed only by {@link #maskedUri()}
 * @param publishTimeout how long a publish may wait for the broker's confirmation
 * @param maxInFlight the channel's credits: publishes unconfirmed at once, per queue and shard
 * @param allowedTargets what a row's target column ({@code channel_target_column}) may name: Kafka
 *     topics, or RabbitMQ routing keys; empty means a queue of this channel cannot take its target
 *     from a column
 */
public record ChannelConfig(
    String name,
    Kind kind,
    String bootstrapServers,
    Map<String, String> properties,
    String uri,
    Duration publishTimeout,
    int maxInFlight,
    List<String> allowedTargets) {

  public static final Duration DEFAULT_PUBLISH_TIMEOUT =
      KafkaChannelSettings.DEFAULT_PUBLISH_TIMEOUT;
  public static final Duration MIN_PUBLISH_TIMEOUT = KafkaChannelSettings.MIN_PUBLISH_TIMEOUT;
  public static final Duration MAX_PUBLISH_TIMEOUT = Duration.ofHours(1);
  public static final int DEFAULT_MAX_IN_FLIGHT = 1000;
  public static final int MAX_MAX_IN_FLIGHT = QueueOptions.MAX_RATE;

  /** A Kafka topic name, as the broker accepts it. */
  public static final Pattern KAFKA_TOPIC = Pattern.compile("[A-Za-z0-9._-]{1,249}");

  /** The longest RabbitMQ routing key, in UTF-8 bytes. */
  public static final int MAX_ROUTING_KEY_BYTES = 255;

  /** The brokers a channel can publish to. */
  public enum Kind {
    KAFKA("kafka"),
    RABBITMQ("rabbitmq");

    private final String word;

    Kind(String word) {
      this.word = word;
    }

    /** As sluice.yaml writes it. */
    public String word() {
      return word;
    }

    /** The kind {@code word} names (any case), or null. */
    public static Kind of(String word) {
      for (Kind k : values()) {
        if (k.word.equalsIgnoreCase(word == null ? "" : word.strip())) {
          return k;
        }
      }
      return null;
    }

    @Override
    public String toString() {
      return word;
    }
  }

  public ChannelConfig {
    if (name == null || !QueueOptions.CHANNEL_NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "channels[]: name must be 1-64 letters, digits, '.', '_' or '-' (not starting with"
              + " '.', '_' or '-'), was '"
              + name
              + "'");
    }
    String where = "channels[" + name + "]: ";
    if (kind == null) {
      throw new IllegalArgumentException(where + "kind must be kafka or rabbitmq");
    }
    properties = properties == null ? Map.of() : Map.copyOf(properties);
    allowedTargets = allowedTargets == null ? List.of() : List.copyOf(allowedTargets);
    if (publishTimeout == null) {
      publishTimeout = DEFAULT_PUBLISH_TIMEOUT;
    }
    if (publishTimeout.compareTo(MIN_PUBLISH_TIMEOUT) < 0
        || publishTimeout.compareTo(MAX_PUBLISH_TIMEOUT) > 0) {
      throw new IllegalArgumentException(
          where
              + "publish_timeout must be from "
              + MIN_PUBLISH_TIMEOUT.toMillis()
              + "ms to 1h, was "
              + dev.sluice.db.Durations.format(publishTimeout));
    }
    if (maxInFlight < 1 || maxInFlight > MAX_MAX_IN_FLIGHT) {
      throw new IllegalArgumentException(
          where + "max_in_flight must be from 1 to " + MAX_MAX_IN_FLIGHT + ", was " + maxInFlight);
    }
    switch (kind) {
      case KAFKA -> {
        if (uri != null) {
          throw new IllegalArgumentException(
              where + "uri is for rabbitmq channels; a kafka channel has bootstrap_servers");
        }
        if (bootstrapServers == null || bootstrapServers.isBlank()) {
          throw new IllegalArgumentException(
              where + "bootstrap_servers is required for a kafka channel (host:port,...)");
        }
        bootstrapServers = bootstrapServers.strip();
        try {
          kafkaSettings(name, bootstrapServers, publishTimeout, properties);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(where + e.getMessage(), e);
        }
      }
      case RABBITMQ -> {
        if (bootstrapServers != null) {
          throw new IllegalArgumentException(
              where + "bootstrap_servers is for kafka channels; a rabbitmq channel has a uri");
        }
        if (!properties.isEmpty()) {
          throw new IllegalArgumentException(where + "properties are for kafka channels");
        }
        if (uri == null || uri.isBlank()) {
          throw new IllegalArgumentException(
              where + "uri is required for a rabbitmq channel (amqp://user:password@host:5672/)");
        }
        uri = uri.strip();
        checkAmqpUri(where, uri);
      }
    }
    Set<String> seen = new HashSet<>();
    for (String t : allowedTargets) {
      if (t == null || t.isEmpty()) {
        throw new IllegalArgumentException(where + "allowed_targets holds an empty name");
      }
      if (!seen.add(t)) {
        throw new IllegalArgumentException(where + "allowed_targets names '" + t + "' twice");
      }
      if (kind == Kind.KAFKA
          && (!KAFKA_TOPIC.matcher(t).matches() || t.equals(".") || t.equals(".."))) {
        throw new IllegalArgumentException(
            where
                + "allowed_targets: '"
                + t
                + "' is not a Kafka topic name (1-249 letters, digits, '.', '_' or '-')");
      }
      if (kind == Kind.RABBITMQ
          && t.getBytes(StandardCharsets.UTF_8).length > MAX_ROUTING_KEY_BYTES) {
        throw new IllegalArgumentException(
            where
                + "allowed_targets: '"
                + t
                + "' is longer than a RabbitMQ routing key may be ("
                + MAX_ROUTING_KEY_BYTES
                + " bytes)");
      }
    }
  }

  /** A channel with the defaults for what is not given. */
  public static ChannelConfig kafka(String name, String bootstrapServers) {
    return new ChannelConfig(
        name, Kind.KAFKA, bootstrapServers, null, null, null, DEFAULT_MAX_IN_FLIGHT, null);
  }

  /** A channel with the defaults for what is not given. */
  public static ChannelConfig rabbitmq(String name, String uri) {
    return new ChannelConfig(
        name, Kind.RABBITMQ, null, null, uri, null, DEFAULT_MAX_IN_FLIGHT, null);
  }

  public ChannelConfig withAllowedTargets(List<String> targets) {
    return new ChannelConfig(
        name, kind, bootstrapServers, properties, uri, publishTimeout, maxInFlight, targets);
  }

  /** Whether a row's target column may name {@code target}. */
  public boolean allows(String target) {
    return allowedTargets.contains(target);
  }

  /** The Kafka publisher's settings (client id {@code sluice-<name>}); Kafka channels only. */
  public KafkaChannelSettings kafkaSettings() {
    if (kind != Kind.KAFKA) {
      throw new IllegalStateException("channel " + name + " is a " + kind + " channel");
    }
    return kafkaSettings(name, bootstrapServers, publishTimeout, properties);
  }

  private static KafkaChannelSettings kafkaSettings(
      String name, String servers, Duration timeout, Map<String, String> properties) {
    return new KafkaChannelSettings(servers, timeout, properties, "sluice-" + name);
  }

  /** The URI with its password replaced by {@code ****}; null for a Kafka channel. */
  public String maskedUri() {
    return uri == null ? null : mask(uri);
  }

  /** "kafka channel events-kafka (127.0.0.1:9092)": for logs and errors, no secrets. */
  public String describe() {
    return kind
        + " channel "
        + name
        + " ("
        + (kind == Kind.KAFKA ? bootstrapServers : maskedUri())
        + ")";
  }

  /**
   * {@code scheme://user:password@host...} with the password as {@code ****}. A text with no '@'
   * holds no user information and comes back as is; one with an '@' but no {@code ://} before it is
   * not shown at all.
   */
  static String mask(String uri) {
    int scheme = uri.indexOf("://");
    int at = uri.lastIndexOf('@');
    if (at < 0) {
      return uri;
    }
    if (scheme < 0 || at < scheme) {
      return "****";
    }
    String userInfo = uri.substring(scheme + 3, at);
    int colon = userInfo.indexOf(':');
    if (colon < 0) {
      return uri; // a user without a password
    }
    return uri.substring(0, scheme + 3)
        + userInfo.substring(0, colon)
        + ":****"
        + uri.substring(at);
  }

  private static void checkAmqpUri(String where, String uri) {
    String shown = mask(uri);
    URI u;
    try {
      u = new URI(uri);
    } catch (URISyntaxException e) {
      // Not e's message: it quotes the whole URI, password and all.
      throw new IllegalArgumentException(
          where + "uri '" + shown + "' is not a valid URI (amqp://user:password@host:5672/vhost)");
    }
    String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("amqp") && !scheme.equals("amqps")) {
      throw new IllegalArgumentException(
          where + "uri '" + shown + "' must start with amqp:// or amqps://");
    }
    if (u.getHost() == null || u.getHost().isEmpty()) {
      throw new IllegalArgumentException(
          where
              + "uri '"
              + shown
              + "' names no host (an '@', ':' or '/' in the user or password is written %40,"
              + " %3A or %2F)");
    }
  }

  /** Without secrets: the URI's password and the properties' values are not shown. */
  @Override
  public String toString() {
    List<String> shown = new ArrayList<>();
    shown.add("name=" + name);
    shown.add("kind=" + kind);
    if (kind == Kind.KAFKA) {
      shown.add("bootstrapServers=" + bootstrapServers);
      shown.add("properties=" + new TreeSet<>(properties.keySet()));
    } else {
      shown.add("uri=" + maskedUri());
    }
    shown.add("publishTimeout=" + publishTimeout);
    shown.add("maxInFlight=" + maxInFlight);
    shown.add("allowedTargets=" + allowedTargets);
    return "ChannelConfig[" + String.join(", ", shown) + "]";
  }
}
