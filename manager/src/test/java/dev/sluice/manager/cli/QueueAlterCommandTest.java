package dev.sluice.manager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.manager.Harness;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice queue alter} merges new options into the comment the database holds. */
class QueueAlterCommandTest {
  static Harness h;
  @TempDir Path dir;

  @BeforeAll
  static void start() throws Exception {
    h = new Harness(QueueAlterCommandTest.class);
    h.createQueue("alter_q", "ack_wait=10s max_attempts=5");
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  String comment() throws Exception {
    try (var c = h.connect();
        var ps =
            c.prepareStatement(
                "SELECT TABLE_COMMENT FROM information_schema.TABLES"
                    + " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'alter_q'");
        var rs = ps.executeQuery()) {
      rs.next();
      return rs.getString(1);
    }
  }

  @Test
  void writesAMigrationMergingWithTheCurrentComment() throws Exception {
    Path config = Cli.config(dir, h);
    Cli.Result r =
        Cli.run(
            "queue",
            "alter",
            "alter_q",
            "-c",
            config.toString(),
            "--option",
            "ack_wait=2m",
            "--option",
            "purge_after=3d",
            "--unset",
            "max_attempts");
    assertThat(r.code()).as(r.toString()).isZero();
    Path file = dir.resolve("db/migration/V1__alter_alter_q.sql");
    assertThat(r.out().strip()).isEqualTo(file.toString());
    assertThat(Files.readString(file))
        .contains("-- Was: sluice_queue ack_wait=10s max_attempts=5")
        .contains("ALTER TABLE `alter_q` COMMENT = 'sluice_queue ack_wait=2m purge_after=3d';");

    Cli.Result m = Cli.run("migrate", "-c", config.toString());
    assertThat(m.code()).as(m.toString()).isZero();
    assertThat(comment()).isEqualTo("sluice_queue ack_wait=2m purge_after=3d");

    // Nothing to change: exit 0, nothing written.
    Cli.Result same =
        Cli.run("queue", "alter", "alter_q", "-c", config.toString(), "--option", "ack_wait=2m");
    assertThat(same.code()).as(same.toString()).isZero();
    assertThat(same.err()).contains("no migration written");
    assertThat(Cli.files(dir.resolve("db/migration"))).containsExactly("V1__alter_alter_q.sql");
  }

  @Test
  void badInputIsRefusedWithExit2AndNothingWritten() throws Exception {
    Path config = Cli.config(dir, h);
    String c = config.toString();
    String before = comment();
    String[][] refusals = {
      {"queue", "alter", "alter_q", "-c", c},
      {"queue", "alter", "alter_q", "-c", c, "--option", "ack_wait=later"},
      {"queue", "alter", "alter_q", "-c", c, "--option", "speed=11"},
      {"queue", "alter", "alter_q", "-c", c, "--option", "max_backoff=1ms"},
      {"queue", "alter", "alter_q", "-c", c, "--unset", "cache_size"},
      {"queue", "alter", "no_such_q", "-c", c, "--option", "ack_wait=1m"},
      {
        "queue",
        "alter",
        "alter_q",
        "-c",
        dir.resolve("missing.yaml").toString(),
        "--option",
        "ack_wait=1m"
      },
    };
    for (String[] args : refusals) {
      Cli.Result r = Cli.run(args);
      assertThat(r.code()).as(String.join(" ", args) + "\n" + r).isEqualTo(2);
      assertThat(r.out()).isEmpty();
    }
    assertThat(Cli.files(dir.resolve("db/migration"))).isEmpty();
    assertThat(comment()).isEqualTo(before);
    Cli.Result bad = Cli.run(refusals[1]);
    assertThat(bad.err()).contains("'later' is not a duration").contains("nothing written");
    assertThat(Cli.run(refusals[5]).err()).contains("no queue table named 'no_such_q'");
  }
}
