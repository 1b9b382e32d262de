package dev.sluice.manager.channel;

/**
 * The header names every channel message carries, so that consumers can deduplicate (a publish may
 * be repeated after a crash between the broker's confirm and the ack; it is the event's next
 * attempt, with the same shard, queue and id and the next attempt) and see when the event was due.
 */
public final class ChannelHeaders {
  public static final String SHARD = "sluice-shard";
  public static final String QUEUE = "sluice-queue";
  public static final String ID = "sluice-id";
  public static final String ATTEMPT = "sluice-attempt";
  public static final String TENANT = "sluice-tenant";

  /** When the event was due: ns since the epoch, decimal. */
  public static final String DUE_NS = "sluice-due-ns";

  /**
   * An ordered queue's event's ordering key, as receivers see it (a number in decimal, a string as
   * it is, bytes as {@code 0x} and their hex, "" for {@code ordering=queue}); absent when the queue
   * is not ordered or the key is NULL.
   */
  public static final String ORDERING_KEY = "sluice-ordering-key";

  /**
   * A group's completion event (README, "Event groups"): the group's key, and its children acked,
   * dead and cancelled (decimal); absent on every other event.
   */
  public static final String GROUP_KEY = "sluice-group-key";

  public static final String GROUP_ACKED = "sluice-group-acked";
  public static final String GROUP_DEAD = "sluice-group-dead";
  public static final String GROUP_CANCELLED = "sluice-group-cancelled";

  private ChannelHeaders() {}
}
