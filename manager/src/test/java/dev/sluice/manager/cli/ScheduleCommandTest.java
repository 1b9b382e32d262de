package dev.sluice.manager.cli;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.manager.Harness;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice schedule create|list|pause|resume|delete} against a real database and manager. */
class ScheduleCommandTest {
  static Harness h;
  @TempDir static Path dir;
  static String config;

  @BeforeAll
  static void start() throws Exception {
    h = new Harness(ScheduleCommandTest.class);
    h.createQueue("reports", "");
    h.createQueue("ticks", "");
    config = Cli.config(dir, h).toString();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void createListPauseResumeDelete() throws Exception {
    Cli.Result c =
        Cli.run(
            "schedule",
            "create",
            "nightly-report",
            "--queue",
            "reports",
            "--cron",
            "30 2 * * *",
            "--zone",
            "Europe/Berlin",
            "--column",
            "order_id=42",
            "--column",
            "payload=nightly",
            "--catch-up",
            "none",
            "-c",
            config);
    assertThat(c.code()).as(c.toString()).isZero();
    assertThat(c.out())
        .contains("created schedule nightly-report on shard s1")
        .contains("cron '30 2 * * *' in Europe/Berlin")
        .contains("catch_up=none");

    Cli.Result l = Cli.run("schedule", "list", "-c", config);
    assertThat(l.code()).as(l.toString()).isZero();
    assertThat(l.out())
        .containsPattern("s1\\s+nightly-report\\s+reports\\s+cron '30 2 \\* \\* \\*'");

    Cli.Result j = Cli.run("schedule", "list", "-c", config, "--json");
    JsonNode s = new ObjectMapper().readTree(j.out()).get("schedules").get(0);
    assertThat(s.get("zone").asText()).isEqualTo("Europe/Berlin");
    assertThat(s.get("catch_up").asText()).isEqualTo("none");
    assertThat(new ObjectMapper().readTree(s.get("columns").asText()).get("order_id").asLong())
        .isEqualTo(42);

    Cli.Result dup =
        Cli.run(
            "schedule",
            "create",
            "nightly-report",
            "--queue",
            "reports",
            "--every",
            "1m",
            "-c",
            config);
    assertThat(dup.code()).isEqualTo(2);
    assertThat(dup.err()).contains("schedule nightly-report exists already");

    Cli.Result p = Cli.run("schedule", "pause", "nightly-report", "-c", config);
    assertThat(p.code()).as(p.toString()).isZero();
    assertThat(p.out()).contains("paused schedule nightly-report on shard s1");
    assertThat(Cli.run("schedule", "list", "-c", config).out()).contains("paused");
    assertThat(Cli.run("schedule", "resume", "nightly-report", "-c", config).code()).isZero();
    assertThat(h.queryLong("SELECT paused FROM sluice_schedule WHERE name = 'nightly-report'"))
        .isZero();

    Cli.Result d = Cli.run("schedule", "delete", "nightly-report", "-c", config);
    assertThat(d.code()).as(d.toString()).isZero();
    assertThat(h.queryLong("SELECT COUNT(*) FROM sluice_schedule WHERE name = 'nightly-report'"))
        .isZero();
    Cli.Result gone = Cli.run("schedule", "delete", "nightly-report", "-c", config);
    assertThat(gone.code()).isEqualTo(2);
    assertThat(gone.err()).contains("no schedule named 'nightly-report'");
  }

  @Test
  void badInputIsNamedAndNothingIsWritten() throws Exception {
    Cli.Result cron =
        Cli.run(
            "schedule",
            "create",
            "bad",
            "--queue",
            "reports",
            "--cron",
            "61 * * * *",
            "-c",
            config);
    assertThat(cron.code()).isEqualTo(2);
    assertThat(cron.err()).contains("bad cron expression '61 * * * *'");

    Cli.Result queue =
        Cli.run("schedule", "create", "bad", "--queue", "nope", "--every", "1m", "-c", config);
    assertThat(queue.code()).isEqualTo(2);
    assertThat(queue.err()).contains("no queue table named 'nope'");

    Cli.Result column =
        Cli.run(
            "schedule",
            "create",
            "bad",
            "--queue",
            "reports",
            "--every",
            "1m",
            "--column",
            "colour=red",
            "-c",
            config);
    assertThat(column.code()).isEqualTo(2);
    assertThat(column.err()).contains("queue reports on shard s1 has no column 'colour'");

    Cli.Result system =
        Cli.run(
            "schedule",
            "create",
            "bad",
            "--queue",
            "reports",
            "--every",
            "1m",
            "--column",
            "state=1",
            "-c",
            config);
    assertThat(system.code()).isEqualTo(2);
    assertThat(system.err()).contains("'state' is a system column");

    Cli.Result both =
        Cli.run(
            "schedule",
            "create",
            "bad",
            "--queue",
            "reports",
            "--every",
            "1m",
            "--cron",
            "* * * * *",
            "-c",
            config);
    assertThat(both.code()).isEqualTo(2);

    Cli.Result every =
        Cli.run("schedule", "create", "bad", "--queue", "reports", "--every", "soon", "-c", config);
    assertThat(every.code()).isEqualTo(2);
    assertThat(every.err()).contains("--every");

    Cli.Result zone =
        Cli.run(
            "schedule",
            "create",
            "bad",
            "--queue",
            "reports",
            "--cron",
            "0 3 * * *",
            "--zone",
            "Mars/Olympus",
            "-c",
            config);
    assertThat(zone.code()).isEqualTo(2);
    assertThat(zone.err()).contains("unknown time zone 'Mars/Olympus'");

    Cli.Result policy =
        Cli.run(
            "schedule",
            "create",
            "bad",
            "--queue",
            "reports",
            "--every",
            "1m",
            "--catch-up",
            "some",
            "-c",
            config);
    assertThat(policy.code()).isEqualTo(2);
    assertThat(policy.err()).contains("catch_up must be one, all or none");

    assertThat(h.queryLong("SELECT COUNT(*) FROM sluice_schedule WHERE name = 'bad'")).isZero();
  }

  /** A schedule created by the CLI is run by the manager that leads the shard. */
  @Test
  void theLeaderInsertsTheOccurrencesOfASchedule() throws Exception {
    Cli.Result c =
        Cli.run(
            "schedule",
            "create",
            "every-second",
            "--queue",
            "ticks",
            "--every",
            "1s",
            "--column",
            "payload=tick",
            "-c",
            config);
    assertThat(c.code()).as(c.toString()).isZero();
    h.startManager();
    try {
      await()
          .atMost(30, SECONDS)
          .until(() -> h.queryLong("SELECT COUNT(*) FROM ticks WHERE payload = 'tick'") >= 3);
      assertThat(h.queryLong("SELECT COUNT(*) - COUNT(DISTINCT time_next) FROM ticks")).isZero();
      Cli.Result l = Cli.run("schedule", "list", "-c", config);
      assertThat(l.out()).containsPattern("every-second\\s+ticks\\s+every PT1S");
    } finally {
      h.stopManager();
      Cli.run("schedule", "delete", "every-second", "-c", config);
    }
  }

  /** {@code sluice check} names each schedule the leader would skip, and how to fix it. */
  @Test
  void checkNamesTheSchedulesTheLeaderWouldSkip() throws Exception {
    assertThat(Cli.run("check", "-c", config).out()).doesNotContain("schedule ");
    h.exec(
        "INSERT INTO sluice_schedule (name, queue, cron, every_ms, event_columns) VALUES"
            + " ('bad-cron', 'reports', '61 * * * *', NULL, NULL),"
            + " ('no-queue', 'nope', NULL, 1000, NULL),"
            + " ('no-column', 'reports', NULL, 1000, '{\"colour\": \"red\"}')");
    try {
      Cli.Result r = Cli.run("check", "-c", config);
      assertThat(r.code()).as(r.toString()).isEqualTo(1);
      assertThat(r.out())
          .contains("s1  reports  schedule bad-cron: bad cron expression '61 * * * *'")
          .contains("s1  nope  schedule no-queue: queue nope is not a valid queue table")
          .contains("s1  reports  schedule no-column: queue reports has no column 'colour'")
          .contains("fix: sluice schedule delete bad-cron, then sluice schedule create it again");
    } finally {
      h.exec("DELETE FROM sluice_schedule WHERE name IN ('bad-cron', 'no-queue', 'no-column')");
    }
  }
}
