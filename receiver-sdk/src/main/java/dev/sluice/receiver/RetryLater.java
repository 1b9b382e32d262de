package dev.sluice.receiver;

import java.time.Duration;
import java.util.Objects;

/**
 * Thrown by an {@link EventHandler} to nack an event and ask the manager to retry it no sooner than
 * {@link #delay()} from now. A zero delay means "use the queue's backoff".
 */
public class RetryLater extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Duration delay;

  public RetryLater(Duration delay, String reason) {
    super(reason);
    Objects.requireNonNull(delay, "delay");
    if (delay.isNegative()) {
      throw new IllegalArgumentException("delay must be >= 0, was " + delay);
    }
    this.delay = delay;
  }

  public Duration delay() {
    return delay;
  }

  /** The reason sent to the manager with the nack. */
  public String reason() {
    return getMessage() == null ? "" : getMessage();
  }
}
