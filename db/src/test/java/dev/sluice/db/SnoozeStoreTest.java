package dev.sluice.db;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.client.EventProducer;
import dev.sluice.client.QueueColumns;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.JdbcEventStore;
import dev.sluice.db.store.Release;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A snooze in the store: fired → pending at a later time with the epoch kept (so a late answer to
 * the snoozed attempt is stale and the next fire is a new epoch) and {@code snoozes} counted up;
 * attempts are {@code epoch - snoozes}; past {@code max_snoozes}, or on a table without the column,
 * it is the failed attempt it carries.
 */
class SnoozeStoreTest {
  static TestDatabase db;
  static HikariDataSource ds;
  static int n;

  @BeforeAll
  static void setUp() {
    db = TestDatabases.fresh(SnoozeStoreTest.class);
    ds = DataSources.pool("test", db.url(), db.user(), db.password(), 4);
  }

  @AfterAll
  static void tearDown() {
    ds.close();
  }

  record Queue(String table, JdbcEventStore store) {
    long insert() throws Exception {
      try (Connection c = ds.getConnection()) {
        return EventProducer.insert(c, table, Map.of("body", "x"));
      }
    }

    long now() {
      return store.serverTimeNs();
    }

    long column(String col, long id) throws Exception {
      try (Connection c = ds.getConnection();
          var st = c.createStatement();
          var rs = st.executeQuery("SELECT `" + col + "` FROM " + table + " WHERE id = " + id)) {
        assertThat(rs.next()).isTrue();
        return rs.getLong(1);
      }
    }

    /** Fires attempt {@code epoch + 1} of {@code id}; its ref. */
    EventRef fire(long id, long epoch) {
      store.fire(List.of(new EventRef(id, epoch)), now() + 30_000_000_000L);
      return new EventRef(id, epoch + 1);
    }
  }

  static Queue queue(boolean withSnoozes, String options) throws Exception {
    String table = "snooze_q" + (++n);
    List<String> cols = new ArrayList<>(List.of("body VARCHAR(100) NULL"));
    if (withSnoozes) {
      cols.add(QueueColumns.SNOOZES_DEFINITION);
    }
    db.exec(QueueConvention.createTableSql(table, cols, "sluice_queue " + options));
    QueueTable q =
        new QueueCatalog(ds)
            .inspect(new QueueCatalog.Candidate(table, "sluice_queue " + options))
            .queue();
    assertThat(q.hasSnoozes()).isEqualTo(withSnoozes);
    return new Queue(table, new JdbcEventStore(ds, q));
  }

  /** The release a snooze of {@code ref} is, judged dead by its epoch alone as RetryPolicy does. */
  static Release snooze(EventRef ref, long at, int maxAttempts) {
    return new Release(
            ref, at, QueueOptions.isLastAttempt(ref.epoch(), maxAttempts), "max_attempts reached")
        .asSnooze();
  }

  @Test
  void aSnoozeSpendsNoAttemptAndALateAnswerToItIsStale() throws Exception {
    Queue q = queue(true, "max_attempts=2");
    long id = q.insert();
    EventRef first = q.fire(id, 0);
    long later = q.now() + 5_000_000_000L;
    assertThat(q.store().release(List.of(snooze(first, later, 2))))
        .containsEntry(first, CasOutcome.APPLIED);
    assertThat(q.column("state", id)).isEqualTo(0);
    assertThat(q.column("epoch", id)).as("the epoch is kept").isEqualTo(1);
    assertThat(q.column("snoozes", id)).isEqualTo(1);
    assertThat(q.column("time_next", id)).isEqualTo(later);

    assertThat(q.store().ack(List.of(first), q.now()))
        .as("a late ack of the snoozed attempt")
        .containsEntry(first, CasOutcome.STALE);
    assertThat(q.column("state", id)).isEqualTo(0);

    // Snoozed again at its second delivery (epoch 2): with max_attempts=2 the epoch alone says
    // "last attempt", but only one attempt was spent.
    EventRef second = q.fire(id, 1);
    assertThat(q.store().release(List.of(snooze(second, later, 2))))
        .containsEntry(second, CasOutcome.APPLIED);
    EventRef third = q.fire(id, 2);
    assertThat(third.epoch()).isEqualTo(3);
    assertThat(q.column("snoozes", id)).isEqualTo(2);
    // A real failure now: attempt 1 of 2 (epoch 3 - 2 snoozes), not dead although the epoch (3)
    // alone would not say so either; the next one (epoch 4 - 2 = 2) is the last.
    assertThat(q.store().release(List.of(new Release(third, later, false))))
        .containsEntry(third, CasOutcome.APPLIED);
    EventRef fourth = q.fire(id, 3);
    assertThat(
            q.store()
                .release(
                    List.of(
                        new Release(
                            fourth, later, QueueOptions.isLastAttempt(4, 2), "attempts used"))))
        .containsEntry(fourth, CasOutcome.APPLIED);
    assertThat(q.column("state", id)).as("4 - 2 = 2 attempts of 2: dead").isEqualTo(3);
  }

  @Test
  void aFailureJudgedDeadByItsEpochLivesOnWhenSnoozesLeaveItAttempts() throws Exception {
    Queue q = queue(true, "max_attempts=2");
    long id = q.insert();
    EventRef a = q.fire(id, 0);
    q.store().release(List.of(snooze(a, q.now(), 2)));
    EventRef b = q.fire(id, 1); // epoch 2, one snooze: attempt 1
    assertThat(q.store().release(List.of(new Release(b, q.now() + 1000, true, "nack: boom"))))
        .containsEntry(b, CasOutcome.APPLIED);
    assertThat(q.column("state", id)).as("pending: one attempt of two spent").isEqualTo(0);
    assertThat(q.store().counts().dead()).isZero();
  }

  @Test
  void pastMaxSnoozesASnoozeIsTheFailedAttemptItCarries() throws Exception {
    Queue q = queue(true, "max_attempts=3 max_snoozes=1");
    long id = q.insert();
    EventRef a = q.fire(id, 0);
    long at = q.now() + 1_000_000L;
    q.store().release(List.of(snooze(a, at, 3)));
    assertThat(q.column("snoozes", id)).isEqualTo(1);
    EventRef b = q.fire(id, 1);
    assertThat(q.store().release(List.of(snooze(b, at, 3))))
        .as("applied as a failed attempt")
        .containsEntry(b, CasOutcome.APPLIED);
    assertThat(q.column("snoozes", id)).as("not counted: max_snoozes=1").isEqualTo(1);
    assertThat(q.column("state", id)).isEqualTo(0);
    assertThat(q.column("epoch", id)).isEqualTo(2);
  }

  @Test
  void withoutTheColumnASnoozeSpendsAnAttempt() throws Exception {
    Queue q = queue(false, "max_attempts=1");
    long id = q.insert();
    EventRef a = q.fire(id, 0);
    assertThat(q.store().release(List.of(snooze(a, q.now(), 1))))
        .containsEntry(a, CasOutcome.APPLIED);
    assertThat(q.column("state", id))
        .as("max_attempts=1: the snooze was the last attempt")
        .isEqualTo(3);
  }

  @Test
  void aStaleSnoozeChangesNothing() throws Exception {
    Queue q = queue(true, "");
    long id = q.insert();
    EventRef a = q.fire(id, 0);
    q.store().ack(List.of(a), q.now());
    assertThat(q.store().release(List.of(snooze(a, q.now(), 20))))
        .containsEntry(a, CasOutcome.STALE);
    assertThat(q.column("state", id)).isEqualTo(2);
    assertThat(q.column("snoozes", id)).isZero();
  }
}
