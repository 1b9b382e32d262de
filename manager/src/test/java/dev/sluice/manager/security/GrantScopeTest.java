package dev.sluice.manager.security;

import static dev.sluice.manager.security.SecureClients.async;
import static dev.sluice.manager.security.SecureClients.blocking;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.CancelRequest;
import dev.sluice.proto.v1.CancelResponse;
import dev.sluice.proto.v1.CancelResult;
import dev.sluice.proto.v1.CancelStatus;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.NotifyShutdownRequest;
import dev.sluice.testkit.TestPki;
import io.grpc.ManagedChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What a grant scopes, over TLS with token principals: receiver ids, and Cancel's tenants. */
class GrantScopeTest {
  static Harness h;
  static TestPki pki;
  static SecureClients clients = new SecureClients();

  @BeforeAll
  static void start() throws Exception {
    Path dir = Files.createTempDirectory("sluice-grant-scope");
    pki = TestPki.create(dir, "main");
    TestPki.Issued server = pki.server("server");
    h = new Harness(GrantScopeTest.class);
    h.createQueue("gs_a", "");
    h.createQueue("gs_b", "");
    h.createQueue("gs_c", "");
    SecurityConfig sec =
        new SecurityConfig(
            new TlsConfig(server.cert(), server.key(), null, false, Duration.ofMillis(500)),
            List.of(
                principal("alice", "alice-token", "gs_a", List.of(), Action.SUBSCRIBE),
                principal("bob", "bob-token", "gs_b", List.of(), Action.SUBSCRIBE),
                principal("carol", "carol-token", "gs_c", List.of("acme"), Action.CANCEL)),
            true,
            true,
            false);
    h.startManager(h.configBuilder().security(sec).build(), java.time.Clock.systemUTC());
  }

  static Principal principal(
      String name, String token, String queue, List<String> tenants, Action action) {
    return new Principal(
        name,
        Authenticator.sha256(token),
        null,
        List.of(new Grant(List.of(queue), EnumSet.of(action), tenants)),
        Limits.NONE);
  }

  final List<RawReceiver> receivers = new ArrayList<>();

  @AfterEach
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

  static ManagedChannel tls() {
    return clients.tls(h.server().port(), pki.caFile(), null);
  }

  RawReceiver open(String token, String queue, String rid) {
    RawReceiver r = RawReceiver.open(async(tls(), token), queue, rid, 10);
    receivers.add(r);
    await().atMost(15, SECONDS).until(() -> r.subscribed || r.error != null);
    return r;
  }

  /** 5a: another principal taking a receiver id first does not lock its owner out. */
  @Test
  void receiverIdsAreScopedPerPrincipal() throws Exception {
    RawReceiver squatter = open("bob-token", "gs_b", "alice-worker");
    assertThat(squatter.error).isNull();
    RawReceiver alice = open("alice-token", "gs_a", "alice-worker");
    assertThat(alice.error).as("alice subscribes with her own receiver id").isNull();
    h.exec("INSERT INTO gs_a (order_id) VALUES (1)");
    Event e = alice.events.poll(10, SECONDS);
    assertThat(e).isNotNull();
    alice.ack(e);
    await().atMost(10, SECONDS).until(() -> h.queryLong("SELECT state FROM gs_a") == 2);
    // bob's NotifyShutdown of that id drains his own stream only; alice keeps receiving.
    assertThat(
            blocking(tls(), "bob-token")
                .notifyShutdown(
                    NotifyShutdownRequest.newBuilder().setReceiverId("alice-worker").build())
                .getStreams())
        .isEqualTo(1);
    h.exec("INSERT INTO gs_a (order_id) VALUES (2)");
    Event next = alice.events.poll(10, SECONDS);
    assertThat(next).isNotNull();
    alice.ack(next);
  }

  /**
   * 5b: an event of a tenant outside carol's grant is answered as an id that does not exist, and is
   * not changed; her own tenant's event is cancelled.
   */
  @Test
  void cancelKeepsToTheGrantsTenants() throws Exception {
    h.exec("INSERT INTO gs_c (tenant, order_id) VALUES ('globex', 1)");
    h.exec("INSERT INTO gs_c (tenant, order_id) VALUES ('acme', 2)");
    long globex = h.queryLong("SELECT id FROM gs_c WHERE tenant = 'globex'");
    long acme = h.queryLong("SELECT id FROM gs_c WHERE tenant = 'acme'");
    long missing = acme + 1000;
    CancelResponse r =
        blocking(tls(), "carol-token")
            .cancel(
                CancelRequest.newBuilder()
                    .setQueue("gs_c")
                    .addIds(globex)
                    .addIds(acme)
                    .addIds(missing)
                    .build());
    assertThat(r.getResultsList())
        .extracting(CancelResult::getId, CancelResult::getStatus)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(globex, CancelStatus.CANCEL_STATUS_UNKNOWN),
            org.assertj.core.groups.Tuple.tuple(acme, CancelStatus.CANCEL_STATUS_CANCELLED),
            org.assertj.core.groups.Tuple.tuple(missing, CancelStatus.CANCEL_STATUS_UNKNOWN));
    assertThat(h.queryLong("SELECT state FROM gs_c WHERE id = ?", globex)).isEqualTo(0);
    assertThat(h.queryLong("SELECT state FROM gs_c WHERE id = ?", acme)).isEqualTo(4);
  }
}
