package dev.sluice.manager.security;

import static dev.sluice.manager.security.SecureClients.async;
import static dev.sluice.manager.security.SecureClients.withToken;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.AdminCancelRequest;
import dev.sluice.proto.v1.AdminGrpc;
import dev.sluice.proto.v1.AdminListQueuesRequest;
import dev.sluice.proto.v1.AdminQueue;
import dev.sluice.proto.v1.DeadChangeRequest;
import dev.sluice.proto.v1.DeadChangeResponse;
import dev.sluice.proto.v1.DeadEvent;
import dev.sluice.proto.v1.DeadFilter;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.ListDeadRequest;
import dev.sluice.proto.v1.ListDeadResponse;
import dev.sluice.proto.v1.ListReceiversRequest;
import dev.sluice.proto.v1.PauseRequest;
import dev.sluice.proto.v1.ShowEventRequest;
import dev.sluice.proto.v1.ShowEventResponse;
import dev.sluice.testkit.TestPki;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The sluice.v1.Admin API over real TLS with token principals, against a real database: every call
 * with and without its grant, paging over 10,000 dead events, a replayed event delivered, and bad
 * input refused with nothing changed.
 */
class AdminApiTest {
  static Harness h;
  static TestPki pki;
  static int port;
  static final SecureClients clients = new SecureClients();

  static Principal principal(String name, Grant... grants) {
    return new Principal(
        name, Authenticator.sha256(name + "-token"), null, List.of(grants), Limits.NONE);
  }

  static Grant grant(String queues, Action... actions) {
    return new Grant(List.of(queues), EnumSet.of(actions[0], actions), List.of());
  }

  @BeforeAll
  static void start() throws Exception {
    Path dir = Files.createTempDirectory("sluice-admin-test");
    pki = TestPki.create(dir, "main");
    TestPki.Issued server = pki.server("server");
    h = new Harness(AdminApiTest.class);
    for (String q : List.of("big_q", "grant_q", "replay_q", "bad_q", "pause_q", "tenant_q")) {
      h.createQueue(q, "max_attempts=1 min_backoff=0s");
    }
    SecurityConfig sec =
        new SecurityConfig(
            new TlsConfig(
                server.cert(),
                server.key(),
                pki.caFile(),
                false,
                TlsConfig.DEFAULT_RELOAD_INTERVAL),
            List.of(
                principal("ops", grant("*", Action.ADMIN, Action.SUBSCRIBE)),
                principal("viewer", grant("*", Action.STATS)),
                principal("replayer", grant("grant_q", Action.REPLAY, Action.STATS)),
                principal("stranger", grant("other_*", Action.SUBSCRIBE)),
                principal(
                    "acme-ops",
                    new Grant(
                        List.of("tenant_q"),
                        EnumSet.of(Action.REPLAY, Action.STATS),
                        List.of("acme")))),
            true,
            true,
            false);
    h.startManager(h.configBuilder().security(sec).build(), java.time.Clock.systemUTC());
    port = h.server().port();
    await()
        .atMost(20, SECONDS)
        .until(
            () ->
                admin("ops")
                        .listQueues(AdminListQueuesRequest.getDefaultInstance())
                        .getQueuesCount()
                    == 6);
  }

  @AfterAll
  static void stop() {
    clients.close();
    if (h != null) {
      h.close();
    }
  }

  static AdminGrpc.AdminBlockingStub admin(String principal) {
    ManagedChannel ch = clients.tls(port, pki.caFile(), null);
    return withToken(
        AdminGrpc.newBlockingStub(ch).withDeadlineAfter(30, TimeUnit.SECONDS),
        principal + "-token");
  }

  static Status refused(Runnable call) {
    try {
      call.run();
      return Status.OK;
    } catch (StatusRuntimeException e) {
      return e.getStatus();
    }
  }

