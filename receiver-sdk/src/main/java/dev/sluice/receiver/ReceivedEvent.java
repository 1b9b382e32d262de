package dev.sluice.receiver;

import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.Value;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * One delivery of an event to this receiver: a read-only view of the proto {@link Event} with its
 * user columns converted to plain Java values.
 */
public final class ReceivedEvent {
  private final Event raw;
  private final Map<String, Object> columns;

  /** Set by {@link TransactionalAck} on the handler's thread; read after the handler returns. */
  private volatile boolean ackedInTransaction;

  public ReceivedEvent(Event raw) {
    this.raw = Objects.requireNonNull(raw, "raw");
    // Sorted so that iteration order does not depend on the wire order of the proto map.
    Map<String, Object> converted = new TreeMap<>();
    raw.getColumnsMap().forEach((name, value) -> converted.put(name, toJava(value)));
    this.columns = Collections.unmodifiableMap(converted);
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
   * The user columns, by name. Values are {@code null}, {@link Long}, {@link Double}, {@link
   * String} or {@code byte[]} (the arrays are shared: do not modify them).
   */
  public Map<String, Object> columns() {
    return columns;
  }

  /** The column as a String; throws IllegalArgumentException if missing, null or not a String. */
  public String getString(String name) {
    return typed(name, String.class);
  }

  /** The column as a long; throws IllegalArgumentException if missing, null or not an integer. */
  public long getLong(String name) {
    return typed(name, Long.class);
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

  @Override
  public String toString() {
    return "ReceivedEvent{id=" + id() + ", epoch=" + epoch() + ", queue=" + queue() + "}";
  }

  private <T> T typed(String name, Class<T> type) {
    if (!columns.containsKey(name)) {
      throw new IllegalArgumentException(
          "event " + id() + " has no column '" + name + "' (columns: " + columns.keySet() + ")");
    }
    Object value = columns.get(name);
    if (!type.isInstance(value)) {
      String actual = value == null ? "null" : value.getClass().getSimpleName();
      throw new IllegalArgumentException(
          "column '"
              + name
              + "' of event "
              + id()
              + " is "
              + actual
              + ", not "
              + type.getSimpleName());
    }
    return type.cast(value);
  }

  static Object toJava(Value value) {
    switch (value.getKindCase()) {
      case INT_VALUE:
        return value.getIntValue();
      case DOUBLE_VALUE:
        return value.getDoubleValue();
      case STRING_VALUE:
        return value.getStringValue();
      case BYTES_VALUE:
        return value.getBytesValue().toByteArray();
      case NULL_VALUE:
      case KIND_NOT_SET:
      default:
        return null;
    }
  }
}
