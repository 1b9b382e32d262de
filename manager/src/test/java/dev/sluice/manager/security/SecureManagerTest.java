package dev.sluice.manager.security;

import static dev.sluice.manager.security.SecureClients.async;
import static dev.sluice.manager.security.SecureClients.blocking;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.AckStatus;
import dev.sluice.proto.v1.CancelRequest;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.ListQueuesRequest;
import dev.sluice.proto.v1.NotifyShutdownRequest;
import dev.sluice.proto.v1.QueueInfo;
import dev.sluice.proto.v1.QueueStatsRequest;
import dev.sluice.testkit.TestPki;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import javax.security.auth.x500.X500Principal;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A manager with mutual TLS (client certificates optional) and token principals, attacked over real
 * TLS with certificates this test generates: every forged call is refused and changes nothing,
 * while the legitimate receiver is unaffected.
 */
class SecureManagerTest {
  static Harness h;
  static TestPki pki;
  static TestPki otherCa;
  static Path dir;
  static int port;
  static SecureClients clients = new SecureClients();

  static Principal tokenPrincipal(String name, String token, Grant... grants) {
    return new Principal(name, Authenticator.sha256(token), null, List.of(grants), Limits.NONE);
  }

  static Grant grant(String queues, Action... actions) {
    return new Grant(List.of(queues), EnumSet.of(actions[0], actions), List.of());
  }