  /** Inserts dead rows {@code from..to} (epoch 1), in statements of 1,000 rows. */
  static void insertDead(String queue, long from, long to, String tenant) throws Exception {
    for (long start = from; start <= to; start += 1000) {
      StringBuilder sql =
          new StringBuilder(
              "INSERT INTO " + queue + " (id, order_id, tenant, state, epoch) VALUES ");
      for (long id = start; id <= Math.min(to, start + 999); id++) {
        sql.append(id == start ? "" : ", ")
            .append("(" + id + ", " + id + ", '" + tenant + "', 3, 1)");
      }
      h.exec(sql.toString());
    }
  }

  static void reason(String queue, long id, String reason) throws Exception {
    h.exec(
        "INSERT INTO sluice_dead_reason (queue, id, epoch, reason, time_ns) VALUES ('"
            + queue
            + "', "
            + id
            + ", 1, '"
            + reason
            + "', 0)");
  }

  static long state(String queue, long id) throws Exception {
    return h.queryLong("SELECT state FROM " + queue + " WHERE id = ?", id);
  }

  static long count(String queue) throws Exception {
    return h.queryLong("SELECT COUNT(*) FROM " + queue);
  }

  static long denied(String principal, String action) {
    var c =
        h.registry
            .find("sluice_admin_actions")
            .tag("principal", principal)
            .tag("action", action)
            .tag("outcome", "denied")
            .counter();
    return c == null ? 0 : (long) c.count();
  }

