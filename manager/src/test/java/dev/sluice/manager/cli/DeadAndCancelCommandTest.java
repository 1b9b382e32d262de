package dev.sluice.manager.cli;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.Event;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * {@code sluice dead list|replay|purge} and {@code sluice cancel}: every change is a CAS on (id,
 * state, epoch); ids that were not changed are reported and exit 1; bad input exits 2.
 */
class DeadAndCancelCommandTest {
  static Harness h;
  @TempDir static Path dir;
  static String config;

  @BeforeAll
  static void start() {
    h = new Harness(DeadAndCancelCommandTest.class);
    config = Cli.config(dir, h).toString();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  /** A queue whose events die at their first failed attempt, holding dead rows with these ids. */
  static void deadQueue(String name, long... ids) throws Exception {
    h.createQueue(name, "max_attempts=1 min_backoff=0s");
    for (long id : ids) {
      h.exec(
          "INSERT INTO "
              + name
              + " (id, order_id, state, epoch) VALUES ("
              + id
              + ", "
              + id
              + ", 3, 1)");
    }
  }

  long state(String q, long id) throws Exception {
    return h.queryLong("SELECT state FROM " + q + " WHERE id = ?", id);
  }

  @Test
  void listShowsDeadEventsWithTheirData() throws Exception {
    deadQueue("list_q", 11, 12);
    h.exec("INSERT INTO list_q (id, order_id) VALUES (13, 13)");
    Cli.Result r = Cli.run("dead", "list", "list_q", "-c", config);
    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.out())
        .containsPattern("s1\\s+11\\s+1\\s+''\\s+\\S+\\s+\\{\"order_id\":11,\"payload\":null}")
        .contains("12")
        // Not the pending event 13 (an age such as "13ms" may well contain "13").
        .doesNotContainPattern("(?m)^s1\\s+13\\s");
    JsonNode j =
        new ObjectMapper()
            .readTree(
                Cli.run("dead", "list", "list_q", "-c", config, "--json", "--after", "11").out());
    assertThat(j.get("dead")).hasSize(1);
    assertThat(j.get("dead").get(0).get("id").asLong()).isEqualTo(12);
  }

  @Test
  void changesStraightToTheDatabaseWriteTheAuditLineAsTheApiDoes() throws Exception {
    deadQueue("audit_q", 81, 82, 83);
    Logger audit = (Logger) LoggerFactory.getLogger("sluice.audit");
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    audit.addAppender(lines);
    try {
      assertThat(Cli.run("dead", "replay", "audit_q", "-c", config, "--id", "81,99").code())
          .isEqualTo(1);
      assertThat(Cli.run("cancel", "audit_q", "81", "-c", config).code()).isZero();
      assertThat(Cli.run("dead", "purge", "audit_q", "-c", config, "--all").code()).isZero();
    } finally {
      audit.detachAppender(lines);
    }
    String operator = "principal=cli:" + System.getProperty("user.name", "unknown");
    assertThat(lines.list)
        .extracting(ILoggingEvent::getFormattedMessage)
        .containsExactly(
            operator + " action=replay queue=audit_q shard=s1 count=1 outcome=ok",
            operator + " action=cancel queue=audit_q shard=s1 count=1 outcome=ok",
            operator + " action=purge queue=audit_q shard=s1 count=2 outcome=ok");
  }

  @Test
  void replayMakesDeadEventsPendingAndTheManagerDeliversThem() throws Exception {
    deadQueue("replay_q", 21, 22, 23);
    h.exec("INSERT INTO replay_q (id, order_id) VALUES (24, 24)");
    Cli.Result r = Cli.run("dead", "replay", "replay_q", "-c", config, "--id", "21,22");
    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.out()).contains("replayed 2 dead events of replay_q on shard s1");
    assertThat(h.queryLong("SELECT COUNT(*) FROM replay_q WHERE state = 0 AND epoch = 1"))
        .isEqualTo(2);
    assertThat(
            h.queryLong(
                "SELECT COUNT(*) FROM replay_q WHERE id IN (21, 22)"
                    + " AND ABS(time_next - CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED))"
                    + " < 60000000000"))
        .isEqualTo(2);

    // Not dead (pending 24, replayed 21), unknown (99): reported, unchanged, exit 1.
    Cli.Result partial =
        Cli.run("dead", "replay", "replay_q", "-c", config, "--id", "23", "--id", "24,21,99");
    assertThat(partial.code()).as(partial.toString()).isEqualTo(1);
    assertThat(partial.out()).contains("replayed 1 dead events");
    assertThat(partial.err())
        .contains("id 24: not dead")
        .contains("id 21: not dead")
        .contains("id 99: unknown id");