  @BeforeAll
  static void start() throws Exception {
    dir = Files.createTempDirectory("sluice-secure-test");
    pki = TestPki.create(dir, "main");
    otherCa = TestPki.create(dir, "other");
    TestPki.Issued server = pki.server("server");
    h = new Harness(SecureManagerTest.class);
    h.createQueue("orders_q", "");
    h.createQueue("billing_q", "");
    h.createQueue("orders_sdk", "");
    SecurityConfig sec =
        new SecurityConfig(
            new TlsConfig(
                server.cert(),
                server.key(),
                pki.caFile(),
                false,
                TlsConfig.DEFAULT_RELOAD_INTERVAL),
            List.of(
                tokenPrincipal(
                    "orders-app",
                    "orders-token",
                    grant("orders*", Action.SUBSCRIBE, Action.CANCEL, Action.STATS)),
                tokenPrincipal("orders-b", "orders-b-token", grant("orders*", Action.SUBSCRIBE)),
                tokenPrincipal("billing", "billing-token", grant("billing*", Action.SUBSCRIBE)),
                tokenPrincipal("ops", "ops-token", grant("*", Action.STATS, Action.ADMIN)),
                new Principal(
                    "cert-app",
                    null,
                    new X500Principal("CN=cert-app,O=Sluice"),
                    List.of(grant("orders*", Action.SUBSCRIBE, Action.STATS)),
                    Limits.NONE)),
            true,
            true,
            false);
    h.startManager(h.configBuilder().security(sec).build(), java.time.Clock.systemUTC());
    port = h.server().port();
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

  static ManagedChannel tls() {
    return clients.tls(port, pki.caFile(), null);
  }

  static Status.Code codeOf(Runnable call) {
    try {
      call.run();
      return Status.Code.OK;
    } catch (StatusRuntimeException e) {
      return e.getStatus().getCode();
    }
  }

  static long insert(String queue) throws Exception {
    try (var c = h.connect();
        var s =
            c.prepareStatement(
                "INSERT INTO " + queue + " (order_id) VALUES (1)",
                java.sql.Statement.RETURN_GENERATED_KEYS)) {
      s.executeUpdate();
      try (var k = s.getGeneratedKeys()) {
        k.next();
        return k.getLong(1);
      }
    }
  }

  static long state(String queue, long id) throws Exception {
    return h.queryLong("SELECT state FROM " + queue + " WHERE id = ?", id);
  }

  @Test
  void noTokenIsUnauthenticatedAndSeesNothing() {
    ManagedChannel ch = tls();
    assertThat(codeOf(() -> blocking(ch, null).listQueues(ListQueuesRequest.getDefaultInstance())))
        .isEqualTo(Status.Code.UNAUTHENTICATED);
    RawReceiver r = track(RawReceiver.open(async(ch, null), "orders_q", "anon", 10));
    await().atMost(10, SECONDS).until(() -> r.error != null);
    assertThat(r.error.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(r.subscribed).isFalse();
  }

  @Test
  void wrongTokenIsUnauthenticated() {
    ManagedChannel ch = tls();
    assertThat(
            codeOf(
                () ->
                    blocking(ch, "orders-token-guessed")
                        .queueStats(QueueStatsRequest.getDefaultInstance())))
        .isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(denied("-", "bad_token")).isPositive();
  }

  @Test
  void tokenForAnotherQueueIsDeniedAndLearnsNothing() throws Exception {
    ManagedChannel ch = tls();
    RawReceiver r = track(RawReceiver.open(async(ch, "billing-token"), "orders_q", "b1", 10));
    await().atMost(10, SECONDS).until(() -> r.error != null);
    assertThat(r.error.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    // A queue that does not exist answers the same: the refusal tells nothing about the queue.
    RawReceiver r2 = track(RawReceiver.open(async(ch, "billing-token"), "nope_q", "b2", 10));
    await().atMost(10, SECONDS).until(() -> r2.error != null);
    assertThat(r2.error.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    long id = insert("orders_q");
    assertThat(
            codeOf(
                () ->
                    blocking(ch, "billing-token")
                        .cancel(
                            CancelRequest.newBuilder().setQueue("orders_q").addIds(id).build())))
        .isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(
            codeOf(
                () ->
                    blocking(ch, "billing-token")
                        .queueStats(QueueStatsRequest.newBuilder().setQueue("orders_q").build())))
        .isEqualTo(Status.Code.PERMISSION_DENIED);
    // Listing shows only what the principal has grants on.
    await()
        .atMost(10, SECONDS)
        .until(
            () ->
                blocking(ch, "ops-token")
                        .listQueues(ListQueuesRequest.getDefaultInstance())
                        .getQueuesCount()
                    == 3);
    assertThat(
            blocking(ch, "billing-token")
                .listQueues(ListQueuesRequest.getDefaultInstance())
                .getQueuesList())
        .extracting(QueueInfo::getName)
        .containsExactly("billing_q");
    assertThat(state("orders_q", id)).isNotEqualTo(4); // not cancelled
    assertThat(denied("billing", "permission")).isGreaterThanOrEqualTo(4);
  }

  @Test
  void clientCertificateNamesItsPrincipal() throws Exception {
    ManagedChannel ch = clients.tls(port, pki.caFile(), pki.client("cert-app", "cert-app"));
    assertThat(
            blocking(ch, null).listQueues(ListQueuesRequest.getDefaultInstance()).getQueuesList())
        .extracting(QueueInfo::getName)
        .containsExactlyInAnyOrder("orders_q", "orders_sdk");
    // A certificate of the right CA whose subject is no principal's is not a principal.
    ManagedChannel stranger = clients.tls(port, pki.caFile(), pki.client("stranger", "stranger"));
    assertThat(
            codeOf(
                () -> blocking(stranger, null).listQueues(ListQueuesRequest.getDefaultInstance())))
        .isEqualTo(Status.Code.UNAUTHENTICATED);
  }

  @Test
  void expiredCertificateIsRefusedAtTheHandshake() {
    ManagedChannel ch = clients.tls(port, pki.caFile(), pki.expiredClient("expired", "cert-app"));
    assertThat(codeOf(() -> blocking(ch, null).listQueues(ListQueuesRequest.getDefaultInstance())))
        .isEqualTo(Status.Code.UNAVAILABLE);
  }

  @Test
  void certificateFromAnotherCaIsRefused() {
    // Client certificates are optional here: the client's TLS stack offers no certificate the
    // server's CA list would take, so the call arrives without one (or the handshake fails).
    ManagedChannel ch = clients.tls(port, pki.caFile(), otherCa.client("other-app", "cert-app"));
    assertThat(codeOf(() -> blocking(ch, null).listQueues(ListQueuesRequest.getDefaultInstance())))
        .isIn(Status.Code.UNAVAILABLE, Status.Code.UNAUTHENTICATED);
  }

  @Test
  void plainTextAgainstTheTlsPortFails() {
    ManagedChannel ch = clients.plain(port);
    assertThat(
            codeOf(
                () -> blocking(ch, "ops-token").listQueues(ListQueuesRequest.getDefaultInstance())))
        .isEqualTo(Status.Code.UNAVAILABLE);
  }

  @Test
  void aServerFromAnotherCaIsNotTrustedByClients() {
    ManagedChannel ch = clients.tls(port, otherCa.caFile(), null);
    assertThat(
            codeOf(
                () -> blocking(ch, "ops-token").listQueues(ListQueuesRequest.getDefaultInstance())))
        .isEqualTo(Status.Code.UNAVAILABLE);
  }

  @Test
  void anAckForAnEventDeliveredToSomeoneElseChangesNothing() throws Exception {
    ManagedChannel ch = tls();
    RawReceiver owner =
        track(RawReceiver.open(async(ch, "orders-token"), "orders_q", "owner-1", 1));
    await().atMost(10, SECONDS).until(() -> owner.subscribed);
    long id = insert("orders_q");
    Event e = null;
    while (e == null || e.getId() != id) {
      e = owner.events.poll(10, SECONDS);
      assertThat(e).isNotNull();
      if (e.getId() != id) {
        owner.ack(e);
      }
    }
    assertThat(e.getDeliveryToken().size()).isEqualTo(DeliveryTokens.TOKEN_BYTES);
    // Another principal, with the token copied from the real delivery.
    RawReceiver thief =
        track(RawReceiver.open(async(ch, "orders-b-token"), "orders_q", "thief-1", 1));
    await().atMost(10, SECONDS).until(() -> thief.subscribed);
    thief.ack(e);
    // The same principal, from another receiver id.
    RawReceiver sibling =
        track(RawReceiver.open(async(ch, "orders-token"), "orders_q", "owner-2", 1));
    await().atMost(10, SECONDS).until(() -> sibling.subscribed);
    sibling.ack(e);
    // No token at all: a forged (id, epoch).
    sibling.ack(e.getId(), e.getEpoch(), e.getShard());
    await()
        .atMost(10, SECONDS)
        .until(() -> thief.results.size() == 1 && sibling.results.size() == 2);
    assertThat(thief.results.get(0).getStatus()).isEqualTo(AckStatus.ACK_STATUS_UNKNOWN);
    assertThat(sibling.results).allMatch(r -> r.getStatus() == AckStatus.ACK_STATUS_UNKNOWN);
    assertThat(state("orders_q", id)).isEqualTo(1); // still fired, for its owner
    owner.ack(e);
    await().atMost(10, SECONDS).until(() -> state("orders_q", id) == 2);
    assertThat(owner.results.get(owner.results.size() - 1).getStatus())
        .isEqualTo(AckStatus.ACK_STATUS_OK);
    assertThat(denied("orders-b", "foreign_ack")).isPositive();
  }

  @Test
  void receiverIdsAreEachPrincipalsOwn() throws Exception {
    ManagedChannel ch = tls();
    RawReceiver owner =
        track(RawReceiver.open(async(ch, "orders-token"), "orders_q", "victim-1", 5));
    await().atMost(10, SECONDS).until(() -> owner.subscribed);
    // Another principal's NotifyShutdown of that id drains its own streams of it: none.
    assertThat(
            blocking(ch, "orders-b-token")
                .notifyShutdown(
                    NotifyShutdownRequest.newBuilder().setReceiverId("victim-1").build())
                .getStreams())
        .isZero();
    // The same id under another principal is that principal's own receiver.
    RawReceiver namesake =
        track(RawReceiver.open(async(ch, "orders-b-token"), "orders_q", "victim-1", 5));
    await().atMost(10, SECONDS).until(() -> namesake.subscribed || namesake.error != null);
    assertThat(namesake.error).isNull();
    namesake.close();
    // The first still receives.
    long id = insert("orders_q");
    await().atMost(10, SECONDS).until(() -> owner.all.stream().anyMatch(ev -> ev.getId() == id));
    owner.all.forEach(owner::ack);
    // Its own principal may drain it.
    assertThat(
            blocking(ch, "orders-token")
                .notifyShutdown(
                    NotifyShutdownRequest.newBuilder().setReceiverId("victim-1").build())
                .getStreams())
        .isEqualTo(1);
  }

  @Test
  void reflectionNeedsTheAdminAction() throws Exception {
    ManagedChannel ch = tls();
    assertThat(reflect(ch, "orders-token").getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(reflect(ch, null).getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(reflect(ch, "ops-token").getCode()).isEqualTo(Status.Code.OK);
  }

  /** Lists services by reflection; the status the stream ended with. */
  static Status reflect(ManagedChannel ch, String token) throws Exception {
    var stub = ServerReflectionGrpc.newStub(ch);
    if (token != null) {
      stub = SecureClients.withToken(stub, token);
    }
    CompletableFuture<Status> done = new CompletableFuture<>();
    StreamObserver<ServerReflectionRequest> req =
        stub.serverReflectionInfo(
            new StreamObserver<>() {
              @Override
              public void onNext(ServerReflectionResponse r) {
                if (r.hasListServicesResponse()) {
                  done.complete(Status.OK);
                }
              }

              @Override
              public void onError(Throwable t) {
                done.complete(Status.fromThrowable(t));
              }

              @Override
              public void onCompleted() {
                done.complete(Status.OK);
              }
            });
    req.onNext(ServerReflectionRequest.newBuilder().setListServices("").build());
    Status s = done.get(10, SECONDS);
    req.onCompleted();
    return s;
  }

  @Test
  void theReceiverSdkWorksOverMutualTlsWithATokenAndItsAcksApply() throws Exception {
    TestPki.Issued cert = pki.client("sdk-client", "sdk-client");
    java.util.Set<Long> handled = java.util.concurrent.ConcurrentHashMap.newKeySet();
    long first = insert("orders_sdk");
    try (var receiver =
        dev.sluice.receiver.SluiceReceiver.builder()
            .target("localhost:" + port)
            .tls(pki.caFile())
            .clientCertificate(cert.cert(), cert.key())
            .token("orders-token")
            .queue("orders_sdk")
            .receiverId("sdk-1")
            .handler(e -> handled.add(e.id()))
            .build()
            .start()) {
      long second = insert("orders_sdk");
      await()
          .atMost(15, SECONDS)
          .until(() -> state("orders_sdk", first) == 2 && state("orders_sdk", second) == 2);
      assertThat(handled).contains(first, second);
    }
  }

  static double denied(String principal, String reason) {
    var c =
        h.registry
            .find("sluice.auth.denied")
            .tag("principal", principal)
            .tag("reason", reason)
            .counter();
    return c == null ? 0 : c.count();
  }
}
