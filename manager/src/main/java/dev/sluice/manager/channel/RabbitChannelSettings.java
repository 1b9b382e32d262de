package dev.sluice.manager.channel;

import com.rabbitmq.client.ConnectionFactory;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;

/**
 * How a {@link RabbitPublisher} reaches its broker.
 *
 * @param uri {@code amqp://user:pass@host:port/vhost} ({@code amqps://} for TLS, checked against
 *     the JVM's trust store with host name verification). Without a path the virtual host is "/";
 *     "/" itself is written {@code %2F}. The password is never printed.
 * @param publishTimeout how long a message may wait for the broker's confirmation; every publish
 *     future completes within it (plus a small slack). Also bounds connecting, the AMQP handshake
 *     and channel operations. Default 10 s; null means the default.
 * @param connectionName the name the broker shows for the connection (management UI, logs); null or
 *     blank means "sluice"
 */
public record RabbitChannelSettings(String uri, Duration publishTimeout, String connectionName) {

  public static final Duration DEFAULT_PUBLISH_TIMEOUT = Duration.ofSeconds(10);

  /** The shortest publish timeout accepted. */
  public static final Duration MIN_PUBLISH_TIMEOUT = Duration.ofMillis(100);

  public RabbitChannelSettings {
    if (uri == null || uri.isBlank()) {
      throw new IllegalArgumentException("rabbitmq channel: the broker URI is missing");
    }
    uri = uri.strip();
    if (publishTimeout == null) {
      publishTimeout = DEFAULT_PUBLISH_TIMEOUT;
    }
    if (publishTimeout.compareTo(MIN_PUBLISH_TIMEOUT) < 0
        || publishTimeout.toMillis() > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "rabbitmq channel "
              + redact(uri)
              + ": publish timeout "
              + publishTimeout.toMillis()
              + " ms is out of range (at least "
              + MIN_PUBLISH_TIMEOUT.toMillis()
              + " ms)");
    }
    if (connectionName == null || connectionName.isBlank()) {
      connectionName = "sluice";
    }
    // Checks the URI now, not at the first connection.
    applyUri(new ConnectionFactory(), uri);
  }

  /** Settings with the default timeout and connection name "sluice". */
  public static RabbitChannelSettings of(String uri) {
    return new RabbitChannelSettings(uri, null, null);
  }

  public RabbitChannelSettings withPublishTimeout(Duration timeout) {
    return new RabbitChannelSettings(uri, timeout, connectionName);
  }

  /** The URI without user and password: "amqp://127.0.0.1:5672/vhost". */
  public String redactedUri() {
    return redact(uri);
  }

  /** Sets host, port, credentials, virtual host and TLS of the factory from the URI. */
  void applyTo(ConnectionFactory factory) {
    applyUri(factory, uri);
  }

  private static void applyUri(ConnectionFactory factory, String uri) {
    try {
      factory.setUri(uri);
    } catch (URISyntaxException | IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "rabbitmq channel " + redact(uri) + ": not an AMQP URI: " + e.getMessage(), e);
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalArgumentException(
          "rabbitmq channel " + redact(uri) + ": cannot set up TLS: " + e.getMessage(), e);
    }
  }

  private static String redact(String uri) {
    try {
      URI u = new URI(uri);
      if (u.getHost() == null) {
        return "(an unreadable URI)";
      }
      String scheme = u.getScheme() == null ? "amqp" : u.getScheme();
      String port = u.getPort() < 0 ? "" : ":" + u.getPort();
      String path = u.getRawPath() == null || u.getRawPath().isEmpty() ? "/" : u.getRawPath();
      return scheme + "://" + u.getHost() + port + path;
    } catch (URISyntaxException e) {
      return "(an unreadable URI)";
    }
  }

  /** Without the URI's user and password. */
  @Override
  public String toString() {
    return "RabbitChannelSettings[uri="
        + redactedUri()
        + ", publishTimeout="
        + publishTimeout
        + ", connectionName="
        + connectionName
        + "]";
  }
}
