package dev.sluice.db.store;

import dev.sluice.db.store.GroupStore.Table;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Where the last check of each sealed group found its first open child, per grouped table: the next
 * check of the group reads its table's {@code group_key} index from there ({@link
 * GroupSql#probes}), so that the children of a group are read about once over all its checks rather
 * than at each.
 *
 * <p>A hint, never a verdict. The children before a mark were not open when the check passed them,
 * and a child that is settled stays so, but for two that the mark can miss: a dead child replayed,
 * and a child committed after a check passed a higher id. Either is seen by the count that every
 * completion makes of the whole group under its lock ({@link GroupCompletion}): the group does not
 * complete, and its marks are forgotten ({@link #forget}), so the next check reads it from its
 * first child. A group unknown here (a new leader's, or one evicted: at most {@link #MAX} marks are
 * kept) is read from its first child.
 *
 * <p>Thread-safe; the group closer's thread is its one writer.
 */
final class ChildMarks {
  /** Groups whose marks are kept, at most; the least recently used go first. */
  static final int MAX = 100_000;

  /** By group key: by table name, the id of the group's first open child last seen there. */
  private final Map<String, Map<String, Long>> marks =
      new LinkedHashMap<>(1024, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Map<String, Long>> eldest) {
          return size() > MAX;
        }
      };

  /** The id the next probe of group {@code key} in {@code table} starts from (0: its first). */
  synchronized long from(Table table, String key) {
    Map<String, Long> byTable = marks.get(key);
    Long id = byTable == null ? null : byTable.get(table.name());
    return id == null ? 0 : id;
  }

  /** A check found {@code id} the first open child of group {@code key} in {@code table}. */
  synchronized void saw(Table table, String key, long id) {
    marks.computeIfAbsent(key, k -> new HashMap<>(2)).put(table.name(), id);
  }

  /** Forgets the marks of the groups {@code keys} (completed, or found open by their count). */
  synchronized void forget(Collection<String> keys) {
    for (String key : keys) {
      marks.remove(key);
    }
  }
}
