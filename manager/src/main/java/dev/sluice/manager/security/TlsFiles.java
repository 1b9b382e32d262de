package dev.sluice.manager.security;

import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.AdvancedTlsX509TrustManager;
import java.io.Closeable;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;

/**
 * The server's certificate, key and client CA, read from PEM files and read again when they change
 * (grpc-java's AdvancedTls managers check every {@code reload_interval}, on one daemon thread
 * {@code sluice-tls-reload}). Both servers share the same managers, so a rotated certificate is
 * served by gRPC and HTTP alike from the next handshake on. A file that turns unreadable or invalid
 * keeps the last good credentials (and grpc-java logs why).
 */
public final class TlsFiles implements Closeable {
  private final TlsConfig config;
  private final AdvancedTlsX509KeyManager keys = new AdvancedTlsX509KeyManager();
  private final AdvancedTlsX509TrustManager trust;
  private final ScheduledExecutorService reloader;
  private final List<Closeable> watches = new ArrayList<>();

  public TlsFiles(TlsConfig config) {
    this.config = config;
    this.reloader =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "sluice-tls-reload");
              t.setDaemon(true);
              return t;
            });
    long every = config.reloadInterval().toMillis();
    try {
      watches.add(
          keys.updateIdentityCredentials(
                  config.cert().toFile(),
                  config.key().toFile(),
                  every,
                  TimeUnit.MILLISECONDS,
                  reloader)
              ::close);
      if (config.mutual()) {
        trust =
            AdvancedTlsX509TrustManager.newBuilder()
                .setVerification(
                    AdvancedTlsX509TrustManager.Verification.CERTIFICATE_ONLY_VERIFICATION)
                .build();
        watches.add(
            trust.updateTrustCredentials(
                    config.clientCa().toFile(), every, TimeUnit.MILLISECONDS, reloader)
                ::close);
      } else {
        trust = null;
      }
    } catch (IOException | GeneralSecurityException e) {
      reloader.shutdownNow();
      throw new IllegalArgumentException(
          "tls: cannot load the certificate, key or client CA (cert "
              + config.cert()
              + ", key "
              + config.key()
              + (config.mutual() ? ", client_ca " + config.clientCa() : "")
              + "): "
              + e.getMessage(),
          e);
    }
  }

  /** Credentials for the gRPC server. */
  public ServerCredentials grpcCredentials() {
    TlsServerCredentials.Builder b = TlsServerCredentials.newBuilder().keyManager(keys);
    if (trust != null) {
      b.trustManager(trust)
          .clientAuth(
              config.requireClientCert()
                  ? TlsServerCredentials.ClientAuth.REQUIRE
                  : TlsServerCredentials.ClientAuth.OPTIONAL);
    }
    return b.build();
  }

  /** An SSL context for the HTTP server, sharing the same (reloading) managers. */
  public SSLContext sslContext() {
    try {
      SSLContext c = SSLContext.getInstance("TLS");
      c.init(new KeyManager[] {keys}, trust == null ? null : new TrustManager[] {trust}, null);
      return c;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("tls: cannot build the HTTP server's context: " + e, e);
    }
  }

  public TlsConfig config() {
    return config;
  }

  @Override
  public void close() {
    for (Closeable c : watches) {
      try {
        c.close();
      } catch (IOException | RuntimeException ignored) {
        // stopping anyway
      }
    }
    reloader.shutdownNow();
  }
}
