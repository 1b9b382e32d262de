package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.db.EventState;
import dev.sluice.manager.SluiceServer;
import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Authenticator;
import dev.sluice.manager.security.Grant;
import dev.sluice.manager.security.Limits;
import dev.sluice.manager.security.Principal;
import dev.sluice.manager.security.SecurityConfig;
import dev.sluice.manager.security.TlsConfig;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import dev.sluice.testkit.TestPki;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;

/**
 * The TLS and token check: a manager with TLS (a certificate for localhost from a test CA) and one
 * token principal allowed to subscribe, on a database of its own. A receiver without the token is
 * refused (an {@code error} line, UNAUTHENTICATED) and receives nothing; with it, events flow.
 */
final class SecureManager {
  private static final String QUEUE = "secure_q";
  private static final String TOKEN = "conformance-token-7f3a";

  private SecureManager() {}

  static void check(Client client) throws Exception {
    TestDatabase db = TestDatabases.fresh(SecureManager.class);
    ShardTables shard = new ShardTables(db);
    shard.createQueue(QUEUE, "");
    Path dir = Files.createTempDirectory("conformance-tls");
    TestPki pki = TestPki.create(dir, "conformance");
    TestPki.Issued server = pki.server("server");
    SecurityConfig security =
        new SecurityConfig(
            new TlsConfig(
                server.cert(), server.key(), null, false, TlsConfig.DEFAULT_RELOAD_INTERVAL),
            List.of(
                new Principal(
                    "receiver",
                    Authenticator.sha256(TOKEN),
                    null,
                    List.of(new Grant(List.of(QUEUE), EnumSet.of(Action.SUBSCRIBE), List.of())),
                    Limits.NONE)),
            true,
            true,
            false);
    SluiceServer manager =
        Managers.start(Managers.config("secure-" + client.id(), db).security(security).build());
    try {
      shard.insert(QUEUE, 3);
      Map<String, String> env =
          ReceiverProcess.env(client, List.of(Managers.target(manager)), QUEUE, "secure", 4, "ack");
      env.put("SLUICE_TLS_CA", pki.caFile().toString());

      try (ReceiverProcess p = ReceiverProcess.start(client, "no-token", env)) {
        p.awaitLine(
            "error",
            l -> l.path("code").asText().equals("UNAUTHENTICATED"),
            ReceiverConformance.LONG);
        assertThat(p.lines("received")).as("received without a token").isEmpty();
        p.stopAndAwaitExit();
        ReceiverLines.checkFormat(p);
      }
      assertThat(shard.count(QUEUE, EventState.PENDING)).as("events left pending").isEqualTo(3);

      env.put("SLUICE_TOKEN", TOKEN);
      try (ReceiverProcess p = ReceiverProcess.start(client, "token", env)) {
        p.awaitReady();
        shard.awaitCount(QUEUE, EventState.ACKED, 3);
        p.stopAndAwaitExit();
        ReceiverLines.checkFormat(p);
        assertThat(ReceiverLines.byEvent(p.lines("handled")).keySet())
            .containsExactlyInAnyOrderElementsOf(shard.keys(QUEUE));
      }
    } finally {
      manager.stop();
    }
  }
}
