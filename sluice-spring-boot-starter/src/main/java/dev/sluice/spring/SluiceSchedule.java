package dev.sluice.spring;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A recurring event declared as a bean: the starter writes it into the shard's {@code
 * sluice_schedule} table at startup (with {@code dev.sluice:sluice-db} on the class path), and the
 * shard's leading manager inserts each occurrence into the queue, exactly once (README, "Recurring
 * events").
 *
 * <pre>{@code
 * // in a @Configuration class, as a @Bean method:
 * SluiceSchedule nightlyReport() {
 *   return SluiceSchedule.cron("nightly-report", "reports", "30 2 * * *")
 *       .zone("Europe/Berlin")
 *       .column("report", "daily");
 * }
 * }</pre>
 *
 * <p>At each start a changed definition replaces the stored one (and restarts the schedule from
 * now); an unchanged one keeps its place and its paused switch. A bean removed leaves its row:
 * delete it with {@code sluice schedule delete NAME}. Immutable.
 *
 * @param name the schedule's name (1-128 letters, digits, {@code _ . : -})
 * @param queue the queue each occurrence is inserted into
 * @param cron a cron expression (5 fields, or 6 with seconds first), or null
 * @param every a fixed interval, or null
 * @param zone the cron expression's time zone (IANA id); null is UTC
 * @param columns the columns of each occurrence
 * @param catchUp {@code one} (null: the default), {@code all} or {@code none}
 */
public record SluiceSchedule(
    String name,
    String queue,
    String cron,
    Duration every,
    String zone,
    Map<String, Object> columns,
    String catchUp) {

  public SluiceSchedule {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(queue, "queue");
    if ((cron == null) == (every == null)) {
      throw new IllegalArgumentException(
          "schedule " + name + ": give either a cron expression or an interval, not both");
    }
    columns =
        columns == null
            ? Map.of()
            : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(columns));
  }

  /** A schedule on a cron expression, in UTC until {@link #zone} says otherwise. */
  public static SluiceSchedule cron(String name, String queue, String expression) {
    return new SluiceSchedule(name, queue, expression, null, null, Map.of(), null);
  }

  /** A schedule every {@code interval} (at least 100 ms). */
  public static SluiceSchedule every(String name, String queue, Duration interval) {
    return new SluiceSchedule(name, queue, null, interval, null, Map.of(), null);
  }

  /** The same, in that time zone. */
  public SluiceSchedule zone(String zoneId) {
    return new SluiceSchedule(name, queue, cron, every, zoneId, columns, catchUp);
  }

  /** The same, with one more column of each occurrence. */
  public SluiceSchedule column(String column, Object value) {
    Map<String, Object> m = new LinkedHashMap<>(columns);
    m.put(column, value);
    return new SluiceSchedule(name, queue, cron, every, zone, m, catchUp);
  }

  /** The same, with that catch-up policy: {@code one}, {@code all} or {@code none}. */
  public SluiceSchedule catchUp(String policy) {
    return new SluiceSchedule(name, queue, cron, every, zone, columns, policy);
  }
}
