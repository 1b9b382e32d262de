package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.db.EventState;
import dev.sluice.manager.SluiceServer;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The failover check: a leader in a process of its own and a standby in this JVM, on a database of
 * their own; events flow to one receiver process, the leader dies of SIGKILL (no notice: its lease
 * stays taken until it expires, its streams break without a status), and the standby takes over.
 * The same receiver process, never restarted, must see every event acked.
 */
final class FailoverCheck {
  private static final String QUEUE = "failover_q";
  private static final Duration TTL = Duration.ofSeconds(3);
  private static final Duration RENEW = Duration.ofMillis(500);

  private FailoverCheck() {}

  static void run(Client client) throws Exception {
    TestDatabase db = TestDatabases.fresh(FailoverCheck.class);
    ShardTables shard = new ShardTables(db);
    shard.createQueue(QUEUE, "ack_wait=2s min_backoff=50ms max_backoff=100ms");
    String doomedId = "doomed-" + client.id();
    try (ManagerProcess doomed = ManagerProcess.start(doomedId, db, TTL, RENEW)) {
      await()
          .atMost(ReceiverConformance.LONG)
          .ignoreExceptions() // sluice_lease does not exist until a manager made it
          .alias("the leader in its own process took the lease")
          .until(
              () ->
                  doomed.alive()
                      && shard.queryLong(
                              "SELECT COUNT(*) FROM sluice_lease WHERE owner = '"
                                  + doomedId
                                  + "' AND expires_ns > CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000"
                                  + " AS SIGNED)")
                          == 1);
      SluiceServer standby =
          Managers.start(
              Managers.config("standby-" + client.id(), db)
                  .leaseTtl(TTL)
                  .leaseRenew(RENEW)
                  .build());
      try (ReceiverProcess p =
          ReceiverProcess.start(
              client,
              "failover",
              ReceiverProcess.env(
                  client,
                  List.of(doomed.target(), Managers.target(standby)),
                  QUEUE,
                  "failover",
                  8,
                  "slow:100"))) {
        p.awaitReady();
        // 100 ms a handling, 8 at once: most of the 100 are still to come, or held, at the kill.
        shard.insert(QUEUE, 100);
        p.awaitLines("handled", l -> true, 20, ReceiverConformance.LONG);
        assertThat(Managers.leads(standby))
            .as("the standby waits while the leader lives")
            .isFalse();

        doomed.kill();
        await()
            .atMost(ReceiverConformance.LONG)
            .alias("the standby leads")
            .until(() -> Managers.leads(standby));
        shard.insert(QUEUE, 50);
        shard.awaitCount(QUEUE, EventState.ACKED, 150);
        assertThat(p.alive()).as("%s, never restarted", p.describe()).isTrue();
        p.stopAndAwaitExit();
        ReceiverLines.checkFormat(p);
        Map<String, List<JsonNode>> handled = ReceiverLines.byEvent(p.lines("handled"));
        assertThat(handled.keySet())
            .as("events handled by %s", p.describe())
            .containsExactlyInAnyOrderElementsOf(shard.keys(QUEUE));
      } finally {
        standby.stop();
      }
    }
  }
}
