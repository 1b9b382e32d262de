package dev.sluice.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;

/**
 * Lets the server digest a workload's set-up before the measured part begins: InnoDB writes the
 * pages a bulk load dirtied (and so moves its checkpoint) now, not in the middle of the
 * measurement.
 *
 * <p>Why: a 200,000-row backlog inserted in a few seconds leaves ~1,500 dirty pages and ~25 MB of
 * redo to checkpoint. With the server's defaults ({@code innodb_max_dirty_pages_pct_lwm=0}, {@code
 * innodb_io_capacity=200}) an idle InnoDB does not write them; the fire and ack UPDATEs that follow
 * push the checkpoint age up and set off the flushing during the measured seconds. That is the cost
 * of the set-up's bulk load, not of the workload measured; a phase without a bulk load has nothing
 * to flush, so every phase settles the same way.
 *
 * <p>How: {@code SET GLOBAL innodb_max_dirty_pages_pct = 0} (the page cleaner then writes every
 * dirty page), wait until at most {@link #SETTLED_PAGES} are dirty or {@code maxSeconds} passed,
 * and put the old value back. A server where the SET is refused (no privilege) is only waited for.
 */
final class ServerSettle {
  /** Dirty pages left when the server counts as settled. */
  static final long SETTLED_PAGES = 50;

  private ServerSettle() {}

  /** Flushes and waits; notes what it did under {@code label}. */
  static void settle(BenchServer server, String label, double maxSeconds) throws SQLException {
    try (Connection c = server.connectServer();
        Statement s = c.createStatement()) {
      long before = dirtyPages(s);
      if (before <= SETTLED_PAGES) {
        return;
      }
      long t0 = System.nanoTime();
      String old = BenchServer.global(s, "innodb_max_dirty_pages_pct");
      boolean forced = false;
      try {
        BenchServer.setGlobal(s, "innodb_max_dirty_pages_pct", "0");
        forced = true;
      } catch (SQLException refused) {
        Progress.note(label + ": cannot ask the server to flush (" + refused.getMessage() + ")");
      }
      long dirty = before;
      try {
        long deadline = t0 + (long) (maxSeconds * 1e9);
        while (dirty > SETTLED_PAGES && System.nanoTime() < deadline) {
          Thread.sleep(100);
          dirty = dirtyPages(s);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        if (forced) {
          BenchServer.setGlobal(s, "innodb_max_dirty_pages_pct", old);
        }
      }
      Progress.note(
          String.format(
              Locale.ROOT,
              "%s: the server wrote the set-up's dirty pages before the manager started: %,d ->"
                  + " %,d in %.1f s",
              label,
              before,
              dirty,
              (System.nanoTime() - t0) / 1e9));
    }
  }

  private static long dirtyPages(Statement s) throws SQLException {
    try (ResultSet rs =
        s.executeQuery("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'")) {
      return rs.next() ? rs.getLong(2) : 0;
    }
  }
}
