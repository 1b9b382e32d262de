package dev.sluice.core.binlog;

import com.github.shyiko.mysql.binlog.event.TableMapEventData;
import com.github.shyiko.mysql.binlog.event.UpdateRowsEventData;
import com.github.shyiko.mysql.binlog.event.WriteRowsEventData;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.core.queue.poll.RowNews;
import dev.sluice.db.BinlogCatalog;
import dev.sluice.db.EventState;
import dev.sluice.db.QueueConvention;
import java.io.Serializable;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.function.LongSupplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one binlog connection's row events of the shard's queue tables and tells each queue's
 * poller of the pending rows in them ({@link RowNews}). Only the {@code state} and {@code
 * time_next} of a row's new image are read: a row that became pending (an insert, a retry, a
 * release) is news; the manager's own fires and acks are not. A row it cannot read (a column the
 * row image left out, a table it could not map) wakes the queue anyway: a needless read costs
 * little, a missed one a delay.
 *
 * <p>Thread: the follower's ({@code sluice-<shard>-binlog}) only; one instance per connection
 * (table ids are the server's and may change with a restart).
 */
final class BinlogRows {
  private static final Logger log = LoggerFactory.getLogger(BinlogRows.class);

  /** How a queue table's columns lie in its row images. */
  private record Target(
      String table, int idCol, int stateCol, int timeCol, List<String> enumNames) {
    boolean readable() {
      return stateCol >= 0 && timeCol >= 0;
    }
  }

  private final String shard;
  private final String schema;
  private final DataSource dataSource;
  private final Function<String, QueueManager> queues;
  private final LongSupplier nowNs;
  private final LongSupplier mono;
  private final Map<Long, Target> tables = new HashMap<>();

  /** Rows of queue tables read, and rows that were news (for metrics). */
  long rowsRead;

  long rowsNews;

  BinlogRows(
      String shard,
      String schema,
      DataSource dataSource,
      Function<String, QueueManager> queues,
      LongSupplier nowNs,
      LongSupplier mono) {
    this.shard = shard;
    this.mono = mono;
    this.schema = schema;
    this.dataSource = dataSource;
    this.queues = queues;
    this.nowNs = nowNs;
  }

  /** A table map: which table the next row events' id stands for. */
  void map(TableMapEventData m) {
    if (!schema.equalsIgnoreCase(m.getDatabase())) {
      return;
    }
    Target known = tables.get(m.getTableId());
    if (known != null && known.table().equals(m.getTable())) {
      return;
    }
    if (queues.apply(m.getTable()) == null) {
      // Not served (yet): looked at again at its next map, so a queue found later is followed.
      tables.remove(m.getTableId());
      return;
    }
    tables.put(m.getTableId(), resolve(m));
  }

  void written(WriteRowsEventData d) {
    Target t = tables.get(d.getTableId());
    if (t != null) {
      news(t, d.getRows(), d.getIncludedColumns());
    }
  }

  void updated(UpdateRowsEventData d) {
    Target t = tables.get(d.getTableId());
    if (t == null) {
      return;
    }
    List<Serializable[]> after = new ArrayList<>(d.getRows().size());
    for (Map.Entry<Serializable[], Serializable[]> e : d.getRows()) {
      after.add(e.getValue());
    }
    news(t, after, d.getIncludedColumns());
  }

  private void news(Target t, List<Serializable[]> rows, BitSet included) {
    QueueManager q = queues.apply(t.table());
    if (q == null) {
      return;
    }
    RowNews news = q.rowNews();
    rowsRead += rows.size();
    if (!t.readable()) {
      rowsNews += rows.size();
      news.readAgain();
      return;
    }
    long now = nowNs.getAsLong();
    for (Serializable[] row : rows) {
      Object state = value(row, included, t.stateCol());
      Object time = value(row, included, t.timeCol());
      if (state == MISSING || !(time instanceof Number n)) {
        rowsNews++;
        news.readAgain();
        continue;
      }
      if (!pending(t, state)) {
        continue;
      }
      long timeNext = n.longValue();
      if (timeNext >= QueueConvention.HELD_NS) {
        continue; // held behind its key or its group: released by the manager, which reads it then
      }
      rowsNews++;
      Object idValue = t.idCol() < 0 ? MISSING : value(row, included, t.idCol());
      long id = idValue instanceof Number in ? in.longValue() : -1;
      news.pending(id, timeNext, now, mono.getAsLong());
    }
  }

  private static final Object MISSING = new Object();

  /** Column {@code col}'s value in a row image that holds only the {@code included} columns. */
  private static Object value(Serializable[] row, BitSet included, int col) {
    if (included == null) {
      return col < row.length ? row[col] : MISSING;
    }
    if (!included.get(col)) {
      return MISSING;
    }
    int at = included.get(0, col).cardinality();
    return at < row.length ? row[at] : MISSING;
  }

  private static boolean pending(Target t, Object state) {
    if (!(state instanceof Number n)) {
      return true; // not what a state column holds: read the table rather than guess
    }
    int v = n.intValue();
    if (t.enumNames() == null) {
      return v == EventState.PENDING.code();
    }
    // An ENUM holds its 1-based index in the binlog.
    return v >= 1
        && v <= t.enumNames().size()
        && EventState.PENDING.sqlName().equalsIgnoreCase(t.enumNames().get(v - 1));
  }

  /** Where state and time_next lie in the table's rows, from information_schema. */
  private Target resolve(TableMapEventData m) {
    int id = -1;
    int state = -1;
    int time = -1;
    List<String> enumNames = null;
    int count = 0;
    try {
      for (BinlogCatalog.Column col :
          BinlogCatalog.columns(dataSource, m.getDatabase(), m.getTable())) {
        String name = col.name();
        if (QueueConvention.STATE.equalsIgnoreCase(name)) {
          state = count;
          if ("enum".equalsIgnoreCase(col.dataType())) {
            enumNames = enumNames(col.columnType());
          }
        } else if (QueueConvention.TIME_NEXT.equalsIgnoreCase(name)) {
          time = count;
        } else if (QueueConvention.ID.equalsIgnoreCase(name)) {
          id = count;
        }
        count++;
      }
    } catch (SQLException e) {
      log.warn(
          "shard {}: the columns of queue {} could not be read ({}); each of its binlog rows wakes"
              + " its poller",
          shard,
          m.getTable(),
          e.getMessage());
      return new Target(m.getTable(), -1, -1, -1, null);
    }
    if (count != m.getColumnTypes().length) {
      log.warn(
          "shard {}: queue {} has {} columns, its binlog rows {}; each of its binlog rows wakes its"
              + " poller until they agree",
          shard,
          m.getTable(),
          count,
          m.getColumnTypes().length);
      return new Target(m.getTable(), -1, -1, -1, null);
    }
    return new Target(m.getTable(), id, state, time, enumNames);
  }

  /** enum('pending','fired',...) → [pending, fired, ...]. */
  static List<String> enumNames(String columnType) {
    String body = columnType.substring(columnType.indexOf('(') + 1, columnType.lastIndexOf(')'));
    List<String> out = new ArrayList<>();
    for (String part : body.split(",")) {
      String p = part.trim();
      if (p.length() >= 2 && p.startsWith("'") && p.endsWith("'")) {
        p = p.substring(1, p.length() - 1);
      }
      out.add(p.toLowerCase(Locale.ROOT));
    }
    return out;
  }
}
