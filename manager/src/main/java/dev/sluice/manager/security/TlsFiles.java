package dev.sluice.manager.security;

import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.AdvancedTlsX509TrustManager;
import io.grpc.util.CertificateUtils;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's certificate, key and client CA, read from PEM files and read again when they change:
 * every {@code reload_interval} one daemon thread, {@code sluice-tls-reload}, compares the files'
 * modification times and loads what changed into grpc-java's AdvancedTls managers. Both servers
 * share those managers, so a rotated certificate is served by gRPC and HTTP alike from the next
 * handshake on. A new certificate is taken only with a key that matches it (a rotation that
 * replaced one file and not yet the other waits for the second), and files that do not parse keep
 * the last good credentials, with a warning.
 */
public final class TlsFiles implements Closeable {
  private static final Logger log = LoggerFactory.getLogger(TlsFiles.class);

  private final TlsConfig config;
  private final AdvancedTlsX509KeyManager keys = new AdvancedTlsX509KeyManager();
  private final AdvancedTlsX509TrustManager trust;
  private final ScheduledExecutorService reloader;

  /** Modification times of the files last loaded; reloader thread only after construction. */
  private long certTime;

  private long keyTime;
  private long caTime;

  public TlsFiles(TlsConfig config) {
    this.config = config;
    try {
      loadIdentity();
      if (config.mutual()) {
        trust =
            AdvancedTlsX509TrustManager.newBuilder()
                .setVerification(
                    AdvancedTlsX509TrustManager.Verification.CERTIFICATE_ONLY_VERIFICATION)
                .build();
        loadTrust();
      } else {
        trust = null;
      }
    } catch (IOException | GeneralSecurityException | RuntimeException e) {
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
    this.reloader =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "sluice-tls-reload");
              t.setDaemon(true);
              return t;
            });
    long every = config.reloadInterval().toMillis();
    reloader.scheduleWithFixedDelay(this::reload, every, every, TimeUnit.MILLISECONDS);
  }

  private void reload() {
    try {
      if (modified(config.cert()) != certTime || modified(config.key()) != keyTime) {
        loadIdentity();
        log.info("tls: loaded the rotated certificate {} and key", config.cert());
      }
      if (trust != null && modified(config.clientCa()) != caTime) {
        loadTrust();
        log.info("tls: loaded the rotated client CA {}", config.clientCa());
      }
    } catch (Throwable t) {
      // Half a rotation, or a bad file: keep serving the last good credentials and retry.
      log.warn(
          "tls: not (yet) reloading the changed files, keeping the last good ones: {}",
          t.toString());
    }
  }

  private void loadIdentity() throws IOException, GeneralSecurityException {
    long ct = modified(config.cert());
    long kt = modified(config.key());
    X509Certificate[] chain;
    PrivateKey key;
    try (InputStream in = Files.newInputStream(config.cert())) {
      chain = CertificateUtils.getX509Certificates(in);
    }
    try (InputStream in = Files.newInputStream(config.key())) {
      key = CertificateUtils.getPrivateKey(in);
    }
    if (chain.length == 0) {
      throw new GeneralSecurityException(config.cert() + " holds no certificate");
    }
    matches(chain[0], key);
    keys.updateIdentityCredentials(chain, key);
    certTime = ct;
    keyTime = kt;
  }

  private void loadTrust() throws IOException, GeneralSecurityException {
    long t = modified(config.clientCa());
    trust.updateTrustCredentials(config.clientCa().toFile());
    caTime = t;
  }

  /** Whether the key is the certificate's: signs a nonce with one and verifies with the other. */
  private static void matches(X509Certificate cert, PrivateKey key)
      throws GeneralSecurityException {
    String alg =
        switch (key.getAlgorithm()) {
          case "EC" -> "SHA256withECDSA";
          case "RSA" -> "SHA256withRSA";
          case "Ed25519", "EdDSA" -> "Ed25519";
          default -> null;
        };
    if (alg == null) {
      return; // an algorithm we cannot check: the handshake will tell
    }
    byte[] nonce = "sluice-tls-key-check".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    Signature s = Signature.getInstance(alg);
    s.initSign(key);
    s.update(nonce);
    byte[] sig = s.sign();
    Signature v = Signature.getInstance(alg);
    v.initVerify(cert.getPublicKey());
    v.update(nonce);
    if (!v.verify(sig)) {
      throw new GeneralSecurityException("the key does not match the certificate");
    }
  }

  private static long modified(Path p) throws IOException {
    return Files.getLastModifiedTime(p).toMillis();
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
    reloader.shutdownNow();
  }
}
