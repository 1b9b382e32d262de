package dev.sluice.manager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.client.EventProducer;
import dev.sluice.client.QueueColumns;
import dev.sluice.db.DataSources;
import dev.sluice.db.EventState;
import dev.sluice.db.QueueCatalog;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.QueueTable;
import dev.sluice.db.SluiceMigrations;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.JdbcGroupStore;
import dev.sluice.manager.Harness;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code sluice group show|list} on the real database: groups sealed and completed through the
 * group store (as the leader writes them), children in a grouped table. Show says a group's state,
 * completion event, times, the counts stored at completion and its children now; list gives the
 * open groups oldest first with their age; bad input exits 2.
 */
class GroupCommandsTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static Harness h;
  static String config;
  static long doneOld;
  static long doneNew;
  static long doneCompleted;

  @BeforeAll
  static void start() throws Exception {
    h = new Harness(GroupCommandsTest.class);
    Path base = Files.createTempDirectory("sluice-group-cli");
    config = Cli.config(base, h).toString();
    h.exec(
        QueueConvention.createTableSql(
            "chunks",
            List.of(
                "`body` VARCHAR(64) NULL",
                QueueColumns.GROUP_KEY_DEFINITION,
                QueueColumns.GROUP_INDEX_DEFINITION),
            "sluice_queue"));
    h.exec(
        QueueConvention.createTableSql(
            "chunks_done",
            List.of("`body` VARCHAR(64) NULL", QueueColumns.COMPLETES_GROUP_DEFINITION),
            "sluice_queue group_on_dead=fail_fast"));
    try (var ds = DataSources.pool("t", h.url(), h.db.user(), h.db.password(), 2)) {
      SluiceMigrations.migrateSluice(ds);
      try (Connection c = ds.getConnection()) {
        for (int i = 0; i < 3; i++) {
          EventProducer.insertInGroup(c, "chunks", "file-old", Map.of("body", "o" + i));
        }
        EventProducer.insertInGroup(c, "chunks", "file-new", Map.of("body", "n"));
        for (int i = 0; i < 2; i++) {
          EventProducer.insertInGroup(c, "chunks", "file-done", Map.of("body", "d" + i));
        }
        EventProducer.insertInGroup(c, "chunks", "file-loose", Map.of("body", "l"));
        doneOld = EventProducer.insertGroupCompletion(c, "chunks_done", "file-old", Map.of());
        doneNew = EventProducer.insertGroupCompletion(c, "chunks_done", "file-new", Map.of());
        doneCompleted =
            EventProducer.insertGroupCompletion(c, "chunks_done", "file-done", Map.of());
      }
      QueueTable done =
          new QueueCatalog(ds)
              .inspect(new QueueCatalog.Candidate("chunks_done", "sluice_queue"))
              .queue();
      JdbcGroupStore store = new JdbcGroupStore(ds);
      long now = GroupCommand.nowNs(ds);
      long minute = TimeUnit.MINUTES.toNanos(1);
      assertThat(store.seal(done, new EventRef(doneOld, 0), "file-old", true, now - 5 * minute))
          .isEqualTo(JdbcGroupStore.Sealed.SEALED);
      assertThat(store.seal(done, new EventRef(doneNew, 0), "file-new", true, now - minute))
          .isEqualTo(JdbcGroupStore.Sealed.SEALED);
      assertThat(
              store.seal(done, new EventRef(doneCompleted, 0), "file-done", true, now - 3 * minute))
          .isEqualTo(JdbcGroupStore.Sealed.SEALED);
      h.exec(
          "UPDATE chunks SET state = "
              + EventState.ACKED.code()
              + " WHERE group_key = 'file-done' AND body = 'd0'");
      h.exec(
          "UPDATE chunks SET state = "
              + EventState.DEAD.code()
              + " WHERE group_key = 'file-done' AND body = 'd1'");
      h.exec(
          "UPDATE chunks SET state = "
              + EventState.FIRED.code()
              + " WHERE group_key = 'file-old' AND body = 'o0'");
      assertThat(store.complete("file-done", now - 2 * minute)).isNotNull();
      // A child replayed after the group completed: the live counts differ from the stored ones.
      h.exec("UPDATE chunks SET state = 0 WHERE group_key = 'file-done' AND body = 'd1'");
    }
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void showSaysTheStateTheCompletionEventTheTimesAndTheChildren() throws Exception {
    Cli.Result sealed = Cli.run("group", "show", "file-old", "-c", config);
    assertThat(sealed.code()).as(sealed.toString()).isZero();
    assertThat(sealed.out())
        .contains("group file-old on shard s1: sealed, waiting for its children")
        .contains(
            "completion event: queue chunks_done, id " + doneOld + " (group_on_dead=fail_fast)")
        .containsPattern("sealed: +\\d{4}-\\d\\d-\\d\\dT.*Z \\(5m\\d+s ago\\)")
        .contains("children now: 2 pending, 1 fired, 0 acked, 0 dead, 0 cancelled (3 in all)")
        .doesNotContain("completed:");

    Cli.Result completed = Cli.run("group", "show", "file-done", "--shard", "s1", "-c", config);
    assertThat(completed.code()).as(completed.toString()).isZero();
    assertThat(completed.out())
        .contains("group file-done on shard s1: completed (its completion event was released)")
        .containsPattern("completed: .*\\(2m\\d+s ago\\)")
        .contains("children at completion: 1 acked, 1 dead, 0 cancelled")
        .contains("children now: 1 pending, 0 fired, 1 acked, 0 dead, 0 cancelled (2 in all)");

    Cli.Result loose = Cli.run("group", "show", "file-loose", "-c", config);
    assertThat(loose.code()).as(loose.toString()).isZero();
    assertThat(loose.out())
        .contains("group file-loose on shard s1: not sealed")
        .contains("children now: 1 pending")
        .doesNotContain("completion event:");

    JsonNode j = JSON.readTree(Cli.run("group", "show", "file-done", "-c", config, "--json").out());
    assertThat(j.get("group").asText()).isEqualTo("file-done");
    JsonNode s1 = j.get("shards").get(0);
    assertThat(s1.get("shard").asText()).isEqualTo("s1");
    assertThat(s1.get("state").asText()).isEqualTo("completed");
    assertThat(s1.get("completion_queue").asText()).isEqualTo("chunks_done");
    assertThat(s1.get("completion_id").asLong()).isEqualTo(doneCompleted);
    assertThat(s1.get("at_completion").get("dead").asLong()).isEqualTo(1);
    assertThat(s1.get("children").get("pending").asLong()).isEqualTo(1);
    assertThat(s1.get("children").get("total").asLong()).isEqualTo(2);
    JsonNode notSealed =
        JSON.readTree(Cli.run("group", "show", "file-loose", "-c", config, "--json").out());
    assertThat(notSealed.get("shards").get(0).get("state").asText()).isEqualTo("not_sealed");
  }

  @Test
  void listGivesTheOpenGroupsOldestFirstWithTheirAge() throws Exception {
    Cli.Result l = Cli.run("group", "list", "-c", config);
    assertThat(l.code()).as(l.toString()).isZero();
    List<String> lines = l.out().lines().toList();
    assertThat(lines.get(0))
        .containsSubsequence("SHARD", "GROUP", "COMPLETION_QUEUE", "COMPLETION_ID", "AGE");
    assertThat(lines).hasSize(3);
    assertThat(lines.get(1))
        .containsSubsequence("s1", "file-old", "chunks_done", String.valueOf(doneOld), "fail_fast")
        .containsPattern("5m\\d+s$");
    assertThat(lines.get(2)).contains("file-new").containsPattern("1m\\d+s$");
    assertThat(l.out()).doesNotContain("file-done").doesNotContain("file-loose");

    Cli.Result one = Cli.run("group", "list", "--limit", "1", "-c", config);
    assertThat(one.code()).as(one.toString()).isZero();
    assertThat(one.out()).contains("file-old").doesNotContain("file-new");
    assertThat(one.err()).contains("shard s1: the oldest 1 of 2 open groups");

    JsonNode j = JSON.readTree(Cli.run("group", "list", "-c", config, "--json").out());
    assertThat(j.get("open")).hasSize(2);
    assertThat(j.get("open").get(0).get("group").asText()).isEqualTo("file-old");
    assertThat(j.get("open").get(0).get("age_ms").asLong())
        .isBetween(TimeUnit.MINUTES.toMillis(5), TimeUnit.MINUTES.toMillis(10));
  }

  @Test
  void badInputExits2() {
    for (String[] args :
        List.of(
            new String[] {"group", "show", "nobody", "-c", config},
            new String[] {"group", "show", "", "-c", config},
            new String[] {"group", "show", "k".repeat(192), "-c", config},
            new String[] {"group", "show", "file-old", "--shard", "s9", "-c", config},
            new String[] {"group", "list", "--limit", "0", "-c", config},
            new String[] {"group"})) {
      Cli.Result r = Cli.run(args);
      assertThat(r.code()).as(r.toString()).isEqualTo(2);
      assertThat(r.out()).as(r.toString()).isEmpty();
    }
    Cli.Result none = Cli.run("group", "show", "nobody", "-c", config);
    assertThat(none.err()).contains("no group 'nobody' on any shard");
  }
}