    // The manager serves the replayed events: a new life of max_attempts attempts.
    h.startManager();
    try {
      RawReceiver rcv = h.rawReceiver("replay_q", "r", 10);
      java.util.Set<Long> got = new java.util.HashSet<>();
      for (int i = 0; i < 4; i++) {
        Event e = rcv.events.poll(10, SECONDS);
        assertThat(e).isNotNull();
        got.add(e.getId());
        if (e.getId() == 21) {
          assertThat(e.getEpoch()).isEqualTo(2);
          rcv.nack(e, 0); // its one attempt of this life: dead again
        } else {
          rcv.ack(e);
        }
      }
      assertThat(got).containsExactlyInAnyOrder(21L, 22L, 23L, 24L);
      org.awaitility.Awaitility.await().atMost(10, SECONDS).until(() -> state("replay_q", 21) == 3);
    } finally {
      h.stopManager();
    }
    assertThat(h.queryLong("SELECT epoch FROM replay_q WHERE id = 21")).isEqualTo(2);

    Cli.Result all = Cli.run("dead", "replay", "replay_q", "-c", config, "--all", "--json");
    assertThat(all.code()).as(all.toString()).isZero();
    assertThat(new ObjectMapper().readTree(all.out()).get("replayed").asLong()).isEqualTo(1);
    assertThat(state("replay_q", 21)).isZero();
  }

  @Test
  void listShowsWhyAnEventDied() throws Exception {
    h.createQueue("why_q", "max_attempts=1 min_backoff=0s");
    h.exec("INSERT INTO why_q (id, order_id) VALUES (71, 71)");
    h.startManager();
    try {
      RawReceiver rcv = h.rawReceiver("why_q", "r", 10);
      Event e = rcv.events.poll(10, SECONDS);
      assertThat(e).isNotNull();
      rcv.nack(e, 0, "payment service said no");
      org.awaitility.Awaitility.await().atMost(10, SECONDS).until(() -> state("why_q", 71) == 3);
    } finally {
      h.stopManager();
    }
    Cli.Result r = Cli.run("dead", "list", "why_q", "-c", config);
    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.out()).contains("max_attempts 1 reached; last attempt: nack: payment service");
    JsonNode j =
        new ObjectMapper().readTree(Cli.run("dead", "list", "why_q", "-c", config, "--json").out());
    assertThat(j.get("dead").get(0).get("reason").asText())
        .isEqualTo("max_attempts 1 reached; last attempt: nack: payment service said no");
    // A replay removes the reason with the death.
    assertThat(Cli.run("dead", "replay", "why_q", "-c", config, "--id", "71").code()).isZero();
    assertThat(h.queryLong("SELECT COUNT(*) FROM sluice_dead_reason WHERE queue = 'why_q'"))
        .isZero();
  }

  /** Finding 14: application-supplied ids may be 0 or negative; --all and list reach them. */
  @Test
  void deadEventsWithIdsAtOrBelowZeroAreListedReplayedAndPurged() throws Exception {
    // (An INSERT of id 0 into an AUTO_INCREMENT column takes the next id instead.)
    deadQueue("neg_q", -9223372036854775808L, -5, -1, 7);
    Cli.Result list = Cli.run("dead", "list", "neg_q", "-c", config, "--json");
    assertThat(new ObjectMapper().readTree(list.out()).get("dead").findValuesAsText("id"))
        .containsExactly("-9223372036854775808", "-5", "-1", "7");
    Cli.Result replay = Cli.run("dead", "replay", "neg_q", "-c", config, "--all");
    assertThat(replay.code()).as(replay.toString()).isZero();
    assertThat(replay.out()).contains("replayed 4 dead events of neg_q");
    h.exec("UPDATE neg_q SET state = 3");
    Cli.Result purge = Cli.run("dead", "purge", "neg_q", "-c", config, "--all");
    assertThat(purge.out()).contains("purged 4 dead events of neg_q");
    assertThat(h.queryLong("SELECT COUNT(*) FROM neg_q")).isZero();
  }

  @Test
  void purgeDeletesOnlyDeadEvents() throws Exception {
    deadQueue("purge_q", 31, 32, 33);
    h.exec("INSERT INTO purge_q (id, order_id) VALUES (34, 34)");
    Cli.Result one = Cli.run("dead", "purge", "purge_q", "-c", config, "--id", "31");
    assertThat(one.code()).as(one.toString()).isZero();
    assertThat(h.queryLong("SELECT COUNT(*) FROM purge_q WHERE id = 31")).isZero();
    Cli.Result pending = Cli.run("dead", "purge", "purge_q", "-c", config, "--id", "34");
    assertThat(pending.code()).isEqualTo(1);
    assertThat(state("purge_q", 34)).isZero();
    Cli.Result all = Cli.run("dead", "purge", "purge_q", "-c", config, "--all");
    assertThat(all.code()).as(all.toString()).isZero();
    assertThat(all.out()).contains("purged 2 dead events of purge_q on shard s1");
    assertThat(h.queryLong("SELECT COUNT(*) FROM purge_q")).isEqualTo(1);
  }

  @Test
  void cancelOnlyCancelsPendingEvents() throws Exception {
    deadQueue("cancel_q", 41);
    h.exec("INSERT INTO cancel_q (id, order_id) VALUES (42, 42), (43, 43)");
    Cli.Result r = Cli.run("cancel", "cancel_q", "42", "-c", config);
    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.out()).contains("cancelled 1 of 1 events of cancel_q");
    assertThat(state("cancel_q", 42)).isEqualTo(4);

    Cli.Result partial = Cli.run("cancel", "cancel_q", "41", "43", "77", "-c", config, "--json");
    assertThat(partial.code()).as(partial.toString()).isEqualTo(1);
    JsonNode j = new ObjectMapper().readTree(partial.out());
    assertThat(j.get("cancelled").asLong()).isEqualTo(1);
    assertThat(j.get("results").findValuesAsText("result"))
        .containsExactly("not pending", "cancelled", "unknown id");
    assertThat(state("cancel_q", 41)).isEqualTo(3);
    assertThat(state("cancel_q", 43)).isEqualTo(4);
  }

  @Test
  void badInputExits2AndChangesNothing() throws Exception {
    deadQueue("bad_q", 51);
    String[][] refusals = {
      {"dead", "replay", "bad_q", "-c", config},
      {"dead", "replay", "bad_q", "-c", config, "--all", "--id", "51"},
      {"dead", "replay", "bad_q", "-c", config, "--id", "abc"},
      {"dead", "purge", "nope_q", "-c", config, "--all"},
      {"dead", "purge", "bad_q", "-c", config, "--all", "--shard", "s9"},
      {"dead", "list", "bad_q", "-c", config, "--limit", "0"},
      {"dead", "list", "bad`q", "-c", config},
      {"cancel", "bad_q", "-c", config},
      {"cancel", "bad_q", "x1", "-c", config},
      {"dead"},
    };
    for (String[] args : refusals) {
      Cli.Result r = Cli.run(args);
      assertThat(r.code()).as(String.join(" ", args) + "\n" + r).isEqualTo(2);
    }
    assertThat(state("bad_q", 51)).isEqualTo(3);
  }

  @Test
  void idsNeedAShardWhenTheQueueIsOnSeveral() throws Exception {
    TestDatabase other = TestDatabases.fresh(DeadAndCancelCommandTest.class);
    String url = other.url();
    for (String u : new String[] {h.url(), url}) {
      try (Connection c = java.sql.DriverManager.getConnection(u, h.db.user(), h.db.password());
          Statement s = c.createStatement()) {
        s.execute(
            dev.sluice.db.QueueConvention.createTableSql(
                "twin_q", java.util.List.of("`order_id` BIGINT NULL"), "sluice_queue"));
        s.execute("INSERT INTO twin_q (id, order_id, state, epoch) VALUES (61, 61, 3, 1)");
      }
    }
    String two = Cli.config(dir.resolve("two"), h, url).toString();
    Cli.Result ambiguous = Cli.run("dead", "replay", "twin_q", "-c", two, "--id", "61");
    assertThat(ambiguous.code()).isEqualTo(2);
    assertThat(ambiguous.err()).contains("on shards s1, s2").contains("--shard");
    Cli.Result one = Cli.run("dead", "replay", "twin_q", "-c", two, "--id", "61", "--shard", "s2");
    assertThat(one.code()).as(one.toString()).isZero();
    assertThat(state("twin_q", 61)).isEqualTo(3);
    Cli.Result all = Cli.run("dead", "purge", "twin_q", "-c", two, "--all");
    assertThat(all.code()).as(all.toString()).isZero();
    assertThat(all.out()).contains("purged 1 dead events of twin_q on shard s1");
    assertThat(all.out()).contains("purged 0 dead events of twin_q on shard s2");
  }
}
