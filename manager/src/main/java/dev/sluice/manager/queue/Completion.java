package dev.sluice.manager.queue;

import dev.sluice.db.store.EventRef;

/**
 * A change to a fired event on its way to the database through the {@link AckBatcher}: an ack, or a
 * release back to pending (nack, timeout, broken stream, orphan) or to dead.
 *
 * @param from the stream to answer, or null when nobody waits for an answer
 * @param reason why a release happens, for logs and metrics
 */
record Completion(
    Kind kind, EventRef ref, long retryAtNs, boolean dead, ReceiverStream from, String reason) {
  enum Kind {
    ACK,
    RELEASE
  }

  static Completion ack(EventRef ref, ReceiverStream from) {
    return new Completion(Kind.ACK, ref, 0, false, from, "ack");
  }

  static Completion release(
      EventRef ref, long retryAtNs, boolean dead, ReceiverStream from, String reason) {
    return new Completion(Kind.RELEASE, ref, retryAtNs, dead, from, reason);
  }
}
