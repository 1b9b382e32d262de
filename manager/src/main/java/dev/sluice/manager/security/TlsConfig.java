package dev.sluice.manager.security;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * TLS for both servers (gRPC and HTTP): the server's certificate chain and key as PEM files, and
 * optionally a CA whose client certificates are accepted (mutual TLS). The files are read again
 * every {@code reloadInterval} when they changed, so certificates can rotate without a restart.
 *
 * @param cert PEM certificate chain, the server's certificate first
 * @param key PEM private key (PKCS#8)
 * @param clientCa PEM CA certificates for client certificates; null = no mutual TLS
 * @param requireClientCert whether a client must present a certificate (else it may use a token)
 * @param reloadInterval how often the files are checked for changes
 */
public record TlsConfig(
    Path cert, Path key, Path clientCa, boolean requireClientCert, Duration reloadInterval) {
  public static final Duration DEFAULT_RELOAD_INTERVAL = Duration.ofSeconds(10);

  public TlsConfig {
    if (cert == null) {
      throw new IllegalArgumentException("tls.cert: the server certificate file is required");
    }
    if (key == null) {
      throw new IllegalArgumentException("tls.key: the server key file is required");
    }
    if (requireClientCert && clientCa == null) {
      throw new IllegalArgumentException("tls.client_auth: require needs tls.client_ca");
    }
    if (reloadInterval == null || reloadInterval.toMillis() < 100) {
      throw new IllegalArgumentException(
          "tls.reload_interval must be at least 100ms, was " + reloadInterval);
    }
    for (var e :
        new Object[][] {{"tls.cert", cert}, {"tls.key", key}, {"tls.client_ca", clientCa}}) {
      Path p = (Path) e[1];
      if (p != null && !Files.isReadable(p)) {
        throw new IllegalArgumentException(e[0] + ": cannot read " + p);
      }
    }
  }

  public boolean mutual() {
    return clientCa != null;
  }
}
