package dev.sluice.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.client.EventProducer;
import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.client.QueueColumns;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The producer's side of event groups on the real database: {@link EventProducer#insertInGroup} and
 * {@link EventProducer#insertGroupCompletion} write the key into {@code group_key} / {@code
 * completes_group} in the caller's transaction (a rollback takes them back), refuse a bad key
 * before any statement, and name the missing column of a queue without it.
 */
class GroupInsertTest {
  static TestDatabase db;
  static HikariDataSource ds;

  @BeforeAll
  static void setUp() throws Exception {
    db = TestDatabases.fresh(GroupInsertTest.class);
    ds = DataSources.pool("test", db.url(), db.user(), db.password(), 4);
    db.exec(
        QueueConvention.createTableSql(
            "chunks",
            List.of(
                "body VARCHAR(100) NULL",
                QueueColumns.GROUP_KEY_DEFINITION,
                QueueColumns.GROUP_INDEX_DEFINITION),
            "sluice_queue"));
    db.exec(
        QueueConvention.createTableSql(
            "chunks_done",
            List.of("body VARCHAR(100) NULL", QueueColumns.COMPLETES_GROUP_DEFINITION),
            "sluice_queue"));
    db.exec(
        QueueConvention.createTableSql("plain", List.of("body VARCHAR(100) NULL"), "sluice_queue"));
  }

  @AfterAll
  static void tearDown() {
    ds.close();
  }

  static String column(String table, String column, long id) throws Exception {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet r =
            s.executeQuery("SELECT `" + column + "` FROM `" + table + "` WHERE id = " + id)) {
      return r.next() ? r.getString(1) : "(no row)";
    }
  }

  @Test
  void childrenAndTheCompletionEventCommitOrRollBackWithTheCallersTransaction() throws Exception {
    long child;
    long completion;
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      long undone = EventProducer.insertInGroup(c, "chunks", "file-0", Map.of("body", "x"));
      long undoneDone =
          EventProducer.insertGroupCompletion(c, "chunks_done", "file-0", Map.of("body", "x"));
      c.rollback();
      assertThat(column("chunks", "group_key", undone)).isEqualTo("(no row)");
      assertThat(column("chunks_done", "completes_group", undoneDone)).isEqualTo("(no row)");

      child = EventProducer.insertInGroup(c, "chunks", "file-1", Map.of("body", "part 1"));
      long second =
          EventProducer.insertInGroup(
              c,
              "chunks",
              "file-1",
              Map.of("body", "part 2", "group_key", "file-1"),
              EventOptions.builder().tenant("acme").build());
      completion =
          EventProducer.insertGroupCompletion(c, "chunks_done", "file-1", Map.of("body", "all"));
      // Not visible to another connection before the caller commits.
      assertThat(column("chunks", "group_key", child)).isEqualTo("(no row)");
      c.commit();
      assertThat(column("chunks", "group_key", second)).isEqualTo("file-1");
      assertThat(column("chunks", "tenant", second)).isEqualTo("acme");
    }
    assertThat(column("chunks", "group_key", child)).isEqualTo("file-1");
    assertThat(column("chunks", "body", child)).isEqualTo("part 1");
    assertThat(column("chunks_done", "completes_group", completion)).isEqualTo("file-1");

    // The longest key (191 characters, as the database counts them: code points) fits exactly.
    String longest = "\uD83D\uDCE6".repeat(QueueColumns.GROUP_KEY_MAX_CHARS);
    try (Connection c = ds.getConnection()) {
      long id = EventProducer.insertInGroup(c, "chunks", longest, Map.of());
      assertThat(column("chunks", "group_key", id)).isEqualTo(longest);
    }
  }

  @Test
  void aBadKeyOrAMismatchedColumnIsRefusedBeforeAnyStatement() throws Exception {
    try (Connection c = ds.getConnection()) {
      for (String bad : new String[] {null, "", "k".repeat(QueueColumns.GROUP_KEY_MAX_CHARS + 1)}) {
        assertThatThrownBy(() -> EventProducer.insertInGroup(c, "chunks", bad, Map.of()))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("queue chunks")
            .hasMessageContaining("a group key must be 1 to 191 characters");
        assertThatThrownBy(
                () -> EventProducer.insertGroupCompletion(c, "chunks_done", bad, Map.of()))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("queue chunks_done");
      }
      assertThatThrownBy(
              () -> EventProducer.insertInGroup(c, "chunks", "k".repeat(192), Map.of("body", "x")))
          .hasMessageContaining("'" + "k".repeat(40) + "...' (192 characters)");
      assertThatThrownBy(
              () ->
                  EventProducer.insertInGroup(c, "chunks", "file-2", Map.of("group_key", "file-3")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("column group_key is 'file-3' but the group key given is 'file-2'");
      assertThatThrownBy(
              () ->
                  EventProducer.insertGroupCompletion(
                      c, "chunks_done", "file-2", Map.of("completes_group", "file-3")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("column completes_group is 'file-3'");
      assertThatThrownBy(() -> EventProducer.insertInGroup(c, "bad name", "k", Map.of()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("queue name");
    }
  }

  @Test
  void aQueueWithoutTheColumnIsNamedAndTheTransactionGoesOn() throws Exception {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThatThrownBy(() -> EventProducer.insertInGroup(c, "plain", "g", Map.of()))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("queue plain has no group_key column")
          .hasMessageContaining("--grouped");
      assertThatThrownBy(() -> EventProducer.insertGroupCompletion(c, "plain", "g", Map.of()))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("queue plain has no completes_group column")
          .hasMessageContaining("--completes-groups");
      long id = EventProducer.insert(c, "plain", Map.of("body", "after"));
      c.commit();
      assertThat(column("plain", "body", id)).isEqualTo("after");
    }
  }
}
