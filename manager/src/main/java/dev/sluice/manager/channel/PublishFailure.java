package dev.sluice.manager.channel;

/**
 * A broker did not take a message: it refused it, could not route it, did not confirm it in time,
 * or could not be reached. The message is the broker's reason as an operator should read it; it is
 * recorded as the event's dead reason on its last attempt.
 */
public final class PublishFailure extends RuntimeException {
  private final boolean brokerDown;

  public PublishFailure(String reason, boolean brokerDown, Throwable cause) {
    super(reason, cause);
    this.brokerDown = brokerDown;
  }

  public PublishFailure(String reason, boolean brokerDown) {
    this(reason, brokerDown, null);
  }

  /**
   * The broker could not be reached (or not confirm anything): the channel is down, not this
   * message wrong. The queue waits and says so rather than spending the event's attempts.
   */
  public boolean brokerDown() {
    return brokerDown;
  }
}
