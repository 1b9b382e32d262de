package dev.sluice.manager.cli;

import dev.sluice.db.QueueCatalog;
import dev.sluice.db.QueueTable;
import dev.sluice.db.schedule.Schedule;
import dev.sluice.db.store.Stores;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code sluice check}'s part for recurring events: each schedule of a shard whose row the leader
 * would skip (a bad cron expression, zone or columns JSON, a queue that is not a valid queue table
 * of the shard, a column the table lacks), with how to fix it.
 */
final class ScheduleCheck {
  private ScheduleCheck() {}

  /**
   * The problems of shard {@code s}'s schedules; none when the shard has no {@code sluice_schedule}
   * table yet (its migrations not applied).
   *
   * @param tables the shard's queue tables found, by name
   */
  static List<Map<String, Object>> problems(
      ShardPools.Shard s, Map<String, QueueCatalog.Candidate> tables) {
    List<Schedule> schedules;
    try {
      schedules = Stores.over(s.dataSource()).schedules().list();
    } catch (RuntimeException e) {
      return List.of(); // no table yet: nothing to check
    }
    QueueCatalog catalog = s.catalog();
    List<Map<String, Object>> out = new ArrayList<>();
    for (Schedule sc : schedules) {
      String fix = "sluice schedule delete " + sc.name() + ", then sluice schedule create it again";
      try {
        sc.recurrence();
        Map<String, Object> columns = sc.columns();
        QueueCatalog.Candidate c = tables.get(sc.queue());
        QueueTable table = null;
        if (c != null) {
          QueueCatalog.Discovered d = catalog.inspect(c);
          table = d.valid() ? d.queue() : null;
        }
        if (table == null) {
          out.add(
              entry(
                  s.name(),
                  sc,
                  "queue " + sc.queue() + " is not a valid queue table of this shard",
                  "create the queue (or fix it: see its own line), or " + fix));
          continue;
        }
        for (String col : columns.keySet()) {
          if (!table.columns().containsKey(col)) {
            out.add(
                entry(
                    s.name(),
                    sc,
                    "queue " + sc.queue() + " has no column '" + col + "'",
                    "add the column to the queue, or " + fix));
          }
        }
      } catch (IllegalArgumentException e) {
        out.add(entry(s.name(), sc, e.getMessage(), fix));
      }
    }
    return out;
  }

  private static Map<String, Object> entry(String shard, Schedule sc, String problem, String fix) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("shard", shard);
    m.put("queue", sc.queue());
    m.put("schedule", sc.name());
    String prefix = "schedule " + sc.name() + ": ";
    m.put("problem", problem.startsWith(prefix) ? problem : prefix + problem);
    m.put("fix", fix);
    return m;
  }
}
