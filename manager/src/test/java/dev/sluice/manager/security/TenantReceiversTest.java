package dev.sluice.manager.security;

import static dev.sluice.manager.security.SecureClients.async;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.core.fairness.ShuffleSharder;
import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.Event;
import dev.sluice.testkit.TestPki;
import io.grpc.ManagedChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Tenants and the receivers that may serve them, over TLS with tenant-limited grants: a tenant is
 * served whenever some receiver accepts it, whatever the shuffle sharding or {@code fair} say, and
 * the tenant caps hold with {@code fair=false} too.
 */
class TenantReceiversTest {
  static Harness h;
  static TestPki pki;
  static Path dir;
  static SecureClients clients = new SecureClients();

  @BeforeAll
  static void start() throws Exception {
    dir = Files.createTempDirectory("sluice-tenant-receivers");
    pki = TestPki.create(dir, "main");
    TestPki.Issued server = pki.server("server");
    h = new Harness(TenantReceiversTest.class);
    h.createQueue("tr_shard", "max_receivers_per_tenant=1");
    h.createQueue("tr_unfair", "fair=false");
    h.createQueue("tr_unfair_cap", "fair=false tenant_max_in_flight=1");
    SecurityConfig sec =
        new SecurityConfig(
            new TlsConfig(server.cert(), server.key(), null, false, Duration.ofMillis(500)),
            List.of(
                principal("acme-only", "acme-token", List.of("acme")),
                principal("every-tenant", "all-token", null)),
            true,
            true,
            false);
    h.startManager(h.configBuilder().security(sec).build(), java.time.Clock.systemUTC());
  }

  static Principal principal(String name, String token, List<String> tenants) {
    return new Principal(
        name,
        Authenticator.sha256(token),
        null,
        List.of(new Grant(List.of("tr_*"), EnumSet.of(Action.SUBSCRIBE), tenants)),
        Limits.NONE);
  }

  final List<RawReceiver> receivers = new ArrayList<>();

  RawReceiver open(String token, String queue, String rid, int maxInFlight) {
    ManagedChannel ch = clients.tls(h.server().port(), pki.caFile(), null);
    RawReceiver r = RawReceiver.open(async(ch, token), queue, rid, maxInFlight);
    receivers.add(r);
    await().atMost(15, SECONDS).until(() -> r.subscribed || r.error != null);
    assertThat(r.error).isNull();
    return r;
  }

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

  static long count(String sql) throws Exception {
    return h.queryLong(sql);
  }

  /**
   * 4a: with one receiver per tenant, a receiver id chosen to win globex's shuffle shard, on a
   * principal that refuses globex, must not keep globex from the receiver that accepts it.
   */
  @Test
  void aTenantIsShardedOnlyOverReceiversThatAcceptIt() throws Exception {
    String accepting = "all-1";
    // The id an attacker would pick: one that outranks the accepting receiver for globex.
    String capture = null;
    for (int i = 0; capture == null; i++) {
      ShuffleSharder s = new ShuffleSharder(1);
      s.setReceivers(List.of(accepting, "acme-" + i));
      if (s.receiversFor("globex").equals(Set.of("acme-" + i))) {
        capture = "acme-" + i;
      }
    }
    RawReceiver refusing = open("acme-token", "tr_shard", capture, 10);
    RawReceiver all = open("all-token", "tr_shard", accepting, 10);
    h.exec(
        "INSERT INTO tr_shard (tenant, order_id) VALUES ('globex', 1), ('globex', 2),"
            + " ('acme', 3)");
    List<Event> got = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      Event e = all.events.poll(10, SECONDS);
      assertThat(e).as("globex event %d reaches the receiver that accepts globex", i).isNotNull();
      got.add(e);
      all.ack(e);
    }
    assertThat(got).extracting(Event::getTenant).containsOnly("globex");
    Event acme = refusing.events.poll(10, SECONDS);
    assertThat(acme).isNotNull();
    assertThat(acme.getTenant()).isEqualTo("acme");
    refusing.ack(acme);
    assertThat(refusing.all).extracting(Event::getTenant).containsOnly("acme");
  }

  /**
   * 4b: with fair=false, a head event no receiver accepts waits aside while the others go, and goes
   * once a receiver that accepts it comes.
   */
  @Test
  void withoutFairnessAnEventNoReceiverAcceptsDoesNotBlockTheQueue() throws Exception {
    RawReceiver acme = open("acme-token", "tr_unfair", "acme-unfair", 10);
    h.exec("INSERT INTO tr_unfair (tenant, order_id, priority) VALUES ('globex', 1, 0)");
    h.exec("INSERT INTO tr_unfair (tenant, order_id) VALUES ('acme', 2), ('acme', 3), ('acme', 4)");
    for (int i = 0; i < 3; i++) {
      Event e = acme.events.poll(10, SECONDS);
      assertThat(e).as("acme event %d behind the refused globex head", i).isNotNull();
      assertThat(e.getTenant()).isEqualTo("acme");
      acme.ack(e);
    }
    assertThat(count("SELECT COUNT(*) FROM tr_unfair WHERE tenant = 'globex' AND state = 0"))
        .isEqualTo(1);
    RawReceiver all = open("all-token", "tr_unfair", "all-unfair", 10);
    Event g = all.events.poll(10, SECONDS);
    assertThat(g).isNotNull();
    assertThat(g.getTenant()).isEqualTo("globex");
    all.ack(g);
  }

  /** 4c: with fair=false, tenant_max_in_flight=1 still holds one tenant to one event in flight. */
  @Test
  void withoutFairnessTheTenantCapStillHolds() throws Exception {
    RawReceiver r = open("all-token", "tr_unfair_cap", "cap-1", 10);
    StringBuilder values = new StringBuilder();
    for (int i = 0; i < 10; i++) {
      values.append(i == 0 ? "" : ", ").append("('acme', ").append(i).append(')');
    }
    h.exec("INSERT INTO tr_unfair_cap (tenant, order_id) VALUES " + values);
    Event first = r.events.poll(10, SECONDS);
    assertThat(first).isNotNull();
    // The receiver holds it: nothing more of acme may go out meanwhile.
    assertThat(r.events.poll(1, SECONDS)).isNull();
    assertThat(count("SELECT COUNT(*) FROM tr_unfair_cap WHERE state = 1")).isEqualTo(1);
    r.ack(first);
    Event second = r.events.poll(10, SECONDS);
    assertThat(second).as("the next event once the first is acked").isNotNull();
    r.ack(second);
  }
}
