package dev.sluice.core.queue.write;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import org.jooq.exception.DataAccessException;
import org.junit.jupiter.api.Test;

/**
 * Which failed writes are worth splitting to find a row (and may end in a dead row), and which are
 * the database's as a whole (retried, never a dead row).
 */
class WriteFaultsTest {
  @Test
  void aConnectionThePoolClosedUnderTheStatementIsNotAboutARow() {
    // HikariCP's proxy after the server restarted: no SQLState, no vendor code.
    SQLException closed = new SQLException("Connection is closed");
    assertThat(WriteFaults.mayConcernRows(closed)).isFalse();
    assertThat(WriteFaults.mayConcernRows(new DataAccessException("fire failed", closed)))
        .isFalse();
  }

  @Test
  void theServersAnswerAboutARowIs() {
    assertThat(WriteFaults.mayConcernRows(new SQLException("refused by trigger", "45000", 1644)))
        .isTrue();
    assertThat(
            WriteFaults.mayConcernRows(
                new SQLIntegrityConstraintViolationException("duplicate", "23000", 1062)))
        .isTrue();
  }

  @Test
  void aLostConnectionOrAReadOnlyServerIsNot() {
    assertThat(WriteFaults.mayConcernRows(new SQLException("gone", "08S01", 0))).isFalse();
    assertThat(WriteFaults.mayConcernRows(new SQLException("read-only", "HY000", 1290))).isFalse();
  }
}
