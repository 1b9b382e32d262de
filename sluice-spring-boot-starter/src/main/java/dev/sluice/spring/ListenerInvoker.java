package dev.sluice.spring;

import com.fasterxml.jackson.databind.JavaType;
import dev.sluice.receiver.EventHandler;
import dev.sluice.receiver.ReceivedEvent;
import dev.sluice.receiver.TransactionalAck;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Calls one {@link SluiceListener} method for each delivered event: builds its arguments (the data
 * mapped from the columns or the JSON payload, {@link EventMetadata}, {@link ReceivedEvent}) and,
 * for a transactional listener, runs it and the event's ack in one Spring transaction. Runs on the
 * receiver's handler threads; immutable after construction (but for the max_attempts looked up
 * once).
 *
 * <p>Each handling is a Micrometer {@link Observation} ({@link SluiceObservations}). A failure goes
 * to the listener's {@link SluiceErrorHandler} (it may ack anyway, or rethrow), then, if the
 * attempt was the event's last, to its {@link SluiceDeadLetterHandler}, then nacks the event.
 */
final class ListenerInvoker implements EventHandler {
  private static final Logger log = LoggerFactory.getLogger(ListenerInvoker.class);

  private enum Kind {
    DATA,
    MAP,
    METADATA,
    EVENT
  }

  private final ListenerEndpoint endpoint;
  private final ColumnMapper mapper;
  private final Kind[] kinds;
  private final JavaType dataType;
  private final TransactionTemplate tx; // null unless transactional
  private final DataSource dataSource; // null unless transactional
  private final ObservationRegistry observations;
  private final SluiceErrorHandler errorHandler; // null: the failure nacks
  private final SluiceDeadLetterHandler deadLetters; // null: none

  ListenerInvoker(
      ListenerEndpoint endpoint,
      ColumnMapper mapper,
      TransactionTemplate tx,
      DataSource ds,
      ObservationRegistry observations,
      SluiceErrorHandler errorHandler,
      SluiceDeadLetterHandler deadLetters) {
    this.endpoint = endpoint;
    this.mapper = mapper;
    this.observations = observations;
    this.errorHandler = errorHandler;
    this.deadLetters = deadLetters;
    Method m = endpoint.method();
    Parameter[] params = m.getParameters();
    this.kinds = new Kind[params.length];
    JavaType data = null;
    for (int i = 0; i < params.length; i++) {
      Class<?> t = params[i].getType();
      if (t == EventMetadata.class) {
        kinds[i] = Kind.METADATA;
      } else if (t == ReceivedEvent.class) {
        kinds[i] = Kind.EVENT;
      } else {
        if (data != null) {
          throw new IllegalStateException(
              "@SluiceListener "
                  + endpoint.describe()
                  + ": only one parameter may take the event's data; the others must be"
                  + " EventMetadata or ReceivedEvent");
        }
        data = mapper.type(params[i].getParameterizedType());
        kinds[i] =
            Map.class.isAssignableFrom(t) && endpoint.payload().isEmpty() ? Kind.MAP : Kind.DATA;
      }
    }
    this.dataType = data;
    if (endpoint.transactional() && (tx == null || ds == null)) {
      throw new IllegalStateException(
          "@SluiceListener "
              + endpoint.describe()
              + " is transactional but the application has no single DataSource and"
              + " PlatformTransactionManager");
    }
    this.tx = endpoint.transactional() ? tx : null;
    this.dataSource = endpoint.transactional() ? ds : null;
    m.setAccessible(true);
  }

  @Override
  public void handle(ReceivedEvent event) throws Exception {
    Observation observation = SluiceObservations.listener(observations, endpoint.id(), event);
    observation.start();
    try (Observation.Scope scope = observation.openScope()) {
      try {
        invokeListener(event);
      } catch (Exception e) {
        try {
          failed(event, e);
        } catch (Exception outcome) {
          observation.error(outcome);
          throw outcome;
        }
      }
    } catch (Error e) {
      observation.error(e);
      throw e;
    } finally {
      observation.stop();
    }
  }

  /** The error handler's say, then the dead-letter callback on the last attempt; rethrows. */
  private void failed(ReceivedEvent event, Exception failure) throws Exception {
    Exception outcome = failure;
    if (errorHandler != null) {
      try {
        errorHandler.handle(endpoint.id(), event, failure);
        return; // handled: the event is acked
      } catch (Exception e) {
        outcome = e;
      }
    }
    if (deadLetters != null && event.lastAttempt()) {
      try {
        deadLetters.deadLetter(endpoint.id(), event, EventMetadata.of(event), outcome);
      } catch (RuntimeException e) {
        log.warn(
            "@SluiceListener {}: the dead-letter handler failed for {}: {}",
            endpoint.describe(),
            event.describe(),
            e.toString());
      }
    }
    throw outcome;
  }

  private void invokeListener(ReceivedEvent event) throws Exception {
    Object[] args = arguments(event);
    if (tx == null) {
      invoke(args);
      return;
    }
    try {
      tx.executeWithoutResult(
          status -> {
            try {
              invoke(args);
              if (!event.ackedInTransaction() && !ack(event)) {
                // This attempt timed out and may run again: its writes must not stay.
                status.setRollbackOnly();
              }
            } catch (RuntimeException | Error e) {
              throw e;
            } catch (Exception e) {
              throw new Checked(e);
            }
          });
    } catch (Checked c) {
      throw (Exception) c.getCause();
    }
  }

  private boolean ack(ReceivedEvent event) throws SQLException {
    Connection c = DataSourceUtils.getConnection(dataSource);
    try {
      return TransactionalAck.ack(c, event);
    } finally {
      DataSourceUtils.releaseConnection(c, dataSource);
    }
  }

  private void invoke(Object[] args) throws Exception {
    try {
      endpoint.method().invoke(endpoint.bean(), args);
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      if (cause instanceof Exception ex) {
        throw ex;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw e;
    }
  }

  private Object[] arguments(ReceivedEvent event) throws Exception {
    Object[] args = new Object[kinds.length];
    for (int i = 0; i < kinds.length; i++) {
      args[i] =
          switch (kinds[i]) {
            case METADATA -> EventMetadata.of(event);
            case EVENT -> event;
            case MAP -> event.columns();
            case DATA -> data(event);
          };
    }
    return args;
  }

  private Object data(ReceivedEvent event) throws Exception {
    String column = endpoint.payload();
    try {
      if (column.isEmpty()) {
        return mapper.fromColumns(event.columns(), dataType);
      }
      if (!event.columns().containsKey(column)) {
        throw new IllegalArgumentException(
            "no payload column '" + column + "' (columns: " + event.columns().keySet() + ")");
      }
      return mapper.fromJson(event.columns().get(column), dataType);
    } catch (Exception e) {
      throw new IllegalArgumentException(
          event.describe()
              + ": cannot map it to "
              + dataType
              + " for "
              + endpoint.describe()
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /** Carries a checked exception of the listener out of the transaction callback. */
  private static final class Checked extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Checked(Exception cause) {
      super(cause);
    }
  }
}
