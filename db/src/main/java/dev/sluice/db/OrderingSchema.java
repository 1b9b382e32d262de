package dev.sluice.db;

import static dev.sluice.db.QueueConvention.*;
import static dev.sluice.db.QueueSchemaValidator.alterAdd;
import static dev.sluice.db.QueueSchemaValidator.modify;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The schema an ordered queue ({@code ordering=key} or {@code queue}) needs: its key column and the
 * index its key checks read. Part of {@link QueueSchemaValidator}; pure, as it is.
 */
final class OrderingSchema {
  private OrderingSchema() {}

  /**
   * The problems of an ordered queue's setup ({@code ordering=key} or {@code queue}), each with the
   * statement that fixes it: the key column must exist, hold integers or short strings, and lead an
   * index with {@code state} after it; a queue ordered as one key needs an index on {@code state}
   * alone (InnoDB appends the id). None for an unordered queue.
   */
  static List<SchemaProblem> validate(
      String table,
      QueueOptions options,
      Map<String, ColumnInfo> columns,
      Map<String, List<String>> indexes) {
    List<SchemaProblem> p = new ArrayList<>();
    if (!options.ordered() && !options.keyLimited()) {
      return p;
    }
    String why =
        options.ordered()
            ? "ordering=key orders events by it"
            : "key_max_in_flight counts events by it";
    String t = "`" + table + "`";
    if (options.orderedAsOneKey()) {
      if (index(options, indexes) == null) {
        p.add(
            new SchemaProblem(
                ORDERING_INDEX,
                "ordering=queue needs an index on (state, id) to find the queue's first event",
                "ALTER TABLE " + t + " ADD INDEX `" + ORDERING_INDEX + "` (`state`, `id`)"));
      }
      return p;
    }
    String col = options.orderingColumn();
    ColumnInfo c = columns.get(col.toLowerCase(Locale.ROOT));
    if (c == null) {
      p.add(
          new SchemaProblem(
              col,
              "missing column: " + why,
              alterAdd(t, "`" + col + "` VARCHAR(255) NULL")
                  + ", ADD INDEX `"
                  + ORDERING_INDEX
                  + "` (`"
                  + col
                  + "`, `state`, `id`)"));
      return p;
    }
    if (SYSTEM_COLUMNS.contains(c.name().toLowerCase(Locale.ROOT))) {
      p.add(
          new SchemaProblem(
              col,
              "is a system column; the key must be a column of the application's",
              "ALTER TABLE " + t + " COMMENT = '... ordering_column=<your key column>'"));
      return p;
    }
    if (!orderingType(c)) {
      p.add(
          new SchemaProblem(
              col,
              "cannot be an ordering key: its type is "
                  + c.columnType()
                  + " (keys are integers or strings of at most 255 characters)",
              modify(t, "`" + col + "` VARCHAR(255) NULL")));
    }
    if (index(options, indexes) == null) {
      p.add(
          new SchemaProblem(
              ORDERING_INDEX,
              "no index on (" + col + ", state): each key check would scan the table",
              "ALTER TABLE "
                  + t
                  + " ADD INDEX `"
                  + ORDERING_INDEX
                  + "` (`"
                  + col
                  + "`, `state`, `id`)"));
    }
    return p;
  }

  /** Whether a column can hold ordering keys: an integer, or a (var)char of at most 255. */
  private static boolean orderingType(ColumnInfo c) {
    if (c.isInteger()) {
      return true;
    }
    String type = c.dataType().toLowerCase(Locale.ROOT);
    if (!List.of("varchar", "char").contains(type)) {
      return false;
    }
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("\\((\\d+)\\)").matcher(c.columnType());
    return !m.find() || Integer.parseInt(m.group(1)) <= 255;
  }

  /**
   * The index an ordered queue's key checks read, or null: for {@code ordering=key}, one that
   * starts with (key column, state); for {@code ordering=queue}, one on (state) or (state, id)
   * exactly; null for an unordered queue.
   */
  static String index(QueueOptions options, Map<String, List<String>> indexes) {
    if (!options.ordered() && !options.keyLimited()) {
      return null;
    }
    if (options.orderedAsOneKey()) {
      String best = null;
      for (Map.Entry<String, List<String>> e : indexes.entrySet()) {
        List<String> cols = e.getValue();
        if (cols.equals(List.of(STATE)) || cols.equals(List.of(STATE, ID))) {
          if (best == null || e.getKey().equals(ORDERING_INDEX)) {
            best = e.getKey();
          }
        }
      }
      return best;
    }
    return QueueCatalog.index(
        indexes, ORDERING_INDEX, options.orderingColumn().toLowerCase(Locale.ROOT), STATE);
  }
}
