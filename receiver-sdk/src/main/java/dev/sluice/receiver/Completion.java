package dev.sluice.receiver;

import com.google.protobuf.ByteString;

/**
 * The outcome of one handling, waiting to be sent to the manager: an ack, or a nack with its retry
 * delay (0 = the queue's backoff) and reason, or a snooze (a nack that spends no attempt). A {@code
 * committed} ack was already applied by the handler in its own transaction ({@link
 * TransactionalAck}): the manager is only told to let go.
 */
record Completion(
    long id,
    long epoch,
    String shard,
    boolean ack,
    long retryAfterMs,
    String reason,
    ByteString token,
    boolean committed,
    boolean snooze) {
  /** Reasons travel in every nack; keep a runaway exception message from bloating the stream. */
  static final int MAX_REASON_CHARS = 1024;

  static Completion ack(long id, long epoch, String shard) {
    return new Completion(id, epoch, shard, true, 0, "", ByteString.EMPTY, false, false);
  }

  static Completion committed(long id, long epoch, String shard) {
    return new Completion(id, epoch, shard, true, 0, "", ByteString.EMPTY, true, false);
  }

  static Completion nack(long id, long epoch, String shard, long retryAfterMs, String reason) {
    return new Completion(
        id,
        epoch,
        shard,
        false,
        Math.max(0, retryAfterMs),
        cut(reason),
        ByteString.EMPTY,
        false,
        false);
  }

  /** A snooze: back to pending after {@code afterMs} (at least 1) without spending an attempt. */
  static Completion snooze(long id, long epoch, String shard, long afterMs, String reason) {
    return new Completion(
        id, epoch, shard, false, Math.max(1, afterMs), cut(reason), ByteString.EMPTY, false, true);
  }

  private static String cut(String reason) {
    String r = reason == null ? "" : reason;
    return r.length() > MAX_REASON_CHARS ? r.substring(0, MAX_REASON_CHARS) : r;
  }

  /**
   * The same completion carrying the event's delivery token, which a manager with authentication on
   * requires to apply it.
   */
  Completion withToken(ByteString t) {
    return new Completion(id, epoch, shard, ack, retryAfterMs, reason, t, committed, snooze);
  }

  Ref ref() {
    return new Ref(id, epoch, shard);
  }

  /**
   * (id, epoch, shard) of one delivery attempt: how AckResults are matched to what was sent. Ids
   * are unique per shard's table only, so the shard is part of the key.
   */
  record Ref(long id, long epoch, String shard) {}
}
