package dev.sluice.receiver;

import java.time.Instant;

/**
 * How {@link ReceivedEvent#extend} fails when the manager refused: the attempt is stale (acked,
 * released or fired again: this handler's ack will be stale too), unknown, or at the queue's
 * max_hold (the deadline stays {@link #deadline()}).
 */
public class ExtensionRefused extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Why the manager refused. */
  public enum Reason {
    STALE,
    UNKNOWN,
    LIMIT
  }

  private final Reason reason;
  private final transient Instant deadline;

  public ExtensionRefused(Reason reason, Instant deadline, String message) {
    super(message);
    this.reason = reason;
    this.deadline = deadline;
  }

  public Reason reason() {
    return reason;
  }

  /** The deadline as it stays (LIMIT), or null. */
  public Instant deadline() {
    return deadline;
  }
}
