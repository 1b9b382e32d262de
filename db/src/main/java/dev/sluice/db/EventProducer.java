package dev.sluice.db;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * Adds events to a queue through the caller's own JDBC {@link Connection} (kept for the manager's
 * side and its tests; applications use {@link dev.sluice.client.EventProducer} from sluice-client,
 * which this delegates to), so the event commits or rolls back with the caller's transaction. A
 * plain {@code INSERT} of the user columns works just as well; this helper adds scheduling, tenant
 * and priority.
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
   * Inserts an event; returns its id. The work is done by {@link dev.sluice.client.EventProducer}
   * (sluice-client), which applications use without the rest of sluice-db.
   *
   * @param columns user columns by name; system columns may not appear here
   * @throws IllegalArgumentException for a bad queue or column name (nothing is written)
   */
  public static long insert(
      Connection c, String queue, Map<String, ?> columns, EventOptions options)
      throws SQLException {
    return dev.sluice.client.EventProducer.insert(c, queue, columns, options.toClient());
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

    dev.sluice.client.EventProducer.EventOptions toClient() {
      return new dev.sluice.client.EventProducer.EventOptions(delay, fireAt, tenant, priority, id);
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
