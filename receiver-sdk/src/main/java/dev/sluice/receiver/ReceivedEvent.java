package dev.sluice.receiver;

import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.Value;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * One delivery of an event to this receiver: a read-only view of the proto {@link Event} with its
 * user columns converted to exact Java values.
 *
 * <p>Each SQL type arrives as one Java type: integers (and TINYINT(1)/BOOLEAN, YEAR) as {@link
 * Long}; BIGINT UNSIGNED as {@link BigInteger}; DECIMAL as {@link BigDecimal} with the column's
 * scale; DOUBLE and FLOAT as {@link Double}; character types, ENUM, SET and JSON as {@link String};
 * binary types and BIT(n) as {@code byte[]}; BIT(1) as {@link Boolean}; DATE as {@link LocalDate};
 * DATETIME as {@link LocalDateTime} (no time zone: MySQL keeps none); TIMESTAMP as {@link Instant}
 * (exact, whatever the session's or the JVM's time zone); TIME as {@link Duration}. The typed
 * getters convert only when the conversion is exact, and {@link #as(Class)} maps the columns to a
 * record.
 */
public final class ReceivedEvent {
  private final Event raw;

  /** Values as converted, JSON columns as {@link ColumnValues.Json}. */
  private final Map<String, Object> values;

  /** The same with JSON columns as String: what {@link #columns()} shows. */
  private final Map<String, Object> columns;

  /** The current deadline (ns, database clock): as delivered, then as extensions moved it. */
  private volatile long deadlineNs;

  /** Where extensions go; null for an event made outside a receiver (tests). */
  private volatile Extender extender;

  private volatile Outbox origin;

  /** Set by {@link TransactionalAck} on the handler's thread; read after the handler returns. */
  private volatile boolean ackedInTransaction;

  public ReceivedEvent(Event raw) {
    this.raw = Objects.requireNonNull(raw, "raw");
    this.deadlineNs = raw.getTimeDeadlineNs();
    // Sorted so that iteration order does not depend on the wire order of the proto map.
    Map<String, Object> converted = new TreeMap<>();
    Map<String, Object> shown = new TreeMap<>();
    raw.getColumnsMap()
        .forEach(
            (name, value) -> {
              Object v = ColumnValues.toJava(value);
              converted.put(name, v);
              shown.put(name, v instanceof ColumnValues.Json j ? j.text() : v);
            });
    this.values = Collections.unmodifiableMap(converted);
    this.columns = Collections.unmodifiableMap(shown);
  }

  public long id() {
    return raw.getId();
  }

  /** The delivery attempt this is; acks and nacks carry it back to the manager. */
  public long epoch() {
    return raw.getEpoch();
  }

  /** Same as {@link #epoch()}: the manager bumps the epoch on every delivery attempt. */
  public long attempt() {
    return raw.getEpoch();
  }

  public String queue() {
    return raw.getQueue();
  }

  public String shard() {
    return raw.getShard();
  }

  public String tenant() {
    return raw.getTenant();
  }

  public int priority() {
    return raw.getPriority();
  }

  /** When the event became due, in ns since the Unix epoch (database clock). */
  public long dueTimeNanos() {
    return raw.getTimeDueNs();
  }

  public long createdTimeNanos() {
    return raw.getTimeCreatedNs();
  }

  /** When the manager fired this attempt, in ns since the Unix epoch (database clock). */
  public long firedTimeNanos() {
    return raw.getTimeFiredNs();
  }

  /**
   * When the manager takes this event back unless it is acked or extended (the database's clock):
   * its fire plus the queue's ack_wait, moved by each extension. Null when the manager did not say
   * (an older manager).
   */
  public Instant deadline() {
    long d = deadlineNs;
    return d == 0 ? null : Instant.ofEpochSecond(0, d);
  }

  /**
   * Asks the manager to move this attempt's deadline to {@code by} from now (bounded by the queue's
   * max_hold from the fire), so that a handler running long is not delivered again meanwhile. The
   * receiver does this by itself while a handler runs ({@link SluiceReceiverBuilder#autoExtend});
   * call it when you know better. Completes with the new deadline, or exceptionally with {@link
   * ExtensionRefused} (stale attempt, unknown event, max_hold reached) or when no manager could be
   * reached in time.
   */
  public java.util.concurrent.CompletableFuture<Instant> extend(Duration by) {
    Objects.requireNonNull(by, "by");
    if (by.isNegative() || by.isZero()) {
      throw new IllegalArgumentException("by must be positive, was " + by);
    }
    Extender x = extender;
    if (x == null) {
      return java.util.concurrent.CompletableFuture.failedFuture(
          new IllegalStateException("event " + id() + " was not delivered by a receiver"));
    }
    return x.send(raw, origin, by)
        .thenApply(
            r -> {
              long d = r.getTimeDeadlineNs();
              switch (r.getStatus()) {
                case EXTEND_STATUS_OK -> {
                  moveDeadline(d);
                  return Instant.ofEpochSecond(0, deadlineNs);
                }
                case EXTEND_STATUS_LIMIT -> {
                  moveDeadline(d);
                  throw new ExtensionRefused(
                      ExtensionRefused.Reason.LIMIT,
                      Instant.ofEpochSecond(0, d),
                      describe() + " reached the queue's max_hold");
                }
                case EXTEND_STATUS_STALE ->
                    throw new ExtensionRefused(
                        ExtensionRefused.Reason.STALE,
                        null,
                        describe() + " is no longer fired at this attempt");
                default ->
                    throw new ExtensionRefused(
                        ExtensionRefused.Reason.UNKNOWN, null, describe() + " is unknown");
              }
            });
  }

  private synchronized void moveDeadline(long d) {
    if (d > deadlineNs) {
      deadlineNs = d;
    }
  }

  /** The attempt's hold as delivered (deadline - fire: the queue's ack_wait); 0 if unknown. */
  long holdNanos() {
    long d = raw.getTimeDeadlineNs();
    long f = raw.getTimeFiredNs();
    return d > 0 && f > 0 && d > f ? d - f : 0;
  }

  /** Where {@link #extend} sends: the receiver's extender, preferring the delivering endpoint. */
  void extensions(Extender extender, Outbox origin) {
    this.extender = extender;
    this.origin = origin;
  }

  /**
   * Whether this is the event's last attempt: if it fails (a nack, an ack timeout, a broken stream)
   * the event goes {@code dead} instead of being retried. The manager decides it from the queue's
   * {@code max_attempts} when it fires the event (an in-place change applies to later fires); a
   * replayed dead event gets {@code max_attempts} more attempts.
   */
  public boolean lastAttempt() {
    return raw.getLastAttempt();
  }

  /**
   * For an ordered queue ({@code ordering=key} or {@code queue}), the event's ordering key as text:
   * the ordering column's value (a number in decimal, a string as it is, bytes as {@code 0x} and
   * their hex), or {@code ""} when the whole queue is one key. Null when the queue is not ordered
   * or the row's key is NULL. Within a shard, the manager sends a key's events one at a time in
   * {@code id} order: the next one comes after this one is acked (or goes dead or is cancelled); a
   * nack or a timeout brings this one again first.
   */
  public String orderingKey() {
    return raw.hasOrderingKey() ? raw.getOrderingKey() : null;
  }

  /**
   * For the completion event of an event group (a row with {@code completes_group}; README, "Event
   * groups"): what became of the group's children, counted once when it completed. Empty for every
   * other event.
   */
  public java.util.Optional<GroupOutcome> group() {
    if (!raw.hasGroup()) {
      return java.util.Optional.empty();
    }
    dev.sluice.proto.v1.GroupOutcome g = raw.getGroup();
    return java.util.Optional.of(
        new GroupOutcome(g.getKey(), g.getAcked(), g.getDead(), g.getCancelled()));
  }

  /**
   * The user columns, by name, as the types listed on this class (the arrays are shared: do not
   * modify them).
   */
  public Map<String, Object> columns() {
    return columns;
  }

  /** True if the event has the column and it is SQL NULL. */
  public boolean isNull(String name) {
    present(name);
    return values.get(name) == null;
  }

  /**
   * The column as a String (character types, ENUM, SET, JSON). Like every getter, throws
   * IllegalArgumentException naming the column if it is missing, null or of another type.
   */
  public String getString(String name) {
    return typed(name, String.class);
  }

  /** An integer column (BIGINT UNSIGNED too, when it fits) as a long. */
  public long getLong(String name) {
    return typed(name, Long.class);
  }

  /** An integer column as an int, if it fits. */
  public int getInt(String name) {
    return typed(name, Integer.class);
  }

  /** An integer column, BIGINT UNSIGNED to 2^64-1 included. */
  public BigInteger getBigInteger(String name) {
    return typed(name, BigInteger.class);
  }

  /** A DECIMAL column, exact, with the column's scale (integer columns too). */
  public BigDecimal getBigDecimal(String name) {
    return typed(name, BigDecimal.class);
  }

  /** A DOUBLE or FLOAT column. */
  public double getDouble(String name) {
    return typed(name, Double.class);
  }

  /** A BIT(1) column, or a TINYINT(1)/BOOLEAN holding 0 or 1. */
  public boolean getBoolean(String name) {
    return typed(name, Boolean.class);
  }

  /** A binary column (BINARY, VARBINARY, BLOB, BIT(n)); the array is shared: do not modify it. */
  public byte[] getBytes(String name) {
    return typed(name, byte[].class);
  }

  /**
   * A TIMESTAMP column: the exact instant. A DATETIME has no time zone: see {@link
   * #getLocalDateTime}.
   */
  public Instant getInstant(String name) {
    Object v = present(name);
    if (v instanceof LocalDateTime) {
      throw new IllegalArgumentException(
          "column '"
              + name
              + "' of event "
              + id()
              + " is a DATETIME, which has no time zone: use getLocalDateTime(name) and the zone"
              + " the application writes it in, or make the column a TIMESTAMP");
    }
    return typed(name, Instant.class);
  }

  /** A DATETIME column, as stored: a date and time without a time zone. */
  public LocalDateTime getLocalDateTime(String name) {
    return typed(name, LocalDateTime.class);
  }

  /** A DATE column. */
  public LocalDate getLocalDate(String name) {
    return typed(name, LocalDate.class);
  }

  /** A TIME column: a signed duration (MySQL's TIME spans -838:59:59 to 838:59:59). */
  public Duration getDuration(String name) {
    return typed(name, Duration.class);
  }

  /** A JSON column's document (or a text column holding JSON, as MariaDB's JSON alias does). */
  public String getJson(String name) {
    Object v = present(name);
    if (v instanceof ColumnValues.Json j) {
      return j.text();
    }
    return typed(name, String.class);
  }

  /**
   * The user columns as a record of {@code type}: each component takes the column of the same name
   * or, for a camelCase component, its snake_case name ({@code orderId} reads {@code order_id}).
   * Component types are those of the getters (and their primitives); a missing or NULL column gives
   * null, or throws for a primitive component.
   */
  public <T extends Record> T as(Class<T> type) {
    return RecordMapper.map(this, type);
  }

  /**
   * The raw converted value, JSON as {@link ColumnValues.Json}; throws if the column is missing.
   */
  Object present(String name) {
    if (!values.containsKey(name)) {
      throw new IllegalArgumentException(
          "event " + id() + " has no column '" + name + "' (columns: " + values.keySet() + ")");
    }
    return values.get(name);
  }

  /** A text or JSON column as text (a String record component reads either). */
  String getJsonOrString(String name) {
    return getJson(name);
  }

  boolean hasColumn(String name) {
    return values.containsKey(name);
  }

  /**
   * True once {@link TransactionalAck#ack} applied this attempt's ack in the handler's transaction:
   * when the handler then returns normally, the manager is told the ack is committed.
   */
  public boolean ackedInTransaction() {
    return ackedInTransaction;
  }

  void markAckedInTransaction() {
    ackedInTransaction = true;
  }

  /** The proto message as received. */
  public Event raw() {
    return raw;
  }

  /**
   * Which event this is, for error messages: {@code event <id> of queue <queue> (shard <shard>)}.
   */
  public String describe() {
    return "event " + id() + " of queue " + queue() + " (shard " + shard() + ")";
  }

  @Override
  public String toString() {
    return "ReceivedEvent{id=" + id() + ", epoch=" + epoch() + ", queue=" + queue() + "}";
  }

  <T> T typed(String name, Class<T> type) {
    Object value = present(name);
    Object converted = value == null ? null : ColumnValues.convert(value, type);
    if (converted == null) {
      throw new IllegalArgumentException(
          "column '"
              + name
              + "' of event "
              + id()
              + " is "
              + ColumnValues.kindOf(value)
              + ", not "
              + type.getSimpleName());
    }
    return type.cast(converted);
  }

  static Object toJava(Value value) {
    Object v = ColumnValues.toJava(value);
    return v instanceof ColumnValues.Json j ? j.text() : v;
  }
}
