package dev.sluice.db;

import static dev.sluice.db.QueueConvention.*;
import static dev.sluice.db.QueueSchemaValidator.modify;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The schema event groups need: the group columns' types and an index that starts with {@code
 * group_key}. Part of {@link QueueSchemaValidator}; pure, as it is.
 */
final class GroupSchema {
  private GroupSchema() {}

  /**
   * The problems of a table's event-group columns (README, "Event groups"), each with its fix:
   * {@code group_key} needs an index that starts with it — without one each check that a group has
   * no pending child left would scan the table — and both {@code group_key} and {@code
   * completes_group} must be strings of at most 191 characters, and a queue of completion events
   * cannot be ordered. None for a table without them.
   */
  static List<SchemaProblem> validate(
      String table,
      QueueOptions options,
      Map<String, ColumnInfo> columns,
      Map<String, List<String>> indexes) {
    List<SchemaProblem> p = new ArrayList<>();
    String t = "`" + table + "`";
    if (options != null
        && options.ordered()
        && columns.containsKey(dev.sluice.client.QueueColumns.COMPLETES_GROUP)) {
      // A completion event waits for its group; an ordered queue's turns would release it.
      p.add(
          new SchemaProblem(
              dev.sluice.client.QueueColumns.COMPLETES_GROUP,
              "a queue of completion events cannot be ordered (ordering="
                  + options.ordering()
                  + ")",
              "ALTER TABLE " + t + " COMMENT = '... ordering=none'"));
    }
    ColumnInfo g = columns.get(dev.sluice.client.QueueColumns.GROUP_KEY);
    if (g != null) {
      if (!groupKeyType(g)) {
        p.add(
            new SchemaProblem(
                g.name(),
                "a group key must be a CHAR or VARCHAR of at most 191 characters, is "
                    + g.columnType(),
                modify(t, dev.sluice.client.QueueColumns.GROUP_KEY_DEFINITION)));
      }
      boolean indexed = false;
      for (List<String> cols : indexes.values()) {
        // (group_key) is the convention; (group_key, state), earlier versions' one, serves too.
        if (!cols.isEmpty()
            && cols.get(0).equalsIgnoreCase(dev.sluice.client.QueueColumns.GROUP_KEY)) {
          indexed = true;
        }
      }
      if (!indexed) {
        p.add(
            new SchemaProblem(
                dev.sluice.client.QueueColumns.GROUP_INDEX,
                "no index on group_key: each check of a group would scan the table",
                "ALTER TABLE "
                    + t
                    + " ADD "
                    + dev.sluice.client.QueueColumns.GROUP_INDEX_DEFINITION));
      }
    }
    ColumnInfo c = columns.get(dev.sluice.client.QueueColumns.COMPLETES_GROUP);
    if (c != null && !groupKeyType(c)) {
      p.add(
          new SchemaProblem(
              c.name(),
              "a group key must be a CHAR or VARCHAR of at most 191 characters, is "
                  + c.columnType(),
              modify(t, dev.sluice.client.QueueColumns.COMPLETES_GROUP_DEFINITION)));
    }
    return p;
  }

  private static boolean groupKeyType(ColumnInfo c) {
    String type = c.dataType().toLowerCase(Locale.ROOT);
    if (!List.of("varchar", "char").contains(type)) {
      return false;
    }
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("\\((\\d+)\\)").matcher(c.columnType());
    return !m.find()
        || Integer.parseInt(m.group(1)) <= dev.sluice.client.QueueColumns.GROUP_KEY_MAX_CHARS;
  }
}
