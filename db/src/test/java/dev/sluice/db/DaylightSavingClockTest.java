package dev.sluice.db;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The database clock ({@link QueueConvention#NOW_NS_SQL}, and the {@code time_next} and {@code
 * time_created} defaults written with it) in a session whose time zone has daylight saving, during
 * the autumn hour that happens twice: 2026-10-25 02:00–03:00 in Berlin is 00:00–01:00 UTC (CEST)
 * and again 01:00–02:00 UTC (CET). A clock that reads local time and converts it back cannot tell
 * the two apart, and is an hour off in one of them; the clock must give the instant in both.
 *
 * <p>{@code SET timestamp} places the session's clock in that hour. The embedded servers may lack
 * the named-zone tables; then the few rows Berlin needs around that change are loaded (the
 * transitions of 2025 to 2027, as in the tz database).
 */
class DaylightSavingClockTest {
  /** 2026-10-25 00:30 UTC, 02:30 CEST (the first 02:30), and 01:30 UTC, 02:30 CET (the second). */
  static final long FIRST = 1_792_888_200L;

  static final long SECOND = 1_792_891_800L;

  static TestDatabase db;

  @BeforeAll
  static void setUp() throws Exception {
    db = TestDatabases.fresh(DaylightSavingClockTest.class);
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      ensureBerlin(s);
    }
  }

  @Test
  void theClockReadsTheInstantInBothRepeatedHoursOfAZoneWithDaylightSaving() throws Exception {
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute("SET time_zone = 'Europe/Berlin'");
      for (long at : List.of(FIRST, SECOND)) {
        s.execute("SET timestamp = " + at);
        assertThat(one(s, "SELECT DATE_FORMAT(NOW(), '%H:%i')"))
            .as("local time in Berlin")
            .isEqualTo("02:30");
        assertThat(Long.parseLong(one(s, "SELECT " + QueueConvention.NOW_NS_SQL)))
            .as("the clock at %d s (UTC), in a session in Europe/Berlin", at)
            .isEqualTo(at * 1_000_000_000L);
      }
    }
  }

  @Test
  void theColumnDefaultsAreTheInstantInBothRepeatedHours() throws Exception {
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute(
          QueueConvention.createTableSql(
              "dst_q", List.of("`n` BIGINT NULL"), "sluice_queue ack_wait=5s"));
      s.execute("SET time_zone = 'Europe/Berlin'");
      for (long at : List.of(FIRST, SECOND)) {
        s.execute("SET timestamp = " + at);
        s.execute("INSERT INTO dst_q (n) VALUES (" + at + ")"); // as an application inserts
        assertThat(Long.parseLong(one(s, "SELECT time_next FROM dst_q WHERE n = " + at)))
            .as("time_next of a row inserted at %d s (UTC) in Europe/Berlin", at)
            .isEqualTo(at * 1_000_000_000L);
        assertThat(Long.parseLong(one(s, "SELECT time_created FROM dst_q WHERE n = " + at)))
            .as("time_created of a row inserted at %d s (UTC) in Europe/Berlin", at)
            .isEqualTo(at * 1_000_000_000L);
      }
    }
  }

  static String one(Statement s, String sql) throws SQLException {
    try (ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }

  /** Loads Europe/Berlin's changes of 2025–2027 when the server has no such zone. */
  static void ensureBerlin(Statement s) throws SQLException {
    try {
      s.execute("SET time_zone = 'Europe/Berlin'");
      s.execute("SET time_zone = DEFAULT");
      return;
    } catch (SQLException unknownZone) {
      // load it below
    }
    String known =
        one(s, "SELECT MAX(Time_zone_id) FROM mysql.time_zone_name WHERE Name = 'Europe/Berlin'");
    long id;
    if (known != null) { // loaded half before (the server outlived a failed run): again, whole
      id = Long.parseLong(known);
      s.execute("DELETE FROM mysql.time_zone_transition_type WHERE Time_zone_id = " + id);
      s.execute("DELETE FROM mysql.time_zone_transition WHERE Time_zone_id = " + id);
    } else {
      id = Long.parseLong(one(s, "SELECT COALESCE(MAX(Time_zone_id), 0) + 1 FROM mysql.time_zone"));
      s.execute(
          "INSERT INTO mysql.time_zone (Time_zone_id, Use_leap_seconds) VALUES (" + id + ", 'N')");
      s.execute(
          "INSERT INTO mysql.time_zone_name (Name, Time_zone_id) VALUES ('Europe/Berlin', "
              + id
              + ")");
    }
    s.execute(
        "INSERT INTO mysql.time_zone_transition_type"
            + " (Time_zone_id, Transition_type_id, `Offset`, Is_DST, Abbreviation) VALUES"
            + " ("
            + id
            + ", 0, 3600, 0, 'CET'), ("
            + id
            + ", 1, 7200, 1, 'CEST')");
    long[][] changes = {
      {1_743_296_400L, 1}, // 2025-03-30 01:00 UTC
      {1_761_440_400L, 0}, // 2025-10-26 01:00 UTC
      {1_774_746_000L, 1}, // 2026-03-29 01:00 UTC
      {1_792_890_000L, 0}, // 2026-10-25 01:00 UTC
      {1_806_195_600L, 1}, // 2027-03-28 01:00 UTC
      {1_824_944_400L, 0}, // 2027-10-31 01:00 UTC
    };
    for (long[] ch : changes) {
      s.execute(
          "INSERT INTO mysql.time_zone_transition"
              + " (Time_zone_id, Transition_time, Transition_type_id) VALUES ("
              + id
              + ", "
              + ch[0]
              + ", "
              + ch[1]
              + ")");
    }
  }
}
