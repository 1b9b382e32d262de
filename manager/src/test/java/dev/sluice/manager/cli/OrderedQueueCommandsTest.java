package dev.sluice.manager.cli;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.db.DataSources;
import dev.sluice.db.QueueCatalog;
import dev.sluice.db.QueueConvention;
import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.Event;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operator's side of ordered queues: {@code queue create --ordered} writes a table the manager
 * serves as ordered; {@code check} explains a wrong ordered setup with the statements that fix it;
 * {@code ordering halted|skip} list a key halted at a dead event and let it go on, over SQL and
 * through the manager's Admin API.
 */
class OrderedQueueCommandsTest {
  static Harness h;
  static Path base;
  static Path config;
  @TempDir Path dir;

  @BeforeAll
  static void start() throws Exception {
    h = new Harness(OrderedQueueCommandsTest.class);
    base = Files.createTempDirectory("sluice-ordered-cli");
    config = Cli.config(base, h);
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void queueCreateOrderedWritesATableServedAsOrdered() throws Exception {
    Path m = dir.resolve("m");
    String d = m.toString();
    Cli.Result byKey =
        Cli.run(
            "queue",
            "create",
            "by_key",
            "--migrations",
            d,
            "--ordered",
            "--option",
            "ordering_on_dead=halt");
    assertThat(byKey.code()).as(byKey.toString()).isZero();
    String sql = Files.readString(m.resolve("V1__create_by_key.sql"));
    assertThat(sql)
        .contains("`ordering_key` VARCHAR(255) NULL")
        .contains("KEY `sluice_ordering` (`ordering_key`, `state`, `id`)")
        .contains("COMMENT='sluice_queue ordering=key ordering_on_dead=halt'");

    Cli.Result byAccount =
        Cli.run(
            "queue",
            "create",
            "by_account",
            "--migrations",
            d,
            "--ordered=key",
            "--ordering-column",
            "Account_Id",
            "--column",
            "amount BIGINT NOT NULL");
    assertThat(byAccount.code()).as(byAccount.toString()).isZero();
    assertThat(Files.readString(m.resolve("V2__create_by_account.sql")))
        .contains("`account_id` VARCHAR(255) NULL")
        .contains("KEY `sluice_ordering` (`account_id`, `state`, `id`)")
        .contains("ordering=key ordering_column=account_id");

    // The key column may be the user's own definition: it is not added twice.
    Cli.Result ownColumn =
        Cli.run(
            "queue",
            "create",
            "by_order",
            "--migrations",
            d,
            "--ordered",
            "--ordering-column",
            "order_id",
            "--column",
            "order_id BIGINT NULL");
    assertThat(ownColumn.code()).as(ownColumn.toString()).isZero();
    assertThat(Files.readString(m.resolve("V3__create_by_order.sql")))
        .containsOnlyOnce("order_id BIGINT")
        .contains("KEY `sluice_ordering` (`order_id`, `state`, `id`)");

    Cli.Result oneKey = Cli.run("queue", "create", "one_key", "--migrations", d, "--ordered=queue");
    assertThat(oneKey.code()).as(oneKey.toString()).isZero();
    assertThat(Files.readString(m.resolve("V4__create_one_key.sql")))
        .contains("KEY `sluice_ordering` (`state`, `id`)")
        .contains("ordering=queue");

    // Applied, each table is one the manager serves as ordered, on its sluice_ordering index.
    Path cfg = Cli.config(dir, h);
    Files.createDirectories(dir.resolve("db"));
    Files.move(m, dir.resolve("db/migration"));
    Cli.Result migrated = Cli.run("migrate", "--config", cfg.toString());
    assertThat(migrated.code()).as(migrated.toString()).isZero();
    try (var ds = DataSources.pool("t", h.url(), h.db.user(), h.db.password(), 2)) {
      Map<String, QueueCatalog.Discovered> found = new HashMap<>();
      new QueueCatalog(ds).discover().forEach(x -> found.put(x.table(), x));
      for (String q : List.of("by_key", "by_account", "by_order", "one_key")) {
        QueueCatalog.Discovered x = found.get(q);
        assertThat(x.valid()).as(q + ": " + x.problem()).isTrue();
        assertThat(x.queue().options().ordered()).as(q).isTrue();
        assertThat(x.queue().orderingIndex()).as(q).isEqualTo(QueueConvention.ORDERING_INDEX);
      }
      assertThat(found.get("by_key").queue().options().haltOnDead()).isTrue();
      assertThat(found.get("by_account").queue().orderingColumn()).isEqualTo("account_id");
      assertThat(found.get("one_key").queue().options().orderedAsOneKey()).isTrue();
    }

    Path r = dir.resolve("refused");
    for (String[] args :
        List.of(
            new String[] {"queue", "create", "q", "--migrations", r.toString(), "--ordered=time"},
            new String[] {
              "queue", "create", "q", "--migrations", r.toString(), "--ordering-column", "k"
            },
            new String[] {
              "queue",
              "create",
              "q",
              "--migrations",
              r.toString(),
              "--ordered",
              "--option",
              "ordering=queue"
            },
            new String[] {
              "queue",
              "create",
              "q",
              "--migrations",
              r.toString(),
              "--ordered",
              "--ordering-column",
              "state"
            })) {
      Cli.Result refused = Cli.run(args);
      assertThat(refused.code()).as(String.join(" ", args) + "\n" + refused).isEqualTo(2);
    }
    assertThat(Cli.files(r)).isEmpty();
  }

  @Test
  void checkExplainsAWrongOrderedSetupWithTheAlterThatFixesIt() throws Exception {
    String comment = "sluice_queue ordering=key";
    h.exec(QueueConvention.createTableSql("no_key_column", List.of(), comment));
    h.exec(
        QueueConvention.createTableSql("text_key", List.of("`ordering_key` TEXT NULL"), comment));
    h.exec(
        QueueConvention.createTableSql(
            "no_key_index", List.of("`ordering_key` VARCHAR(64) NULL"), comment));

    Cli.Result check = Cli.run("check", "--config", config.toString());
    assertThat(check.code()).as(check.toString()).isEqualTo(CliException.FAILED);
    assertThat(check.out())
        .contains("s1  no_key_column  ordering=key: ordering_key: missing column")
        .contains(
            "fix: ALTER TABLE `no_key_column` ADD COLUMN `ordering_key` VARCHAR(255) NULL,"
                + " ADD INDEX `sluice_ordering` (`ordering_key`, `state`, `id`);")
        .contains(
            "s1  text_key  ordering=key: ordering_key: cannot be an ordering key: its type is")
        .contains("fix: ALTER TABLE `text_key` MODIFY `ordering_key` VARCHAR(255) NULL;")
        .contains(
            "s1  no_key_index  ordering=key: sluice_ordering: no index on (ordering_key, state)")
        .contains(
            "fix: ALTER TABLE `no_key_index` ADD INDEX `sluice_ordering` (`ordering_key`,"
                + " `state`, `id`);");

    // The printed statements, run in order, are the whole fix.
    List<String> fixes = new ArrayList<>();
    for (String line : check.out().split("\n")) {
      if (line.strip().startsWith("fix: ALTER TABLE `no_key")
          || (line.strip().startsWith("fix: ") && line.contains("`text_key`"))) {
        fixes.add(line.strip().substring("fix: ".length()));
      }
    }
    assertThat(fixes).hasSize(4);
    for (String f : fixes) {
      h.exec(f);
    }
    Cli.Result again = Cli.run("check", "--config", config.toString());
    assertThat(again.out())
        .contains("s1  no_key_column  ok")
        .contains("s1  text_key  ok")
        .contains("s1  no_key_index  ok");
  }

  @Test
  void haltedKeysAreListedAndSkippingTheDeadEventLetsTheKeyGoOn() throws Exception {
    h.exec(
        QueueConvention.createTableSql(
            "halting",
            List.of(
                "`ordering_key` VARCHAR(255) NULL",
                "KEY `sluice_ordering` (`ordering_key`, `state`, `id`)"),
            "sluice_queue ordering=key ordering_on_dead=halt max_attempts=1 min_backoff=0s"));
    h.exec(
        "INSERT INTO halting (ordering_key) VALUES ('acct-7'), ('acct-7'), ('acct-7'), ('acct-9')");
    long first = h.queryLong("SELECT MIN(id) FROM halting WHERE ordering_key = 'acct-7'");
    h.startManager();
    try {
      String manager = "localhost:" + h.server().port();
      RawReceiver r = h.rawReceiver("halting", "w1", 8);
      Map<String, Event> got = new HashMap<>();
      for (int i = 0; i < 2; i++) {
        Event e = r.events.poll(20, SECONDS);
        assertThat(e).as("acct-7's first event and acct-9's").isNotNull();
        got.put(e.getColumnsMap().get("ordering_key").getStringValue(), e);
      }
      assertThat(got.get("acct-7").getId()).isEqualTo(first);
      r.ack(got.get("acct-9"));
      r.nack(got.get("acct-7"), 0, "ledger says no"); // max_attempts=1: dead, the key halts
      await()
          .atMost(20, SECONDS)
          .until(() -> h.queryLong("SELECT state FROM halting WHERE id = ?", first) == 3);

      Cli.Result halted = Cli.run("ordering", "halted", "halting", "--config", config.toString());
      assertThat(halted.code()).as(halted.toString()).isZero();
      assertThat(halted.out()).contains("acct-7").contains(String.valueOf(first));
      assertThat(halted.out().lines().filter(l -> l.contains("acct-7")).findFirst().orElseThrow())
          .matches(".*acct-7.*\\b" + first + "\\b.*\\b2\\b.*");
      Cli.Result viaApi = Cli.run("ordering", "halted", "halting", "--manager", manager, "--json");
      assertThat(viaApi.code()).as(viaApi.toString()).isZero();
      assertThat(viaApi.out())
          .contains("\"key\":\"acct-7\"")
          .contains("\"dead_id\":" + first)
          .contains("\"waiting\":2");
      assertThat(r.events.poll(1, SECONDS)).as("the key is halted").isNull();

      // Skip through the manager: the dead event is cancelled, the key's next event goes.
      Cli.Result skip =
          Cli.run("ordering", "skip", "halting", String.valueOf(first), "--manager", manager);
      assertThat(skip.code()).as(skip.toString()).isZero();
      assertThat(skip.out()).contains("skipped 1 dead events of halting");
      assertThat(h.queryLong("SELECT state FROM halting WHERE id = ?", first)).isEqualTo(4);
      Event second = r.events.poll(20, SECONDS);
      assertThat(second).as("the key's next event is delivered").isNotNull();
      assertThat(second.getId()).isEqualTo(first + 1);

      // It dies too; skipped over SQL this time, the third goes.
      r.nack(second, 0, "still no");
      await()
          .atMost(20, SECONDS)
          .until(() -> h.queryLong("SELECT state FROM halting WHERE id = ?", first + 1) == 3);
      Cli.Result again =
          Cli.run("ordering", "halted", "halting", "--config", config.toString(), "--json");
      assertThat(again.out()).contains("\"dead_id\":" + (first + 1)).contains("\"waiting\":1");
      Cli.Result sqlSkip =
          Cli.run(
              "ordering",
              "skip",
              "halting",
              String.valueOf(first + 1),
              "--config",
              config.toString());
      assertThat(sqlSkip.code()).as(sqlSkip.toString()).isZero();
      Event third = r.events.poll(20, SECONDS);
      assertThat(third).as("the key's third event is delivered").isNotNull();
      assertThat(third.getId()).isEqualTo(first + 2);
      r.ack(third);

      // Nothing halted now; an id that is not dead is reported and left alone (exit 1).
      Cli.Result none = Cli.run("ordering", "halted", "halting", "--config", config.toString());
      assertThat(none.code()).isZero();
      assertThat(none.err()).contains("queue halting has no halted keys");
      Cli.Result notDead =
          Cli.run(
              "ordering",
              "skip",
              "halting",
              String.valueOf(first + 2),
              "--config",
              config.toString());
      assertThat(notDead.code()).as(notDead.toString()).isEqualTo(CliException.FAILED);
      assertThat(notDead.err()).contains("id " + (first + 2) + ": not dead");
    } finally {
      h.stopManager();
    }
  }
}
