package dev.sluice.manager.security;

import static dev.sluice.manager.security.SecureClients.async;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.Event;
import dev.sluice.testkit.TestPki;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.EnumSet;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The HTTP port over TLS with authentication, per-principal limits, tenant grants, and a rotated
 * certificate picked up without a restart.
 */
class SecureHttpAndLimitsTest {
  static Harness h;
  static TestPki pki;
  static Path dir;
  static SecureClients clients = new SecureClients();

  @BeforeAll
  static void start() throws Exception {
    dir = Files.createTempDirectory("sluice-secure-http");
    pki = TestPki.create(dir, "main");
    TestPki.Issued server = pki.server("server");
    h = new Harness(SecureHttpAndLimitsTest.class);
    h.createQueue("jobs_q", "");
    h.createQueue("jobs_tenants", "");
    Grant sub = new Grant(List.of("jobs*"), EnumSet.of(Action.SUBSCRIBE), List.of());
    SecurityConfig sec =
        new SecurityConfig(
            new TlsConfig(server.cert(), server.key(), null, false, Duration.ofMillis(200)),
            List.of(
                new Principal(
                    "limited",
                    Authenticator.sha256("limited-token"),
                    null,
                    List.of(sub),
                    new Limits(2, 100, 5)),
                new Principal(
                    "slow-subscriber",
                    Authenticator.sha256("slow-token"),
                    null,
                    List.of(sub),
                    new Limits(0, 1, 0)),
                new Principal(
                    "acme-only",
                    Authenticator.sha256("acme-token"),
                    null,
                    List.of(
                        new Grant(List.of("jobs*"), EnumSet.of(Action.SUBSCRIBE), List.of("acme"))),
                    Limits.NONE),
                new Principal(
                    "ops",
                    Authenticator.sha256("ops-token"),
                    null,
                    List.of(new Grant(List.of("*"), EnumSet.of(Action.STATS), List.of())),
                    Limits.NONE)),
            true,
            false,
            false);
    h.startManager(h.configBuilder().security(sec).build(), java.time.Clock.systemUTC());
  }

  /** This test's receivers, closed after it so that they take none of the next test's events. */
  final List<RawReceiver> receivers = new java.util.ArrayList<>();

  RawReceiver track(RawReceiver r) {
    receivers.add(r);
    return r;
  }

  @org.junit.jupiter.api.AfterEach
  void closeReceivers() {
    receivers.forEach(RawReceiver::close);
  }

  @AfterAll
  static void stop() {
    clients.close();
    if (h != null) {
      h.close();
    }
  }

  static HttpClient https(Path ca) throws Exception {
    KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
    ks.load(null, null);
    try (InputStream in = Files.newInputStream(ca)) {
      ks.setCertificateEntry(
          "ca", (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ks);
    SSLContext c = SSLContext.getInstance("TLS");
    c.init(null, tmf.getTrustManagers(), null);
    return HttpClient.newBuilder().sslContext(c).connectTimeout(Duration.ofSeconds(5)).build();
  }

  static int get(HttpClient c, String path, String authorization) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("https://localhost:" + h.server().httpPort() + path))
            .timeout(Duration.ofSeconds(10));
    if (authorization != null) {
      b.header("Authorization", authorization);
    }
    return c.send(b.build(), HttpResponse.BodyHandlers.ofString()).statusCode();
  }

