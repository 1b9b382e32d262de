package dev.sluice.manager.cli;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.client.EventProducer;
import dev.sluice.client.InsertOutcome;
import dev.sluice.db.DataSources;
import dev.sluice.db.QueueCatalog;
import dev.sluice.db.QueueOptions;
import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.Event;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code sluice queue create} writes a migration that Flyway applies, the validator accepts and the
 * manager serves; bad input writes nothing and exits 2.
 */
class QueueCreateCommandTest {
  static Harness h;
  @TempDir Path dir;

  @BeforeAll
  static void start() {
    h = new Harness(QueueCreateCommandTest.class);
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void createdMigrationIsAppliedValidatedAndServed() throws Exception {
    Path config = Cli.config(dir, h);
    Cli.Result created =
        Cli.run(
            "queue",
            "create",
            "order_events",
            "--config",
            config.toString(),
            "--column",
            "order_id BIGINT NOT NULL",
            "--column",
            "kind VARCHAR(32) NOT NULL DEFAULT 'created'",
            "--shard-key",
            "order_id",
            "--option",
            "ack_wait=45s",
            "--option",
            "max_attempts=7");
    assertThat(created.code()).as(created.toString()).isZero();
    Path file = dir.resolve("db/migration/V1__create_order_events.sql");
    assertThat(created.out().strip()).isEqualTo(file.toString());
    String sql = Files.readString(file);
    assertThat(sql)
        .contains("CREATE TABLE `order_events`")
        .contains("`time_next` BIGINT NOT NULL DEFAULT")
        .contains("order_id BIGINT NOT NULL")
        .contains("KEY `sluice_poll` (`state`, `time_next`)")
        .contains("COMMENT='sluice_queue ack_wait=45s max_attempts=7'")
        .contains("-- shard key: order_id");

    Cli.Result migrated = Cli.run("migrate", "--config", config.toString());
    assertThat(migrated.code()).as(migrated.toString()).isZero();
    assertThat(migrated.out()).contains("s1: ok, applied 1 migration, now at version 1");

    Cli.Result check = Cli.run("check", "--config", config.toString());
    assertThat(check.code()).as(check.toString()).isZero();
    assertThat(check.out())
        .contains("s1  order_events  ok")
        .contains(
            "s1  order_events  note: no snoozes column: a handler's snooze counts as a failed"
                + " attempt here")
        .contains("ADD COLUMN `snoozes` INT NOT NULL DEFAULT 0;");
    try (var ds = DataSources.pool("t", h.url(), h.db.user(), h.db.password(), 2)) {
      QueueCatalog.Discovered d = new QueueCatalog(ds).discover().get(0);
      assertThat(d.valid()).as(String.valueOf(d.problem())).isTrue();
      assertThat(d.queue().options().ackWait()).isEqualTo(Duration.ofSeconds(45));
      assertThat(d.queue().userColumns()).containsExactly("order_id", "kind");
    }

    h.startManager();
    RawReceiver r = h.rawReceiver("order_events", "r1", 1);
    h.exec("INSERT INTO order_events (order_id) VALUES (42)");
    Event e = r.events.poll(10, SECONDS);
    assertThat(e).isNotNull();
    assertThat(e.getColumnsMap().get("order_id").getIntValue()).isEqualTo(42);
    assertThat(e.getColumnsMap().get("kind").getStringValue()).isEqualTo("created");
    r.ack(e);
    h.stopManager();

    // A second queue numbers past the first; --json prints the path as data.
    Cli.Result second =
        Cli.run("queue", "create", "emails", "--config", config.toString(), "--json");
    assertThat(second.code()).as(second.toString()).isZero();
    JsonNode j = new ObjectMapper().readTree(second.out());
    assertThat(j.get("path").asText()).endsWith("V2__create_emails.sql");
    assertThat(j.get("comment").asText()).isEqualTo("sluice_queue");
  }

  @Test
  void dedupAddsTheKeyColumnAndItsUniqueIndexAndCheckAcceptsThem() throws Exception {
    // A database of its own: the other tests' migrations (V1, V2) are in the shared one.
    Harness own = new Harness(QueueCreateCommandTest.class);
    try {
      dedupQueue(own);
    } finally {
      own.close();
    }
  }

  private void dedupQueue(Harness h) throws Exception {
    Path config = Cli.config(dir, h);
    Cli.Result created =
        Cli.run(
            "queue",
            "create",
            "paid_events",
            "--config",
            config.toString(),
            "--column",
            "order_id BIGINT NOT NULL",
            "--dedup");
    assertThat(created.code()).as(created.toString()).isZero();
    String sql = Files.readString(Path.of(created.out().strip()));
    assertThat(sql)
        .contains("`dedup_key` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL")
        .contains("UNIQUE KEY `sluice_dedup` (`dedup_key`)");

    Cli.Result migrated = Cli.run("migrate", "--config", config.toString());
    assertThat(migrated.code()).as(migrated.toString()).isZero();
    Cli.Result check = Cli.run("check", "--config", config.toString());
    assertThat(check.code()).as(check.toString()).isZero();
    assertThat(check.out()).contains("s1  paid_events  ok").doesNotContain("dedup_key");
    try (var ds = DataSources.pool("t", h.url(), h.db.user(), h.db.password(), 2)) {
      QueueCatalog.Discovered d =
          new QueueCatalog(ds)
              .discover().stream()
                  .filter(q -> q.table().equals("paid_events"))
                  .findFirst()
                  .orElseThrow();
      assertThat(d.valid()).as(String.valueOf(d.problem())).isTrue();
      assertThat(d.queue().userColumns()).containsExactly("order_id", "dedup_key");
      try (var c = ds.getConnection()) {
        var first = EventProducer.insertUnique(c, "paid_events", "o-1", Map.of("order_id", 1));
        var again = EventProducer.insertUnique(c, "paid_events", "o-1", Map.of("order_id", 1));
        assertThat(again).isEqualTo(new InsertOutcome(first.id(), true));
      }
    }
    // Without its UNIQUE index the column would not deduplicate: check warns, with the fix.
    h.exec("ALTER TABLE paid_events DROP INDEX sluice_dedup");
    Cli.Result warned = Cli.run("check", "--config", config.toString());
    assertThat(warned.code()).as(warned.toString()).isZero();
    assertThat(warned.out())
        .contains("paid_events  warning: dedup_key: has no UNIQUE index")
        .contains("ADD UNIQUE KEY `sluice_dedup` (`dedup_key`)");

    Cli.Result twice =
        Cli.run(
            "queue",
            "create",
            "twice",
            "--migrations",
            dir.resolve("twice").toString(),
            "--column",
            "dedup_key VARCHAR(64) NULL",
            "--dedup");
    assertThat(twice.code()).isEqualTo(2);
    assertThat(twice.err()).contains("--dedup adds it");
  }

  @Test
  void groupedAndCompletesGroupsAddTheGroupColumnsAndCheckAcceptsThem() throws Exception {
    // A database of its own: the other tests' migrations (V1, V2) are in the shared one.
    Harness own = new Harness(QueueCreateCommandTest.class);
    try {
      groupQueues(own);
    } finally {
      own.close();
    }
  }

  private void groupQueues(Harness h) throws Exception {
    Path config = Cli.config(dir, h);
    Cli.Result children =
        Cli.run(
            "queue",
            "create",
            "file_chunks",
            "--config",
            config.toString(),
            "--column",
            "chunk INT NOT NULL",
            "--grouped");
    assertThat(children.code()).as(children.toString()).isZero();
    assertThat(Files.readString(Path.of(children.out().strip())))
        .contains("`group_key` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL")
        .contains("KEY `sluice_group` (`group_key`)")
        .doesNotContain("completes_group");
    Cli.Result done =
        Cli.run(
            "queue",
            "create",
            "file_done",
            "--config",
            config.toString(),
            "--completes-groups",
            "--option",
            "group_on_dead=fail_fast");
    assertThat(done.code()).as(done.toString()).isZero();
    assertThat(Files.readString(Path.of(done.out().strip())))
        .contains("`completes_group` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL")
        .contains("COMMENT='sluice_queue group_on_dead=fail_fast'")
        .doesNotContain("`group_key`");

    Cli.Result migrated = Cli.run("migrate", "--config", config.toString());
    assertThat(migrated.code()).as(migrated.toString()).isZero();
    Cli.Result check = Cli.run("check", "--config", config.toString());
    assertThat(check.code()).as(check.toString()).isZero();
    assertThat(check.out())
        .containsPattern("s1  file_chunks +ok")
        .containsPattern("s1  file_done +ok");
    try (var ds = DataSources.pool("t", h.url(), h.db.user(), h.db.password(), 2)) {
      Map<String, QueueCatalog.Discovered> found = new java.util.HashMap<>();
      new QueueCatalog(ds).discover().forEach(x -> found.put(x.table(), x));
      assertThat(found.get("file_chunks").valid()).isTrue();
      assertThat(found.get("file_chunks").queue().hasGroupKey()).isTrue();
      assertThat(found.get("file_done").valid()).isTrue();
      assertThat(found.get("file_done").queue().completesGroups()).isTrue();
      assertThat(found.get("file_done").queue().options().groupFailFast()).isTrue();
      try (var c = ds.getConnection()) {
        long id = EventProducer.insertInGroup(c, "file_chunks", "f-1", Map.of("chunk", 1));
        long last = EventProducer.insertGroupCompletion(c, "file_done", "f-1", Map.of());
        assertThat(id).isPositive();
        assertThat(last).isPositive();
      }
    }

    Path r = dir.resolve("refused");
    for (String[] args :
        List.of(
            new String[] {
              "queue",
              "create",
              "q",
              "--migrations",
              r.toString(),
              "--grouped",
              "--column",
              "group_key VARCHAR(10) NULL"
            },
            new String[] {
              "queue",
              "create",
              "q",
              "--migrations",
              r.toString(),
              "--completes-groups",
              "--column",
              "completes_group VARCHAR(10) NULL"
            },
            new String[] {
              "queue",
              "create",
              "q",
              "--migrations",
              r.toString(),
              "--completes-groups",
              "--ordered"
            },
            new String[] {
              "queue",
              "create",
              "q",
              "--migrations",
              r.toString(),
              "--completes-groups",
              "--option",
              "ordering=queue"
            },
            new String[] {
              "queue",
              "create",
              "q",
              "--migrations",
              r.toString(),
              "--grouped",
              "--ordered",
              "--ordering-column",
              "group_key"
            })) {
      Cli.Result refused = Cli.run(args);
      assertThat(refused.code()).as(refused.toString()).isEqualTo(2);
      assertThat(refused.err())
          .as(refused.toString())
          .containsAnyOf("--grouped", "--completes-groups");
    }
    assertThat(Cli.files(r)).isEmpty();
  }

  @Test
  void numbersPastTheHighestVersionInTheDirectory() throws Exception {
    Path m = dir.resolve("sql");
    Files.createDirectories(m);
    Files.writeString(m.resolve("V1__init.sql"), "SELECT 1;");
    Files.writeString(m.resolve("V3_1__more.sql"), "SELECT 1;");
    Files.writeString(m.resolve("R__view.sql"), "SELECT 1;");
    Cli.Result r = Cli.run("queue", "create", "later_q", "--migrations", m.toString());
    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(Cli.files(m))
        .containsExactly("R__view.sql", "V1__init.sql", "V3_1__more.sql", "V4__create_later_q.sql");
  }

  @Test
  void badInputIsRefusedWithExit2AndNothingWritten() {
    Path m = dir.resolve("refused");
    String d = m.toString();
    List<String[]> refusals = new ArrayList<>();
    refusals.add(new String[] {"queue", "create", "9lives", "--migrations", d});
    refusals.add(new String[] {"queue", "create", "bad-name", "--migrations", d});
    refusals.add(new String[] {"queue", "create", "sluice_lease", "--migrations", d});
    refusals.add(
        new String[] {"queue", "create", "q", "--migrations", d, "--option", "ack_wayt=1s"});
    refusals.add(
        new String[] {"queue", "create", "q", "--migrations", d, "--option", "ack_wait=soon"});
    refusals.add(
        new String[] {"queue", "create", "q", "--migrations", d, "--option", "max_attempts"});
    refusals.add(
        new String[] {
          "queue",
          "create",
          "q",
          "--migrations",
          d,
          "--option",
          "min_backoff=1m",
          "--option",
          "max_backoff=1s"
        });
    refusals.add(new String[] {"queue", "create", "q", "--migrations", d, "--column", "state INT"});
    refusals.add(new String[] {"queue", "create", "q", "--migrations", d, "--column", "order_id"});
    refusals.add(
        new String[] {
          "queue", "create", "q", "--migrations", d, "--column", "a INT; DROP TABLE x"
        });
    refusals.add(
        new String[] {
          "queue", "create", "q", "--migrations", d, "--column", "a INT", "--column", "A BIGINT"
        });
    refusals.add(
        new String[] {
          "queue", "create", "q", "--migrations", d, "--column", "a INT", "--shard-key", "b"
        });
    refusals.add(new String[] {"queue", "create", "--migrations", d});
    refusals.add(new String[] {"queue", "create", "q", "--nope"});
    refusals.add(
        new String[] {"queue", "create", "q", "--config", dir.resolve("no.yaml").toString()});
    for (String[] args : refusals) {
      Cli.Result r = Cli.run(args);
      assertThat(r.code()).as(String.join(" ", args) + "\n" + r).isEqualTo(2);
      assertThat(r.err()).as(String.join(" ", args)).isNotBlank();
      assertThat(r.out()).as(String.join(" ", args)).isEmpty();
    }
    assertThat(Cli.files(m)).isEmpty();

    Cli.Result unknown =
        Cli.run("queue", "create", "q", "--migrations", d, "--option", "ack_wayt=1s");
    assertThat(unknown.err()).contains("unknown option 'ack_wayt'").contains("ack_wait");
    Cli.Result bad =
        Cli.run("queue", "create", "q", "--migrations", d, "--option", "ack_wait=soon");
    assertThat(bad.err()).contains("'soon' is not a duration");
    Cli.Result system = Cli.run("queue", "create", "q", "--migrations", d, "--column", "state INT");
    assertThat(system.err()).contains("state").contains("system column");

    // The same queue twice: the second is refused, naming the first migration.
    assertThat(Cli.run("queue", "create", "q", "--migrations", d).code()).isZero();
    Cli.Result again = Cli.run("queue", "create", "q", "--migrations", d);
    assertThat(again.code()).isEqualTo(2);
    assertThat(again.err()).contains("V1__create_q.sql");
    assertThat(Cli.files(m)).containsExactly("V1__create_q.sql");
  }

  @Test
  void everyCommandHasHelpAndTheOptionListIsComplete() {
    List<String> paths = new ArrayList<>();
    collect(SluiceCli.commandLine(), List.of(), paths);
    assertThat(paths)
        .contains(
            "queue create",
            "queue alter",
            "queue list",
            "queue stats",
            "queue pause",
            "queue resume",
            "dead list",
            "dead replay",
            "dead purge",
            "ordering halted",
            "ordering skip",
            "group show",
            "group list",
            "cancel",
            "migrate",
            "check",
            "serve");
    for (String p : paths) {
      List<String> args = new ArrayList<>(List.of(p.split(" ")));
      args.add("--help");
      Cli.Result r = Cli.run(args.toArray(String[]::new));
      assertThat(r.code()).as(p).isZero();
      assertThat(r.out()).as(p).contains("Usage: sluice " + p).doesNotContain("null is read");
    }
    assertThat(QueueOptionsHelp.KNOWN).isEqualTo(String.join(", ", QueueOptions.NAMES) + ".");
    Cli.Result none = Cli.run();
    assertThat(none.code()).isEqualTo(2);
    assertThat(none.err()).contains("Usage: sluice");
  }

  private static void collect(CommandLine cl, List<String> prefix, List<String> out) {
    for (var e : cl.getSubcommands().entrySet()) {
      if (e.getKey().equals("help")) {
        continue;
      }
      List<String> path = new ArrayList<>(prefix);
      path.add(e.getKey());
      out.add(String.join(" ", path));
      collect(e.getValue(), path, out);
    }
  }
}
