package dev.sluice.core;

/** A request the engine cannot carry out, with the reason a caller should read. */
public final class EngineException extends RuntimeException {
  /** What kind of refusal, for the transport to map (gRPC status codes, HTTP statuses). */
  public enum Kind {
    INVALID_ARGUMENT,
    NOT_FOUND,
    FAILED_PRECONDITION
  }

  private final Kind kind;

  public EngineException(Kind kind, String message) {
    super(message);
    this.kind = kind;
  }

  public Kind kind() {
    return kind;
  }
}