  static String basic(String token) {
    return "Basic "
        + Base64.getEncoder().encodeToString(("any:" + token).getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void statusNeedsCredentialsWhileHealthStaysOpen() throws Exception {
    HttpClient c = https(pki.caFile());
    assertThat(get(c, "/healthz", null)).isEqualTo(200);
    assertThat(get(c, "/readyz", null)).isEqualTo(200);
    assertThat(get(c, "/api/status", null)).isEqualTo(401);
    assertThat(get(c, "/", null)).isEqualTo(401);
    assertThat(get(c, "/metrics", null)).isEqualTo(401); // open_metrics: false
    assertThat(get(c, "/api/status", "Bearer wrong")).isEqualTo(401);
    assertThat(get(c, "/api/status", "Bearer limited-token")).isEqualTo(403); // no stats on *
    assertThat(get(c, "/api/status", "Bearer ops-token")).isEqualTo(200);
    assertThat(get(c, "/", basic("ops-token"))).isEqualTo(200);
    assertThat(get(c, "/metrics", "Bearer ops-token")).isEqualTo(200);
    // The refusals above are counted by principal and reason, without the token.
    String metrics =
        c.send(
                HttpRequest.newBuilder(
                        URI.create("https://localhost:" + h.server().httpPort() + "/metrics"))
                    .header("Authorization", "Bearer ops-token")
                    .build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    assertThat(metrics)
        .contains("sluice_auth_denied_total{principal=\"-\",reason=\"no_credentials\"}")
        .contains("sluice_auth_denied_total{principal=\"-\",reason=\"bad_token\"}")
        .contains("sluice_auth_denied_total{principal=\"limited\",reason=\"permission\"}")
        .doesNotContain("wrong");
  }

  @Test
  void plainHttpAgainstTheHttpsPortGetsNothing() {
    HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    HttpRequest req =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + h.server().httpPort() + "/healthz"))
            .timeout(Duration.ofSeconds(10))
            .build();
    int status;
    try {
      status = plain.send(req, HttpResponse.BodyHandlers.ofString()).statusCode();
    } catch (Exception e) {
      status = -1; // the server dropped the connection: no TLS, no answer
    }
    assertThat(status).isNotEqualTo(200);
  }

  @Test
  void streamsAndCreditsAreLimitedPerPrincipal() {
    ManagedChannel ch = clients.tls(h.server().port(), pki.caFile(), null);
    RawReceiver a = track(RawReceiver.open(async(ch, "limited-token"), "jobs_q", "l-1", 3));
    await().atMost(10, SECONDS).until(() -> a.subscribed);
    RawReceiver b = track(RawReceiver.open(async(ch, "limited-token"), "jobs_q", "l-2", 3));
    await().atMost(10, SECONDS).until(() -> b.subscribed);
    RawReceiver c = track(RawReceiver.open(async(ch, "limited-token"), "jobs_q", "l-3", 3));
    await().atMost(10, SECONDS).until(() -> c.error != null);
    assertThat(c.error.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    // 3 + 2 of its 5 credits: the second stream was granted 2 (the Subscribed answer said so).
    assertThat(a.grantedMaxInFlight).isEqualTo(3);
    assertThat(b.grantedMaxInFlight).isEqualTo(2);
    // Once a stream closes, its stream and credits are free again.
    a.close();
    await()
        .atMost(10, SECONDS)
        .until(
            () -> {
              RawReceiver d =
                  track(RawReceiver.open(async(ch, "limited-token"), "jobs_q", "l-4", 3));
              await().atMost(10, SECONDS).until(() -> d.subscribed || d.error != null);
              return d.subscribed;
            });
  }

  @Test
  void subscribeAttemptsAreRateLimited() {
    ManagedChannel ch = clients.tls(h.server().port(), pki.caFile(), null);
    RawReceiver first = track(RawReceiver.open(async(ch, "slow-token"), "jobs_q", "s-1", 1));
    await().atMost(10, SECONDS).until(() -> first.subscribed || first.error != null);
    RawReceiver second = track(RawReceiver.open(async(ch, "slow-token"), "jobs_q", "s-2", 1));
    await().atMost(10, SECONDS).until(() -> second.subscribed || second.error != null);
    // A burst of one a second: of two immediate attempts, at most one got through.
    assertThat(List.of(first, second)).anyMatch(r -> r.error != null);
    RawReceiver refused = first.error != null ? first : second;
    assertThat(refused.error.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
  }

  @Test
  void aTenantGrantLimitsWhatTheReceiverIsSent() throws Exception {
    ManagedChannel ch = clients.tls(h.server().port(), pki.caFile(), null);
    RawReceiver acme = track(RawReceiver.open(async(ch, "acme-token"), "jobs_tenants", "a-1", 10));
    await().atMost(15, SECONDS).until(() -> acme.subscribed || acme.error != null);
    assertThat(acme.subscribed).isTrue();
    h.exec(
        "INSERT INTO jobs_tenants (tenant, order_id) VALUES ('globex', 1), ('acme', 2),"
            + " ('globex', 3)");
    Event e = acme.events.poll(10, SECONDS);
    assertThat(e).isNotNull();
    assertThat(e.getTenant()).isEqualTo("acme");
    acme.ack(e);
    assertThat(acme.events.poll(1, SECONDS)).isNull();
    assertThat(
            h.queryLong("SELECT COUNT(*) FROM jobs_tenants WHERE tenant = 'globex' AND state = 0"))
        .isEqualTo(2);
  }

  @Test
  void aRotatedCertificateIsServedWithoutARestart() throws Exception {
    // A new certificate from the same CA (so other tests' clients keep trusting the server).
    TestPki.Issued fresh = pki.server("server-next");
    X509Certificate next;
    try (InputStream in = Files.newInputStream(fresh.cert())) {
      next = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
    HttpClient c = https(pki.caFile());
    assertThat(servedSerial(c)).isNotEqualTo(next.getSerialNumber());
    // Replace the files the manager reads, each atomically: key first, then the certificate.
    replace(fresh.key(), dir.resolve("server-key.pem"));
    replace(fresh.cert(), dir.resolve("server.pem"));
    await()
        .atMost(15, SECONDS)
        .until(() -> servedSerial(https(pki.caFile())).equals(next.getSerialNumber()));
  }

  static java.math.BigInteger servedSerial(HttpClient c) throws Exception {
    HttpResponse<String> r =
        c.send(
            HttpRequest.newBuilder(
                    URI.create("https://localhost:" + h.server().httpPort() + "/healthz"))
                .timeout(Duration.ofSeconds(10))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    return ((X509Certificate) r.sslSession().orElseThrow().getPeerCertificates()[0])
        .getSerialNumber();
  }

  static void replace(Path from, Path to) throws Exception {
    Path tmp = to.resolveSibling(to.getFileName() + ".tmp");
    Files.copy(from, tmp, StandardCopyOption.REPLACE_EXISTING);
    Files.move(tmp, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }
}
