package dev.sluice.manager.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Authenticator;
import dev.sluice.manager.security.Principal;
import dev.sluice.manager.security.SecurityConfig;
import dev.sluice.testkit.TestPki;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import javax.security.auth.x500.X500Principal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The tls, auth, allow_insecure and *_bind settings of sluice.yaml. */
class SecurityConfigTest {
  @TempDir Path dir;

  static final String SHARD = "shards:\n  - name: main\n    url: jdbc:mysql://db:3306/app\n";

  ManagerConfig load(String yaml, Map<String, String> env) throws Exception {
    Path file = dir.resolve("sluice.yaml");
    Files.writeString(file, yaml + SHARD);
    return new ConfigLoader(env::get).load(file);
  }

  ManagerConfig load(String yaml) throws Exception {
    return load(yaml, Map.of());
  }

  @Test
  void readsTlsPrincipalsGrantsAndLimitsWithPathsBesideTheFile() throws Exception {
    TestPki pki = TestPki.create(dir.resolve("certs"), "ca");
    pki.server("server");
    Files.writeString(dir.resolve("ops.token"), "ops-secret\n");
    ManagerConfig c =
        load(
            """
            grpc_bind: 0.0.0.0:7500
            http_bind: "[::1]:7501"
            tls:
              cert: certs/server.pem
              key: certs/server-key.pem
              client_ca: certs/ca-ca.pem
              client_auth: optional
              reload_interval: 2s
            auth:
              open_metrics: false
              principals:
                - name: orders-app
                  token_env: ORDERS_TOKEN
                  grants:
                    - {queues: ["orders*"], actions: [subscribe, stats], tenants: [acme]}
                  limits: {streams: 4, subscribes_per_second: 2, credits: 100}
                - name: ops
                  token_file: ops.token
                  grants: [{queues: ["*"], actions: [stats, admin]}]
                - name: billing
                  token_sha256: %s
                - name: cert-app
                  cert_subject: "CN=cert-app,O=Sluice"
            """
                .formatted(Authenticator.sha256Hex("billing-secret")),
            Map.of("ORDERS_TOKEN", "orders-secret"));
    assertThat(c.grpcHost()).isEqualTo("0.0.0.0");
    assertThat(c.grpcPort()).isEqualTo(7500);
    assertThat(c.httpHost()).isEqualTo("::1");
    assertThat(c.httpPort()).isEqualTo(7501);
    SecurityConfig s = c.security();
    assertThat(s.tls().cert()).isEqualTo(dir.resolve("certs/server.pem"));
    assertThat(s.tls().requireClientCert()).isFalse();
    assertThat(s.openHealth()).isTrue();
    assertThat(s.openMetrics()).isFalse();
    Principal orders = s.principals().get(0);
    assertThat(orders.allows("orders_eu", Action.SUBSCRIBE)).isTrue();
    assertThat(orders.allows("orders_eu", Action.CANCEL)).isFalse();
    assertThat(orders.allows("billing", Action.SUBSCRIBE)).isFalse();
    assertThat(orders.tenantsFor("orders_eu")).containsExactly("acme");
    assertThat(orders.limits().streams()).isEqualTo(4);
    assertThat(orders.limits().credits()).isEqualTo(100);
    assertThat(s.principals().get(3).certSubject())
        .isEqualTo(new X500Principal("CN=cert-app, O=Sluice"));
    Authenticator a = new Authenticator(s.principals());
    assertThat(a.authenticate("Bearer orders-secret", null).principal().name())
        .isEqualTo("orders-app");
    assertThat(a.authenticate("Bearer ops-secret", null).principal().name()).isEqualTo("ops");
    assertThat(a.authenticate("Bearer billing-secret", null).principal().name())
        .isEqualTo("billing");
    assertThat(a.authenticate("Bearer nope", null).failure())
        .isEqualTo(Authenticator.Failure.BAD_TOKEN);
    assertThat(a.authenticate(null, null).failure())
        .isEqualTo(Authenticator.Failure.NO_CREDENTIALS);
    // Secrets never show: not in the configuration's text.
    assertThat(c.toString()).doesNotContain("orders-secret", "ops-secret", "billing-secret");
  }

  @Test
  void errorsNameTheFieldAndNeverTheSecret() {
    assertThatThrownBy(
            () ->
                load(
                    "auth:\n  principals:\n    - name: a\n      token_env: MISSING_TOKEN\n"
                        + "      grants: [{queues: [q], actions: [subscribe]}]\n"))
        .hasMessageContaining("auth.principals[a].token_env")
        .hasMessageContaining("MISSING_TOKEN");
    assertThatThrownBy(
            () ->
                load("auth:\n  principals:\n    - name: a\n      token_sha256: s3cret\n", Map.of()))
        .hasMessageContaining("auth.principals[a].token_sha256 must be 64 hex digits")
        .hasMessageNotContaining("s3cret");
    assertThatThrownBy(
            () ->
                load(
                    "auth:\n  principals:\n    - name: a\n      token_env: T\n"
                        + "      grants: [{queues: [q], actions: [publish]}]\n",
                    Map.of("T", "x")))
        .hasMessageContaining("unknown action 'publish'");
    assertThatThrownBy(
            () -> load("auth:\n  principals:\n    - name: a\n      cert_subject: CN=a\n"))
        .hasMessageContaining("cert_subject needs mutual TLS");
    assertThatThrownBy(() -> load("tls:\n  cert: nope.pem\n  key: nope-key.pem\n"))
        .hasMessageContaining("tls.cert: cannot read");
    assertThatThrownBy(() -> load("allow_insecure: maybe\n"))
        .hasMessageContaining("allow_insecure must be true or false");
    assertThatThrownBy(() -> load("grpc_bind: 0.0.0.0:1\ngrpc_port: 2\n"))
        .hasMessageContaining("give grpc_bind or grpc_host/grpc_port, not both");
    assertThatThrownBy(
            () ->
                load(
                    "auth:\n  principals:\n    - {name: a, token_env: T}\n"
                        + "    - {name: b, token_env: T}\n",
                    Map.of("T", "same")))
        .hasMessageContaining("same token");
  }

  /** 5c: an empty tenant list would read as "every tenant"; it is refused, naming the principal. */
  @Test
  void anEmptyTenantListIsRefusedNamingThePrincipal() {
    assertThatThrownBy(
            () ->
                load(
                    "auth:\n  principals:\n    - name: dave\n      token_sha256: "
                        + "a".repeat(64)
                        + "\n      grants: [{queues: [q], actions: [subscribe], tenants: []}]\n"))
        .hasMessageContaining("auth.principals[dave]")
        .hasMessageContaining("tenants")
        .hasMessageContaining("omit");
  }
}
