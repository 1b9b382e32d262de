package dev.sluice.spring;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.sluice.client.DebounceOutcome;
import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.client.InsertOutcome;
import dev.sluice.client.QueueColumns;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One event being put together for {@link SluiceProducer#to(String)}: its columns and when and how
 * it fires (the options of {@code EventProducer}, plus the actor). Not thread-safe; use once.
 */
public final class Send {
  private final SluiceProducer producer;
  private final String queue;
  private final Map<String, Object> columns = new LinkedHashMap<>();
  private final EventOptions.Builder options = EventOptions.builder();

  Send(SluiceProducer producer, String queue) {
    this.producer = producer;
    this.queue = queue;
  }

  /** One user column. */
  public Send column(String name, Object value) {
    columns.put(name, value);
    return this;
  }

  /** Several user columns. */
  public Send columns(Map<String, ?> values) {
    columns.putAll(values);
    return this;
  }

  /** The properties of a record or bean as columns, camelCase names as snake_case. */
  public Send data(Object data) {
    columns.putAll(producer.columnMapper().toColumns(data));
    return this;
  }

  /** {@code value} written as a JSON document into {@code column}. */
  public Send json(String column, Object value) {
    try {
      columns.put(column, producer.json().writeValueAsString(value));
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          "queue " + queue + ": cannot write column " + column + " as JSON: " + e.getMessage(), e);
    }
    return this;
  }

  /** Fire this long after now, by the database clock. */
  public Send delay(Duration delay) {
    options.delay(delay);
    return this;
  }

  /** Fire at this time; wins over {@link #delay}. */
  public Send at(Instant at) {
    options.fireAt(at);
    return this;
  }

  /** The fairness root. */
  public Send tenant(String tenant) {
    options.tenant(tenant);
    return this;
  }

  /** Lower fires first (-128..127). */
  public Send priority(int priority) {
    options.priority(priority);
    return this;
  }

  /** The actor path under the tenant (the queue table needs an {@code actor} column). */
  public Send actor(String actor) {
    columns.put(QueueColumns.ACTOR, actor);
    return this;
  }

  /** An application-chosen id instead of AUTO_INCREMENT. */
  public Send id(long id) {
    options.id(id);
    return this;
  }

  /** Inserts the event in the current transaction; returns its id. */
  public long send() {
    return producer.send(queue, columns, options.build());
  }

  /**
   * Inserts the event with {@code dedupKey} in its {@code dedup_key} column, in the current
   * transaction, unless an event of the queue holds that key already: then nothing is inserted and
   * that event's id comes back as a duplicate ({@link SluiceProducer#sendUnique}).
   */
  public InsertOutcome sendUnique(String dedupKey) {
    return producer.sendUnique(queue, dedupKey, columns, options.build());
  }

  /**
   * Debounces the event of {@code dedupKey} in the current transaction ({@link
   * SluiceProducer#sendDebounced}): replaces the pending event that holds the key, or inserts one,
   * or writes nothing once that event is fired.
   */
  public DebounceOutcome sendDebounced(String dedupKey) {
    return producer.sendDebounced(queue, dedupKey, columns, options.build());
  }

  /**
   * Inserts the event as a child of the event group {@code groupKey} (its {@code group_key}
   * column), in the current transaction ({@link SluiceProducer#sendInGroup}); returns its id.
   */
  public long sendInGroup(String groupKey) {
    return producer.sendInGroup(queue, groupKey, columns, options.build());
  }

  /**
   * Inserts the event as the completion event of the event group {@code groupKey} (its {@code
   * completes_group} column), in the current transaction ({@link
   * SluiceProducer#sendGroupCompletion}); returns its id.
   */
  public long sendGroupCompletion(String groupKey) {
    return producer.sendGroupCompletion(queue, groupKey, columns, options.build());
  }
}
