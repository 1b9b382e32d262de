package dev.sluice.client;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Adds events to a queue through the caller's own JDBC {@link Connection}, so the event commits or
 * rolls back with the caller's transaction. A plain {@code INSERT} of the user columns works just
 * as well; this helper adds scheduling, tenant and priority.
 *
 * <pre>{@code
 * try (Connection c = dataSource.getConnection()) {
 *   c.setAutoCommit(false);
 *   insertOrder(c, order);
 *   EventProducer.insert(c, "order_events", Map.of("order_id", order.id()),
 *       EventOptions.builder().delay(Duration.ofSeconds(5)).tenant("acme").build());
 *   c.commit();
 * }
 * }</pre>
 */
public final class EventProducer {
  private EventProducer() {}

  /** Inserts an event due now with default tenant and priority; returns its id. */
  public static long insert(Connection c, String queue, Map<String, ?> columns)
      throws SQLException {
    return insert(c, queue, columns, EventOptions.DEFAULTS);
  }

  /**
   * Inserts an event; returns its id.
   *
   * @param columns user columns by name; system columns may not appear here
   * @throws IllegalArgumentException for a bad queue or column name (nothing is written)
   */
  public static long insert(
      Connection c, String queue, Map<String, ?> columns, EventOptions options)
      throws SQLException {
    QueueColumns.requireIdentifier("queue name", queue);
    List<String> names = new ArrayList<>();
    List<Object> values = new ArrayList<>();
    List<String> placeholders = new ArrayList<>();
    for (Map.Entry<String, ?> e : columns.entrySet()) {
      String col = QueueColumns.requireIdentifier("column name", e.getKey());
      if (QueueColumns.SYSTEM_COLUMNS.contains(col) && !col.equals(QueueColumns.ACTOR)) {
        throw new IllegalArgumentException(
            "queue "
                + queue
                + ": column '"
                + col
                + "' is a system column; set it through EventOptions instead");
      }
      names.add("`" + col + "`");
      values.add(e.getValue());
      placeholders.add("?");
    }
    // The caller's trace context, for a receiver to continue (only if the table has the column).
    for (Map.Entry<String, String> t : TraceContextColumns.current(c, queue).entrySet()) {
      if (!columns.containsKey(t.getKey())) {
        names.add("`" + t.getKey() + "`");
        values.add(t.getValue());
        placeholders.add("?");
      }
    }
    if (options.id() != null) {
      names.add("`id`");
      values.add(options.id());
      placeholders.add("?");
    }
    if (options.fireAt() != null) {
      names.add("`time_next`");
      Instant at = options.fireAt();
      values.add(at.getEpochSecond() * 1_000_000_000L + at.getNano());
      placeholders.add("?");
    } else if (options.delay() != null && !options.delay().isZero()) {
      names.add("`time_next`");
      values.add(options.delay().toNanos());
      placeholders.add(QueueColumns.NOW_NS_SQL + " + ?");
    }
    if (options.tenant() != null) {
      names.add("`tenant`");
      values.add(options.tenant());
      placeholders.add("?");
    }
    if (options.priority() != null) {
      names.add("`priority`");
      values.add(options.priority());
      placeholders.add("?");
    }
    String sql =
        "INSERT INTO `"
            + queue
            + "` ("
            + String.join(", ", names)
            + ") VALUES ("
            + String.join(", ", placeholders)
            + ")";
    try (PreparedStatement ps = c.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS)) {
      for (int i = 0; i < values.size(); i++) {
        ps.setObject(i + 1, values.get(i));
      }
      ps.executeUpdate();
      if (options.id() != null) {
        return options.id();
      }
      try (ResultSet keys = ps.getGeneratedKeys()) {
        if (!keys.next()) {
          throw new SQLException("queue " + queue + ": the insert returned no id");
        }
        return keys.getLong(1);
      }
    }
  }

  /**
   * When and how an event fires.
   *
   * @param delay fire this long after now by the database clock (null or zero: now)
   * @param fireAt fire at this absolute time (the application's clock); wins over delay
   * @param tenant fairness root; null keeps the column default
   * @param priority lower fires first; null keeps the column default
   * @param id an application-chosen id; null lets AUTO_INCREMENT choose
   */
  public record EventOptions(
      Duration delay, Instant fireAt, String tenant, Integer priority, Long id) {
    public static final EventOptions DEFAULTS = new EventOptions(null, null, null, null, null);

    public EventOptions {
      if (delay != null && delay.isNegative()) {
        throw new IllegalArgumentException("delay must not be negative, was " + delay);
      }
      if (priority != null && (priority < -128 || priority > 127)) {
        throw new IllegalArgumentException("priority must be in -128..127, was " + priority);
      }
    }

    public static Builder builder() {
      return new Builder();
    }

    /** Builds {@link EventOptions}. */
    public static final class Builder {
      private Duration delay;
      private Instant fireAt;
      private String tenant;
      private Integer priority;
      private Long id;

      public Builder delay(Duration d) {
        this.delay = d;
        return this;
      }

      public Builder fireAt(Instant at) {
        this.fireAt = at;
        return this;
      }

      public Builder tenant(String t) {
        this.tenant = t;
        return this;
      }

      public Builder priority(int p) {
        this.priority = p;
        return this;
      }

      public Builder id(long id) {
        this.id = id;
        return this;
      }

      public EventOptions build() {
        return new EventOptions(delay, fireAt, tenant, priority, id);
      }
    }
  }
}
