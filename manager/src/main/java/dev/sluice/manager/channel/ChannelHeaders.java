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

  private ChannelHeaders() {}
}
