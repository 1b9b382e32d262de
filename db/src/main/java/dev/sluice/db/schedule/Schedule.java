package dev.sluice.db.schedule;

import java.time.Duration;
import java.util.Map;

/**
 * One row of {@code sluice_schedule} (migration V8): a recurring event of a shard. Immutable.
 *
 * @param name the schedule's name
 * @param queue the queue table each occurrence is inserted into
 * @param cron a cron expression, or null for an interval schedule
 * @param everyMs the interval in ms, or null for a cron schedule
 * @param zone the IANA time zone the cron expression is read in
 * @param columnsJson the user columns of each occurrence, a JSON object
 * @param catchUp what to do with occurrences missed during a downtime
 * @param paused whether no occurrence is inserted
 * @param nextNs the next occurrence to insert, ns since the epoch; 0 when not started
 * @param lastNs the last occurrence inserted, or 0
 * @param lastId the id of that occurrence's event, or null
 */
public record Schedule(
    String name,
    String queue,
    String cron,
    Long everyMs,
    String zone,
    String columnsJson,
    CatchUp catchUp,
    boolean paused,
    long nextNs,
    long lastNs,
    Long lastId) {

  /** Names: letters, digits and {@code _ . : -}, 1 to 128 characters. */
  public static String requireName(String name) {
    if (name == null || !name.matches("[A-Za-z0-9_.:-]{1,128}")) {
      throw new IllegalArgumentException(
          "bad schedule name '" + name + "': use 1 to 128 letters, digits, _ . : or -");
    }
    return name;
  }

  /**
   * A new schedule, checked (name, queue name, cron expression or interval, zone, columns): a clear
   * error names what is wrong. Exactly one of {@code cron} and {@code every} is given.
   */
  public static Schedule create(
      String name,
      String queue,
      String cron,
      Duration every,
      String zone,
      Map<String, ?> columns,
      CatchUp catchUp) {
    requireName(name);
    dev.sluice.db.QueueConvention.requireIdentifier("queue name", queue);
    if ((cron == null) == (every == null)) {
      throw new IllegalArgumentException(
          "schedule " + name + ": give either a cron expression or an interval, not both");
    }
    String z = Recurrence.zone(zone).getId();
    Recurrence r = cron != null ? Recurrence.cron(cron, z) : Recurrence.every(every);
    return new Schedule(
        name,
        queue,
        r.cronExpression(),
        every == null ? null : every.toMillis(),
        z,
        ScheduleColumns.toJson(queue, columns),
        catchUp == null ? CatchUp.ONE : catchUp,
        false,
        0,
        0,
        null);
  }

  /** When its occurrences fall; throws naming the schedule when the row holds a bad value. */
  public Recurrence recurrence() {
    try {
      if (cron != null && !cron.isBlank()) {
        return Recurrence.cron(cron, zone);
      }
      if (everyMs != null) {
        return Recurrence.every(Duration.ofMillis(everyMs));
      }
      throw new IllegalArgumentException("neither cron nor every_ms is set");
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("schedule " + name + ": " + e.getMessage(), e);
    }
  }

  /** The user columns of each occurrence, parsed (see {@link ScheduleColumns#parse}). */
  public Map<String, Object> columns() {
    return ScheduleColumns.parse(name, queue, columnsJson);
  }

  /**
   * How the schedule recurs, for people: {@code cron '0 3 * * *' in Europe/Berlin}, {@code every
   * PT1S}.
   */
  public String describe() {
    return cron != null ? "cron '" + cron + "' in " + zone : "every " + Duration.ofMillis(everyMs);
  }
}
