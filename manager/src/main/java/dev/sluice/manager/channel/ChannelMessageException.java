package dev.sluice.manager.channel;

import dev.sluice.core.outlet.Delivery;

/**
 * An event that cannot become a message for its channel, whatever the broker does: its row is bad
 * (its target column names a topic or routing key the channel does not allow, a key or body column
 * is gone from it, a JSON column holds no JSON). Publishing it again will not help. The message
 * names the queue, shard, event and attempt, the column and the value.
 */
public final class ChannelMessageException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient Delivery delivery;

  public ChannelMessageException(Delivery delivery, String reason) {
    super(delivery.describe() + ": " + reason);
    this.delivery = delivery;
  }

  /** The event that could not be published. */
  public Delivery delivery() {
    return delivery;
  }
}
