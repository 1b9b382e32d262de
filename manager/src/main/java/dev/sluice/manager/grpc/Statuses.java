package dev.sluice.manager.grpc;

import dev.sluice.manager.admin.AdminDenied;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Maps exceptions to gRPC statuses in one place, for both services' unary calls ({@link #unary}).
 * Database errors never reach clients as SQL: they become UNAVAILABLE with a plain message, and the
 * detail goes to the log.
 */
final class Statuses {
  private static final Logger log = LoggerFactory.getLogger(Statuses.class);

  private Statuses() {}

  /** The longest queue name a request may give: MySQL's limit on a table name. */
  static final int MAX_QUEUE_NAME = 64;

  /**
   * Refuses a queue name longer than a table name can be, before anything else looks at it (the
   * answer does not echo it).
   */
  static void checkQueueName(String queue) {
    if (queue.length() > MAX_QUEUE_NAME) {
      throw invalid(
          "queue name is "
              + queue.length()
              + " characters; a queue is a table, at most "
              + MAX_QUEUE_NAME);
    }
  }

  static StatusRuntimeException invalid(String message) {
    return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
  }

  /**
   * Answers a unary call with {@code body}'s result, or with the status its exception maps to
   * ({@link #of}).
   */
  static <T> void unary(StreamObserver<T> out, String context, Supplier<T> body) {
    T result;
    try {
      result = body.get();
    } catch (RuntimeException e) {
      out.onError(of(e, context));
      return;
    }
    out.onNext(result);
    out.onCompleted();
  }

  static StatusRuntimeException of(Throwable t, String context) {
    if (t instanceof StatusRuntimeException s) {
      return s;
    }
    if (t instanceof AdminDenied) {
      return Status.PERMISSION_DENIED.withDescription(t.getMessage()).asRuntimeException();
    }
    if (t instanceof IllegalArgumentException) {
      return invalid(t.getMessage());
    }
    if (t instanceof dev.sluice.core.EngineException e) {
      Status code =
          switch (e.kind()) {
            case INVALID_ARGUMENT -> Status.INVALID_ARGUMENT;
            case NOT_FOUND -> Status.NOT_FOUND;
            case FAILED_PRECONDITION -> Status.FAILED_PRECONDITION;
          };
      return code.withDescription(e.getMessage()).asRuntimeException();
    }
    if (t instanceof org.jooq.exception.DataAccessException || t instanceof java.sql.SQLException) {
      log.warn("{}: database error: {}", context, t.toString());
      return Status.UNAVAILABLE
          .withDescription(context + ": the database is not reachable right now; retry")
          .asRuntimeException();
    }
    log.error("{}: unexpected error", context, t);
    return Status.INTERNAL.withDescription(context + ": internal error").asRuntimeException();
  }
}
