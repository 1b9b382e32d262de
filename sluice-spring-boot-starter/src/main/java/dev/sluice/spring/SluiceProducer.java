package dev.sluice.spring;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.client.DebounceOutcome;
import dev.sluice.client.EventProducer;
import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.client.InsertOutcome;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.support.SQLErrorCodeSQLExceptionTranslator;
import org.springframework.jdbc.support.SQLExceptionTranslator;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Adds events to queues in the caller's Spring transaction: the insert runs on the connection
 * Spring bound to the current transaction ({@link DataSourceUtils}), so the event commits if and
 * only if that transaction commits.
 *
 * <pre>{@code
 * @Transactional
 * public void placeOrder(Order o) {
 *   orders.save(o);
 *   sluice.to("order_events").tenant(o.shop()).delay(Duration.ofMinutes(5))
 *       .column("order_id", o.id()).send();
 * }
 * }</pre>
 *
 * <p>(Taking {@code dataSource.getConnection()} inside a {@code @Transactional} method instead
 * returns another pooled connection, on which the event commits on its own.) Outside a transaction
 * it refuses, unless {@code sluice.producer.require-transaction=false}.
 *
 * <p>Thread-safe.
 */
public class SluiceProducer {
  private final DataSource dataSource;
  private final boolean requireTransaction;
  private final ObjectMapper json;
  private final ColumnMapper columns;
  private final SQLExceptionTranslator translator;
  private final ObservationRegistry observations;

  public SluiceProducer(DataSource dataSource, boolean requireTransaction, ObjectMapper json) {
    this(dataSource, requireTransaction, json, ObservationRegistry.NOOP);
  }

  /**
   * @param observations where each insert is observed ({@code sluice.producer}, OpenTelemetry
   *     messaging keys, operation publish)
   */
  public SluiceProducer(
      DataSource dataSource,
      boolean requireTransaction,
      ObjectMapper json,
      ObservationRegistry observations) {
    this.observations = observations;
    this.dataSource = dataSource;
    this.requireTransaction = requireTransaction;
    this.json = json;
    this.columns = new ColumnMapper(json);
    this.translator = new SQLErrorCodeSQLExceptionTranslator(dataSource);
  }

  /** Inserts an event due now; returns its id. */
  public long send(String queue, Map<String, ?> columns) {
    return send(queue, columns, EventOptions.DEFAULTS);
  }

  /** Inserts an event with scheduling, tenant and priority; returns its id. */
  public long send(String queue, Map<String, ?> columns, EventOptions options) {
    requireTransaction(queue);
    Observation observation = SluiceObservations.producer(observations, queue).start();
    try (Observation.Scope scope = observation.openScope()) {
      long id = insert(queue, columns, options);
      observation.highCardinalityKeyValue(KeyValue.of("messaging.message.id", Long.toString(id)));
      return id;
    } catch (RuntimeException | Error e) {
      observation.error(e);
      throw e;
    } finally {
      observation.stop();
    }
  }

  /** {@link #sendUnique(String, String, Map, EventOptions)} with default options. */
  public InsertOutcome sendUnique(String queue, String dedupKey, Map<String, ?> columns) {
    return sendUnique(queue, dedupKey, columns, EventOptions.DEFAULTS);
  }

  /**
   * Inserts an event whose {@code dedup_key} column holds {@code dedupKey}, or finds the event that
   * holds it already ({@link EventProducer#insertUnique}): a duplicate inserts nothing and returns
   * the existing event's id with {@link InsertOutcome#duplicate()} true. In the current
   * transaction, like {@link #send}; the duplicate leaves that transaction usable, and every other
   * error is thrown (translated to Spring's {@code DataAccessException}s). The queue needs the
   * {@code dedup_key} column and its UNIQUE index (README, "Deduplication").
   */
  public InsertOutcome sendUnique(
      String queue, String dedupKey, Map<String, ?> columns, EventOptions options) {
    requireTransaction(queue);
    Observation observation = SluiceObservations.producer(observations, queue).start();
    try (Observation.Scope scope = observation.openScope()) {
      InsertOutcome outcome;
      Connection c = DataSourceUtils.getConnection(dataSource);
      try {
        outcome = EventProducer.insertUnique(c, queue, dedupKey, columns, options);
      } catch (SQLException e) {
        throw translator.translate("insert into queue " + queue, null, e);
      } finally {
        DataSourceUtils.releaseConnection(c, dataSource);
      }
      observation.highCardinalityKeyValue(
          KeyValue.of("messaging.message.id", Long.toString(outcome.id())));
      observation.highCardinalityKeyValue(
          KeyValue.of("sluice.duplicate", Boolean.toString(outcome.duplicate())));
      return outcome;
    } catch (RuntimeException | Error e) {
      observation.error(e);
      throw e;
    } finally {
      observation.stop();
    }
  }

  /** {@link #sendDebounced(String, String, Map, EventOptions)} with default options. */
  public DebounceOutcome sendDebounced(String queue, String dedupKey, Map<String, ?> columns) {
    return sendDebounced(queue, dedupKey, columns, EventOptions.DEFAULTS);
  }