  @Test
  void everyCallIsRefusedWithoutItsGrantAndChangesNothing() throws Exception {
    insertDead("grant_q", 1, 3, "");
    h.exec("INSERT INTO grant_q (id, order_id, time_next) VALUES (50, 50, 9223372036854775807)");
    long rows = count("grant_q");
    DeadChangeRequest ids = DeadChangeRequest.newBuilder().setQueue("grant_q").addIds(1).build();
    PauseRequest pause = PauseRequest.newBuilder().setQueue("grant_q").build();
    List<Consumer<AdminGrpc.AdminBlockingStub>> changes =
        List.of(
            s -> s.replay(ids),
            s -> s.purge(ids),
            s -> s.cancel(AdminCancelRequest.newBuilder().setQueue("grant_q").addIds(50).build()),
            s -> s.pause(pause),
            s -> s.resume(pause));
    List<Consumer<AdminGrpc.AdminBlockingStub>> reads =
        List.of(
            s -> s.listDead(ListDeadRequest.newBuilder().setQueue("grant_q").build()),
            s -> s.showEvent(ShowEventRequest.newBuilder().setQueue("grant_q").setId(1).build()),
            s -> s.listReceivers(ListReceiversRequest.newBuilder().setQueue("grant_q").build()));
    // A stranger may do nothing, and does not even see the queue listed.
    for (var call : concat(changes, reads)) {
      Status st = refused(() -> call.accept(admin("stranger")));
      assertThat(st.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
      assertThat(st.getDescription()).contains("principal stranger may not").contains("grant_q");
    }
    assertThat(
            admin("stranger")
                .listQueues(AdminListQueuesRequest.getDefaultInstance())
                .getQueuesList())
        .isEmpty();
    // stats reads but changes nothing; the message names the action.
    for (var call : reads) {
      assertThat(refused(() -> call.accept(admin("viewer"))).getCode()).isEqualTo(Status.Code.OK);
    }
    for (var call : changes) {
      assertThat(refused(() -> call.accept(admin("viewer"))).getCode())
          .isEqualTo(Status.Code.PERMISSION_DENIED);
    }
    assertThat(refused(() -> admin("viewer").purge(ids)).getDescription())
        .contains("may not purge on queue 'grant_q'");
    // The narrow replay grant replays, and may not purge.
    assertThat(refused(() -> admin("replayer").purge(ids)).getCode())
        .isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(state("grant_q", 1)).isEqualTo(3);
    assertThat(state("grant_q", 50)).isEqualTo(0);
    assertThat(count("grant_q")).isEqualTo(rows);
    assertThat(h.queryLong("SELECT COUNT(*) FROM sluice_queue_control WHERE queue='grant_q'"))
        .isZero();
    assertThat(denied("stranger", "replay")).isEqualTo(1);
    assertThat(denied("viewer", "purge")).isEqualTo(2);

    assertThat(admin("replayer").replay(ids).getChanged()).isEqualTo(1);
    assertThat(state("grant_q", 1)).isNotEqualTo(3);
    // With admin: every change.
    assertThat(
            admin("ops")
                .purge(DeadChangeRequest.newBuilder().setQueue("grant_q").addIds(2).build())
                .getChanged())
        .isEqualTo(1);
    assertThat(h.queryLong("SELECT COUNT(*) FROM grant_q WHERE id = 2")).isZero();
    DeadChangeResponse c =
        admin("ops")
            .cancel(
                AdminCancelRequest.newBuilder().setQueue("grant_q").addIds(50).addIds(3).build());
    assertThat(c.getChanged()).isEqualTo(1);
    assertThat(c.getUnchangedList())
        .extracting(u -> u.getId() + " " + u.getWhy())
        .containsExactly("3 not pending");
    assertThat(state("grant_q", 50)).isEqualTo(4);
    ShowEventResponse shown =
        admin("viewer")
            .showEvent(ShowEventRequest.newBuilder().setQueue("grant_q").setId(50).build());
    assertThat(shown.getState()).isEqualTo("cancelled");
    assertThat(shown.getColumnsMap().get("order_id").getIntValue()).isEqualTo(50);
  }

  @Test
  void pagesOverTenThousandDeadEventsWithFilters() throws Exception {
    insertDead("big_q", 1, 10_000, "");
    h.exec("UPDATE big_q SET tenant = 'acme' WHERE id % 10 = 0");
    reason("big_q", 4321, "kafka said: Timeout while publishing");
    reason("big_q", 9999, "bad payload");
    List<Long> seen = new ArrayList<>();
    String token = "";
    int pages = 0;
    do {
      ListDeadResponse page =
          admin("viewer")
              .listDead(
                  ListDeadRequest.newBuilder()
                      .setQueue("big_q")
                      .setPageSize(500)
                      .setPageToken(token)
                      .build());
      page.getEventsList().forEach(e -> seen.add(e.getId()));
      // Ages are judged against the shard's database clock, which each page carries.
      assertThat(page.getServerTimeNs())
          .as("the database clock's time with the page")
          .isCloseTo(
              java.time.Clock.systemUTC().millis() * 1_000_000L,
              org.assertj.core.data.Offset.offset(60_000_000_000L));
      token = page.getNextPageToken();
      pages++;
    } while (!token.isEmpty() && pages < 100);
    assertThat(seen).hasSize(10_000).doesNotHaveDuplicates().isSorted();
    assertThat(seen.get(0)).isEqualTo(1);
    assertThat(seen.get(9_999)).isEqualTo(10_000);
    assertThat(pages).isBetween(20, 21);

    List<DeadEvent> timeouts =
        admin("viewer")
            .listDead(
                ListDeadRequest.newBuilder()
                    .setQueue("big_q")
                    .setFilter(DeadFilter.newBuilder().setReasonContains("TIMEOUT"))
                    .build())
            .getEventsList();
    assertThat(timeouts).extracting(DeadEvent::getId).containsExactly(4321L);
    assertThat(timeouts.get(0).getReason()).isEqualTo("kafka said: Timeout while publishing");
    assertThat(timeouts.get(0).getAttempts()).isEqualTo(1);

    // A tenant filter over the whole table, paged: 1,000 events.
    List<Long> acme = new ArrayList<>();
    token = "";
    pages = 0;
    do {
      ListDeadResponse page =
          admin("viewer")
              .listDead(
                  ListDeadRequest.newBuilder()
                      .setQueue("big_q")
                      .setPageSize(300)
                      .setPageToken(token)
                      .setFilter(DeadFilter.newBuilder().setTenant("acme"))
                      .build());
      page.getEventsList().forEach(e -> acme.add(e.getId()));
      token = page.getNextPageToken();
      pages++;
    } while (!token.isEmpty() && pages < 100);
    assertThat(acme).hasSize(1000).allMatch(id -> id % 10 == 0).doesNotHaveDuplicates();

    // Purge all matching a filter: only acme's events, with the count.
    DeadChangeResponse purged =
        admin("ops")
            .purge(
                DeadChangeRequest.newBuilder()
                    .setQueue("big_q")
                    .setAll(true)
                    .setFilter(DeadFilter.newBuilder().setTenant("acme"))
                    .build());
    assertThat(purged.getChanged()).isEqualTo(1000);
    assertThat(count("big_q")).isEqualTo(9000);
    // Counts are reused for up to a second (counting scans the table).
    await().atMost(10, SECONDS).until(() -> queue("big_q").getDead() == 9000);
    assertThat(queue("big_q").getHasCounts()).isTrue();
    assertThat(queue("big_q").getPending()).isZero();
  }

  @Test
  void aReplayedEventIsDeliveredToAReceiver() throws Exception {
    insertDead("replay_q", 7, 7, "");
    reason("replay_q", 7, "receiver nacked: boom");
    ManagedChannel ch = clients.tls(port, pki.caFile(), null);
    try (RawReceiver r = RawReceiver.open(async(ch, "ops-token"), "replay_q", "r1", 10)) {
      await().atMost(20, SECONDS).until(() -> r.subscribed);
      // The dispatcher publishes its receivers' figures about twice a second.
      await()
          .atMost(20, SECONDS)
          .until(
              () ->
                  admin("ops")
                      .listReceivers(ListReceiversRequest.newBuilder().setQueue("replay_q").build())
                      .getReceiversList()
                      .stream()
                      .map(x -> x.getReceiverId())
                      .toList()
                      .equals(List.of("r1")));
      ShowEventResponse dead =
          admin("ops")
              .showEvent(ShowEventRequest.newBuilder().setQueue("replay_q").setId(7).build());
      assertThat(dead.getState()).isEqualTo("dead");
      assertThat(dead.getReason()).isEqualTo("receiver nacked: boom");
      DeadChangeResponse res =
          admin("ops")
              .replay(DeadChangeRequest.newBuilder().setQueue("replay_q").addIds(7).build());
      assertThat(res.getChanged()).isEqualTo(1);
      Event e = r.events.poll(30, SECONDS);
      assertThat(e).isNotNull();
      assertThat(e.getId()).isEqualTo(7);
      r.ack(e);
      await().atMost(20, SECONDS).until(() -> state("replay_q", 7) == 2);
    }
  }

  @Test
  void aPausedQueueDispatchesNothingUntilResumed() throws Exception {
    assertThat(
            admin("ops")
                .pause(PauseRequest.newBuilder().setQueue("pause_q").build())
                .getShardsList())
        .containsExactly("s1");
    assertThat(h.queryLong("SELECT paused FROM sluice_queue_control WHERE queue='pause_q'"))
        .isEqualTo(1);
    assertThat(queue("pause_q").getPaused()).isTrue();
    h.exec("INSERT INTO pause_q (id, order_id) VALUES (1, 1)");
    ManagedChannel ch = clients.tls(port, pki.caFile(), null);
    try (RawReceiver r = RawReceiver.open(async(ch, "ops-token"), "pause_q", "p1", 10)) {
      await().atMost(20, SECONDS).until(() -> r.subscribed);
      assertThat(r.events.poll(2, SECONDS)).isNull();
      assertThat(state("pause_q", 1)).isZero();
      admin("ops").resume(PauseRequest.newBuilder().setQueue("pause_q").build());
      assertThat(queue("pause_q").getPaused()).isFalse();
      Event e = r.events.poll(30, SECONDS);
      assertThat(e).isNotNull();
      assertThat(e.getId()).isEqualTo(1);
      r.ack(e);
    }
  }

  @Test
  void aGrantNarrowedToTenantsSeesAndReplaysOnlyTheirEvents() throws Exception {
    insertDead("tenant_q", 1, 1, "acme");
    insertDead("tenant_q", 2, 2, "globex");
    assertThat(
            admin("acme-ops")
                .listDead(ListDeadRequest.newBuilder().setQueue("tenant_q").build())
                .getEventsList())
        .extracting(DeadEvent::getId)
        .containsExactly(1L);
    assertThat(
            refused(
                    () ->
                        admin("acme-ops")
                            .showEvent(
                                ShowEventRequest.newBuilder()
                                    .setQueue("tenant_q")
                                    .setId(2)
                                    .build()))
                .getCode())
        .isEqualTo(Status.Code.NOT_FOUND);
    DeadChangeResponse r =
        admin("acme-ops")
            .replay(
                DeadChangeRequest.newBuilder().setQueue("tenant_q").addIds(1).addIds(2).build());
    assertThat(r.getChanged()).isEqualTo(1);
    assertThat(r.getUnchangedList())
        .extracting(u -> u.getId() + " " + u.getWhy())
        .containsExactly("2 unknown id");
    assertThat(state("tenant_q", 1)).isNotEqualTo(3);
    assertThat(state("tenant_q", 2)).isEqualTo(3);
  }

  @Test
  void badInputIsRefusedAndChangesNothing() throws Exception {
    insertDead("bad_q", 1, 5, "");
    Status big =
        refused(
            () ->
                admin("ops")
                    .listDead(
                        ListDeadRequest.newBuilder().setQueue("bad_q").setPageSize(501).build()));
    assertThat(big.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(big.getDescription()).contains("page_size");
    Status token =
        refused(
            () ->
                admin("ops")
                    .listDead(
                        ListDeadRequest.newBuilder()
                            .setQueue("bad_q")
                            .setPageToken("zzz")
                            .build()));
    assertThat(token.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(token.getDescription()).contains("page_token");
    Status unknown =
        refused(
            () ->
                admin("ops")
                    .replay(
                        DeadChangeRequest.newBuilder().setQueue("no_such_q").addIds(1).build()));
    assertThat(unknown.getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(unknown.getDescription()).contains("no_such_q");
    DeadChangeRequest.Builder many = DeadChangeRequest.newBuilder().setQueue("bad_q");
    for (long i = 1; i <= 1001; i++) {
      many.addIds(i);
    }
    Status tooMany = refused(() -> admin("ops").replay(many.build()));
    assertThat(tooMany.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(tooMany.getDescription()).contains("ids").contains("1000");
    Status both =
        refused(
            () ->
                admin("ops")
                    .purge(
                        DeadChangeRequest.newBuilder()
                            .setQueue("bad_q")
                            .setAll(true)
                            .addIds(1)
                            .build()));
    assertThat(both.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    Status noEvent =
        refused(
            () ->
                admin("ops")
                    .showEvent(ShowEventRequest.newBuilder().setQueue("bad_q").setId(99).build()));
    assertThat(noEvent.getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(h.queryLong("SELECT COUNT(*) FROM bad_q WHERE state = 3")).isEqualTo(5);
  }

  static AdminQueue queue(String name) {
    return admin("ops")
        .listQueues(AdminListQueuesRequest.getDefaultInstance())
        .getQueuesList()
        .stream()
        .filter(q -> q.getName().equals(name))
        .findFirst()
        .orElseThrow();
  }

  static <T> List<T> concat(List<T> a, List<T> b) {
    List<T> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
  }
}
