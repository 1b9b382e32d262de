package dev.sluice.manager.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.manager.Harness;
import dev.sluice.testkit.TestPki;
import io.grpc.util.CertificateUtils;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import javax.security.auth.x500.X500Principal;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** 5d: with {@code client_auth: require}, the HTTPS status server requires a client certificate. */
class HttpClientCertTest {
  static Harness h;
  static TestPki pki;
  static TestPki otherCa;

  @BeforeAll
  static void start() throws Exception {
    Path dir = Files.createTempDirectory("sluice-http-client-cert");
    pki = TestPki.create(dir, "main");
    otherCa = TestPki.create(dir, "other");
    TestPki.Issued server = pki.server("server");
    h = new Harness(HttpClientCertTest.class);
    SecurityConfig sec =
        new SecurityConfig(
            new TlsConfig(server.cert(), server.key(), pki.caFile(), true, Duration.ofSeconds(1)),
            List.of(
                new Principal(
                    "ops",
                    null,
                    new X500Principal("CN=ops,O=Sluice"),
                    List.of(new Grant(List.of("*"), EnumSet.of(Action.STATS), List.of())),
                    Limits.NONE)),
            true,
            true,
            false);
    h.startManager(h.configBuilder().security(sec).build(), java.time.Clock.systemUTC());
  }

  @AfterAll
  static void stop() {
    if (h != null) {
      h.close();
    }
  }

  static HttpClient https(TestPki.Issued client) throws Exception {
    KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
    trust.load(null, null);
    try (InputStream in = Files.newInputStream(pki.caFile())) {
      trust.setCertificateEntry("ca", CertificateUtils.getX509Certificates(in)[0]);
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    KeyManagerFactory kmf = null;
    if (client != null) {
      KeyStore keys = KeyStore.getInstance(KeyStore.getDefaultType());
      keys.load(null, null);
      X509Certificate[] chain;
      try (InputStream in = Files.newInputStream(client.cert())) {
        chain = CertificateUtils.getX509Certificates(in);
      }
      PrivateKey key;
      try (InputStream in = Files.newInputStream(client.key())) {
        key = CertificateUtils.getPrivateKey(in);
      }
      keys.setKeyEntry("client", key, "x".toCharArray(), chain);
      kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keys, "x".toCharArray());
    }
    SSLContext c = SSLContext.getInstance("TLS");
    c.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return HttpClient.newBuilder().sslContext(c).connectTimeout(Duration.ofSeconds(5)).build();
  }

  static int get(HttpClient c, String path) throws Exception {
    return c.send(
            HttpRequest.newBuilder(URI.create("https://localhost:" + h.server().httpPort() + path))
                .timeout(Duration.ofSeconds(10))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .statusCode();
  }

  @Test
  void withoutAClientCertificateTheHandshakeFails() {
    assertThatThrownBy(() -> get(https(null), "/healthz")).isInstanceOf(IOException.class);
  }

  @Test
  void aCertificateFromAnotherCaIsRefused() {
    assertThatThrownBy(() -> get(https(otherCa.client("stranger", "ops")), "/healthz"))
        .isInstanceOf(IOException.class);
  }

  @Test
  void aClientCertificateOfTheCaIsServedAndNamesItsPrincipal() throws Exception {
    HttpClient c = https(pki.client("ops", "ops"));
    assertThat(get(c, "/healthz")).isEqualTo(200);
    assertThat(get(c, "/api/status")).isEqualTo(200);
  }
}