  /**
   * Debounces the event of {@code dedupKey} ({@link EventProducer#insertDebounced}): replaces the
   * columns and due time of the still-pending event that holds the key, inserts a new event when
   * none does, and writes nothing once that event is fired ({@link
   * DebounceOutcome.Result#NOT_PENDING}). In the current transaction, like {@link #send}; a
   * database error is translated to Spring's {@code DataAccessException}s. The queue needs the
   * {@code dedup_key} column and its UNIQUE index (README, "Deduplication").
   */
  public DebounceOutcome sendDebounced(
      String queue, String dedupKey, Map<String, ?> columns, EventOptions options) {
    requireTransaction(queue);
    Observation observation = SluiceObservations.producer(observations, queue).start();
    try (Observation.Scope scope = observation.openScope()) {
      DebounceOutcome outcome;
      Connection c = DataSourceUtils.getConnection(dataSource);
      try {
        outcome = EventProducer.insertDebounced(c, queue, dedupKey, columns, options);
      } catch (SQLException e) {
        throw translator.translate("debounce into queue " + queue, null, e);
      } finally {
        DataSourceUtils.releaseConnection(c, dataSource);
      }
      observation.highCardinalityKeyValue(
          KeyValue.of("messaging.message.id", Long.toString(outcome.id())));
      observation.highCardinalityKeyValue(
          KeyValue.of(
              "sluice.debounce", outcome.result().name().toLowerCase(java.util.Locale.ROOT)));
      return outcome;
    } catch (RuntimeException | Error e) {
      observation.error(e);
      throw e;
    } finally {
      observation.stop();
    }
  }

  /** {@link #sendInGroup(String, String, Map, EventOptions)} with default options. */
  public long sendInGroup(String queue, String groupKey, Map<String, ?> columns) {
    return sendInGroup(queue, groupKey, columns, EventOptions.DEFAULTS);
  }

  /**
   * Inserts a child of the event group {@code groupKey}: its {@code group_key} column holds the key
   * ({@link EventProducer#insertInGroup}); returns its id. The group's completion event ({@link
   * #sendGroupCompletion}) is delivered once no child is pending or fired. In the current
   * transaction, like {@link #send}; a bad key is an {@link IllegalArgumentException} (nothing is
   * written), a database error is translated to Spring's {@code DataAccessException}s. The queue
   * needs the {@code group_key} column and its index (README, "Event groups").
   */
  public long sendInGroup(
      String queue, String groupKey, Map<String, ?> columns, EventOptions options) {
    return observed(
        queue, groupKey, c -> EventProducer.insertInGroup(c, queue, groupKey, columns, options));
  }

  /** {@link #sendGroupCompletion(String, String, Map, EventOptions)} with default options. */
  public long sendGroupCompletion(String queue, String groupKey, Map<String, ?> columns) {
    return sendGroupCompletion(queue, groupKey, columns, EventOptions.DEFAULTS);
  }

  /**
   * Inserts the completion event of the event group {@code groupKey}: its {@code completes_group}
   * column holds the key ({@link EventProducer#insertGroupCompletion}); returns its id. It is
   * delivered once every child of the group is acked, dead or cancelled, with their counts ({@code
   * ReceivedEvent.group()}). In the current transaction, like {@link #send}; errors as {@link
   * #sendInGroup}. The queue needs the {@code completes_group} column (README, "Event groups").
   */
  public long sendGroupCompletion(
      String queue, String groupKey, Map<String, ?> columns, EventOptions options) {
    return observed(
        queue,
        groupKey,
        c -> EventProducer.insertGroupCompletion(c, queue, groupKey, columns, options));
  }

  /** An insert on the transaction's connection. */
  private interface Insert {
    long on(Connection c) throws SQLException;
  }

  /** Runs {@code insert} in the current transaction, observed; returns the event's id. */
  private long observed(String queue, String groupKey, Insert insert) {
    requireTransaction(queue);
    Observation observation = SluiceObservations.producer(observations, queue).start();
    try (Observation.Scope scope = observation.openScope()) {
      long id;
      Connection c = DataSourceUtils.getConnection(dataSource);
      try {
        id = insert.on(c);
      } catch (SQLException e) {
        throw translator.translate("insert into queue " + queue, null, e);
      } finally {
        DataSourceUtils.releaseConnection(c, dataSource);
      }
      observation.highCardinalityKeyValue(KeyValue.of("messaging.message.id", Long.toString(id)));
      observation.highCardinalityKeyValue(KeyValue.of("sluice.group", groupKey));
      return id;
    } catch (RuntimeException | Error e) {
      observation.error(e);
      throw e;
    } finally {
      observation.stop();
    }
  }

  private void requireTransaction(String queue) {
    if (requireTransaction && !TransactionSynchronizationManager.isActualTransactionActive()) {
      throw new IllegalStateException(
          "queue "
              + queue
              + ": no Spring transaction is active, so the event would commit on its own; call"
              + " this from a @Transactional method (or set"
              + " sluice.producer.require-transaction=false)");
    }
  }

  private long insert(String queue, Map<String, ?> columns, EventOptions options) {
    Connection c = DataSourceUtils.getConnection(dataSource);
    try {
      return EventProducer.insert(c, queue, columns, options);
    } catch (SQLException e) {
      throw translator.translate("insert into queue " + queue, null, e);
    } finally {
      DataSourceUtils.releaseConnection(c, dataSource);
    }
  }

  /** Starts an event for {@code queue}: add columns and options, then {@link Send#send()}. */
  public Send to(String queue) {
    return new Send(this, queue);
  }

  ObjectMapper json() {
    return json;
  }

  ColumnMapper columnMapper() {
    return columns;
  }
}
