package dev.sluice.manager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.manager.Harness;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice migrate} applies Sluice's and the user's migrations to every shard and reports
 * each; {@code sluice check} prints each problem with the statement that fixes it.
 */
class MigrateAndCheckCommandTest {
  static Harness h;
  static TestDatabase second;
  @TempDir Path dir;

  @BeforeAll
  static void start() {
    h = new Harness(MigrateAndCheckCommandTest.class);
    second = TestDatabases.fresh(MigrateAndCheckCommandTest.class);
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  static void execOn(String url, String sql) throws Exception {
    try (Connection c = DriverManager.getConnection(url, h.db.user(), h.db.password());
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  @Test
  void migrateReportsEveryShardAndFailsWhenOneFails() throws Exception {
    Path config = Cli.config(dir, h, second.url());
    Cli.Result missing = Cli.run("migrate", "-c", config.toString());
    assertThat(missing.code()).isEqualTo(2);
    assertThat(missing.err()).contains("does not exist");

    assertThat(Cli.run("queue", "create", "mig_q", "-c", config.toString()).code()).isZero();
    // Shard s2 already has a table of that name: its migration fails, s1's goes on.
    execOn(second.url(), "CREATE TABLE mig_q (x INT)");
    Cli.Result r = Cli.run("migrate", "-c", config.toString());
    assertThat(r.code()).as(r.toString()).isEqualTo(1);
    assertThat(r.out())
        .contains("s1: ok, applied 1 migration, now at version 1")
        .contains("s2: FAILED");
    assertThat(h.queryLong("SELECT COUNT(*) FROM sluice_queue_control")).isZero();

    Cli.Result again =
        Cli.run(
            "migrate",
            "-c",
            config.toString(),
            "--json",
            "--migrations",
            dir.resolve("db/migration").toString());
    JsonNode j = new ObjectMapper().readTree(again.out());
    assertThat(j.get("shards").get(0).get("ok").asBoolean()).isTrue();
    assertThat(j.get("shards").get(0).get("applied").asInt()).isZero();
    assertThat(j.get("shards").get(1).get("ok").asBoolean()).isFalse();
    assertThat(j.get("shards").get(1).get("error").asText()).isNotBlank();
  }

  @Test
  void checkPrintsEachProblemWithItsFixAndTheFixesWork() throws Exception {
    Path config = Cli.config(dir.resolve("one"), h);
    h.exec(
        "CREATE TABLE check_bad (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,"
            + " time_next BIGINT NOT NULL DEFAULT 0, state TINYINT NOT NULL DEFAULT 0,"
            + " epoch INT NOT NULL DEFAULT 0, priority TINYINT NOT NULL DEFAULT 0,"
            + " tenant VARCHAR(64) NOT NULL DEFAULT '', time_created BIGINT NOT NULL DEFAULT 0,"
            + " payload TEXT) ENGINE=InnoDB COMMENT='sluice_queue ack_wait=2m max_attempts=many'");
    h.createQueue("check_good", "");
    Cli.Result r = Cli.run("check", "-c", config.toString());
    assertThat(r.code()).as(r.toString()).isEqualTo(1);
    assertThat(r.out())
        .contains("s1  check_good  ok")
        .contains("s1  check_bad  queue check_bad: malformed comment")
        .contains("fix: ALTER TABLE `check_bad` COMMENT = 'sluice_queue ack_wait=2m';")
        .contains("time_acked: missing column")
        .contains("fix: ALTER TABLE `check_bad` ADD COLUMN `time_acked` BIGINT NULL;")
        .contains("sluice_poll: no index on (state, time_next)")
        .contains("fix: ALTER TABLE `check_bad` ADD INDEX `sluice_poll` (`state`, `time_next`);");
    if (dev.sluice.testkit.TestDatabases.embedded() != null
        && dev.sluice.testkit.EmbeddedServer.binlogOn()) {
      // The binlog, checked by a real replication connection: followable on the embedded server.
      assertThat(r.out()).contains("s1  binlog followed from 127.0.0.1:");
    }
    JsonNode j =
        new ObjectMapper().readTree(Cli.run("check", "-c", config.toString(), "--json").out());
    assertThat(j.get("problems")).hasSize(3);

    Matcher fixes = Pattern.compile("fix: (.*);").matcher(r.out());
    while (fixes.find()) {
      h.exec(fixes.group(1));
    }
    Cli.Result fixed = Cli.run("check", "-c", config.toString());
    assertThat(fixed.code()).as(fixed.toString()).isZero();
    assertThat(fixed.err()).contains("queue table(s) ok");
  }

  @Test
  void checkWarnsOfAZoneDependentTimeDefaultWithItsFixAndTheQueueStaysOk() throws Exception {
    Path config = Cli.config(dir.resolve("zone"), h);
    h.exec(
        dev.sluice.db.QueueConvention.createTableSql(
                "check_zone", java.util.List.of("`n` BIGINT NULL"), "sluice_queue")
            .replace(
                "(" + dev.sluice.db.QueueConvention.NOW_NS_SQL + ")",
                "(CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED))"));
    Cli.Result r = Cli.run("check", "-c", config.toString());
    assertThat(r.code()).as("a warning is no problem: %s", r).isZero();
    assertThat(r.out())
        .contains("s1  check_zone  ok")
        .contains("s1  check_zone  warning: time_next: default")
        .contains("depends on the session's time zone")
        .contains("fix: ALTER TABLE `check_zone` MODIFY `time_next` BIGINT NOT NULL DEFAULT (");
    JsonNode j =
        new ObjectMapper().readTree(Cli.run("check", "-c", config.toString(), "--json").out());
    // The table's two warnings (a server without a binlog adds the shard's own, queue null).
    List<JsonNode> tableWarnings = new ArrayList<>();
    j.get("warnings")
        .forEach(
            w -> {
              if ("check_zone".equals(w.path("queue").asText(null))) {
                tableWarnings.add(w);
              }
            });
    assertThat(tableWarnings).hasSize(2);
    Matcher fixes = Pattern.compile("fix: (.*);").matcher(r.out());
    while (fixes.find()) {
      h.exec(fixes.group(1));
    }
    assertThat(Cli.run("check", "-c", config.toString()).out())
        .doesNotContain("check_zone  warning");
  }

  @Test
  void aConfigThatDoesNotParseIsBadInput() throws Exception {
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, "shards: []\n");
    for (String cmd : new String[] {"migrate", "check", "queue list"}) {
      String[] args = (cmd + " -c " + bad).split(" ");
      Cli.Result r = Cli.run(args);
      assertThat(r.code()).as(cmd).isEqualTo(2);
      assertThat(r.err()).as(cmd).contains("at least one shard");
    }
  }
}
