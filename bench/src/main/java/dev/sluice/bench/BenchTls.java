package dev.sluice.bench;

import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Authenticator;
import dev.sluice.manager.security.Grant;
import dev.sluice.manager.security.Limits;
import dev.sluice.manager.security.Principal;
import dev.sluice.manager.security.SecurityConfig;
import dev.sluice.manager.security.TlsConfig;
import dev.sluice.receiver.SluiceReceiverBuilder;
import dev.sluice.testkit.TestPki;
import java.io.IOException;
import java.nio.file.Files;
import java.util.EnumSet;
import java.util.List;

/**
 * TLS and authentication for a benchmark run, as a production deployment would have them: mutual
 * TLS required, a token principal with a subscribe grant, so acks carry delivery tokens. What it
 * costs is the difference to the same run in plain text.
 */
final class BenchTls {
  private static final String TOKEN = "bench-token-0123456789abcdef";

  private final TestPki.Issued server;
  private final TestPki.Issued client;
  private final TestPki ca;

  BenchTls() throws IOException {
    ca = TestPki.create(Files.createTempDirectory("sluice-bench-pki-"), "bench");
    server = ca.server("manager");
    client = ca.client("receiver", "bench-receiver");
  }

  SecurityConfig config() {
    return new SecurityConfig(
        new TlsConfig(
            server.cert(), server.key(), ca.caFile(), true, TlsConfig.DEFAULT_RELOAD_INTERVAL),
        List.of(
            new Principal(
                "bench",
                Authenticator.sha256(TOKEN),
                null,
                List.of(new Grant(List.of("*"), EnumSet.of(Action.SUBSCRIBE), List.of())),
                Limits.NONE)),
        true,
        true,
        false);
  }

  SluiceReceiverBuilder receiver(SluiceReceiverBuilder b) {
    return b.tls(ca.caFile()).clientCertificate(client.cert(), client.key()).token(TOKEN);
  }

  /** The host the server certificate names. */
  static String host() {
    return "localhost";
  }
}
