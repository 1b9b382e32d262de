package dev.sluice.core.queue.write;

import dev.sluice.db.store.FencedOffException;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;
import java.util.Locale;

/**
 * Tells a failed write that may concern some of its rows (a trigger that refuses one, a constraint,
 * a lock held too long, a deadlock) from one that concerns the database as a whole (the connection
 * lost or none to be had, the server read-only, the lease another's). The first is worth splitting
 * the batch to find the row; the second is retried whole, and never makes a row dead.
 *
 * <p>Stateless.
 */
final class WriteFaults {
  private WriteFaults() {}

  /** Whether {@code e} may be caused by some rows of the statement rather than the database. */
  static boolean mayConcernRows(Throwable e) {
    if (e instanceof FencedOffException) {
      return false;
    }
    boolean sql = false;
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof FencedOffException
          || t instanceof SQLTransientConnectionException
          || t instanceof SQLRecoverableException
          || t instanceof java.sql.SQLNonTransientConnectionException) {
        return false;
      }
      if (t instanceof SQLException s) {
        sql = true;
        String state = s.getSQLState();
        if (state != null && state.startsWith("08")) {
          return false; // connection exception
        }
        if (state == null && s.getErrorCode() == 0) {
          // Not the server's answer (which always has a state): the pool's or driver's own, such
          // as HikariCP's "Connection is closed" when the server restarted under a statement.
          return false;
        }
        String msg = String.valueOf(s.getMessage()).toLowerCase(Locale.ROOT);
        if (s.getErrorCode() == 1290 || s.getErrorCode() == 1836 || msg.contains("read-only")) {
          return false; // the server is read-only: every write fails alike
        }
      }
    }
    return sql; // no SQLException at all: not the database's answer about a row
  }

  /** The database's own words for {@code e} (the innermost message), for a dead reason. */
  static String message(Throwable e) {
    Throwable last = e;
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof SQLException) {
        last = t;
      }
    }
    return String.valueOf(last.getMessage());
  }
}
