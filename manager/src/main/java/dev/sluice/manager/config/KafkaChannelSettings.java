package dev.sluice.manager.config;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * How a Kafka channel's publisher ({@code channel.KafkaPublisher}) reaches its cluster.
 *
 * @param bootstrapServers "host:port[,host:port...]"
 * @param publishTimeout how long a message may wait for the broker's confirmation; every publish
 *     future completes within it (plus a small slack). Also Kafka's {@code delivery.timeout.ms} and
 *     {@code max.block.ms}. Default 10 s; null means the default.
 * @param producerProperties extra Kafka producer settings (security, compression, batch size,
 *     {@code linger.ms}, {@code request.timeout.ms}...). The settings that make a publish durable
 *     and bounded are Sluice's own and may not be given here: see {@link #RESERVED}. Their values
 *     may be secrets and are never printed.
 * @param clientId the producer's {@code client.id} (broker logs, quotas); null or blank means
 *     "sluice"
 */
public record KafkaChannelSettings(
    String bootstrapServers,
    Duration publishTimeout,
    Map<String, String> producerProperties,
    String clientId) {

  public static final Duration DEFAULT_PUBLISH_TIMEOUT = Duration.ofSeconds(10);

  /** The shortest publish timeout accepted. */
  public static final Duration MIN_PUBLISH_TIMEOUT = Duration.ofMillis(100);

  /** The producer's linger unless {@code linger.ms} is given: small batches, little delay. */
  public static final long DEFAULT_LINGER_MS = 5;

  /** Producer settings Sluice sets itself. */
  public static final Set<String> RESERVED =
      Set.of(
          "bootstrap.servers",
          "client.id",
          "key.serializer",
          "value.serializer",
          "acks",
          "enable.idempotence",
          "delivery.timeout.ms",
          "max.block.ms",
          "transactional.id");

  public KafkaChannelSettings {
    if (bootstrapServers == null || bootstrapServers.isBlank()) {
      throw new IllegalArgumentException("kafka channel: bootstrap servers are missing");
    }
    bootstrapServers = bootstrapServers.strip();
    if (publishTimeout == null) {
      publishTimeout = DEFAULT_PUBLISH_TIMEOUT;
    }
    if (publishTimeout.compareTo(MIN_PUBLISH_TIMEOUT) < 0
        || publishTimeout.toMillis() > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "kafka channel "
              + bootstrapServers
              + ": publish timeout "
              + publishTimeout.toMillis()
              + " ms is out of range (at least "
              + MIN_PUBLISH_TIMEOUT.toMillis()
              + " ms)");
    }
    producerProperties = producerProperties == null ? Map.of() : Map.copyOf(producerProperties);
    Set<String> reserved = new TreeSet<>(producerProperties.keySet());
    reserved.retainAll(RESERVED);
    if (!reserved.isEmpty()) {
      throw new IllegalArgumentException(
          "kafka channel "
              + bootstrapServers
              + ": producer properties "
              + reserved
              + " are set by Sluice (bootstrap servers, client id and publish timeout have their"
              + " own settings; acks=all and idempotence are always on)");
    }
    if (clientId == null || clientId.isBlank()) {
      clientId = "sluice";
    }
    // Validates linger.ms and request.timeout.ms against Kafka's rule now, not at first use.
    producerConfig(bootstrapServers, publishTimeout, producerProperties, clientId);
  }

  /** Settings with the default timeout, no extra properties and client id "sluice". */
  public static KafkaChannelSettings of(String bootstrapServers) {
    return new KafkaChannelSettings(bootstrapServers, null, null, null);
  }

  public KafkaChannelSettings withPublishTimeout(Duration timeout) {
    return new KafkaChannelSettings(bootstrapServers, timeout, producerProperties, clientId);
  }

  public KafkaChannelSettings withClientId(String id) {
    return new KafkaChannelSettings(bootstrapServers, publishTimeout, producerProperties, id);
  }

  /**
   * The producer configuration: the extra properties, then Sluice's own settings. {@code
   * delivery.timeout.ms} is the publish timeout, which Kafka requires to be at least {@code
   * linger.ms + request.timeout.ms}; unless given, the request timeout is what the linger leaves.
   */
  public Map<String, Object> producerConfig() {
    return producerConfig(bootstrapServers, publishTimeout, producerProperties, clientId);
  }

  private static Map<String, Object> producerConfig(
      String servers, Duration timeout, Map<String, String> extra, String clientId) {
    long timeoutMs = timeout.toMillis();
    long lingerMs = longProperty(servers, extra, "linger.ms", DEFAULT_LINGER_MS);
    long requestTimeoutMs =
        longProperty(servers, extra, "request.timeout.ms", timeoutMs - lingerMs);
    if (lingerMs < 0 || requestTimeoutMs <= 0 || lingerMs + requestTimeoutMs > timeoutMs) {
      throw new IllegalArgumentException(
          "kafka channel "
              + servers
              + ": linger.ms ("
              + lingerMs
              + ") + request.timeout.ms ("
              + requestTimeoutMs
              + ") must not exceed the publish timeout ("
              + timeoutMs
              + " ms, Kafka's delivery.timeout.ms)");
    }
    Map<String, Object> config = new HashMap<>(extra);
    config.put("bootstrap.servers", servers);
    config.put("client.id", clientId);
    config.put("acks", "all");
    config.put("enable.idempotence", "true");
    config.put("key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
    config.put("value.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
    config.put("linger.ms", Long.toString(lingerMs));
    config.put("request.timeout.ms", Long.toString(requestTimeoutMs));
    config.put("delivery.timeout.ms", Long.toString(timeoutMs));
    config.put("max.block.ms", Long.toString(timeoutMs));
    return config;
  }

  private static long longProperty(
      String servers, Map<String, String> extra, String key, long otherwise) {
    String value = extra.get(key);
    if (value == null) {
      return otherwise;
    }
    try {
      return Long.parseLong(value.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "kafka channel " + servers + ": " + key + " '" + value + "' is not a number");
    }
  }

  /** Without the producer properties' values, which may be secrets. */
  @Override
  public String toString() {
    return "KafkaChannelSettings[bootstrapServers="
        + bootstrapServers
        + ", publishTimeout="
        + publishTimeout
        + ", producerProperties="
        + new TreeSet<>(producerProperties.keySet())
        + ", clientId="
        + clientId
        + "]";
  }
}
