package dev.sluice.receiver;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One endpoint's sender thread loop: takes whatever completions piled up in that endpoint's outbox,
 * waits for a subscribed stream to the same endpoint and writes them as one Acks and one Nacks
 * message. If the stream turned out to be gone, the same batch goes out on the endpoint's next
 * stream, whichever of its streams the events came from: the manager decides whether an (id, epoch)
 * still applies. One thread per endpoint, so a manager that is down never holds up the acks of the
 * others.
 *
 * <p>A manager that stays unreachable for {@link #REROUTE_AFTER} (killed, restarting) would leave
 * its acks waiting while the shard's new leader redelivers those events after {@code ack_wait}. So
 * they are handed to another endpoint whose stream is up: every manager configured with a shard
 * applies acks and nacks for it through the same compare-and-set on (id, epoch), leading it or not,
 * so the ack takes effect and the event is not delivered again. (A manager without that shard in
 * its configuration answers UNKNOWN: the event is then redelivered after {@code ack_wait}, as it
 * would have been anyway.)
 */
final class AckSender implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(AckSender.class);

  /** Caps one message well under gRPC's default 4 MiB limit, even with long nack reasons. */
  static final int MAX_BATCH = 1000;

  private static final Duration WAIT_SLICE = Duration.ofSeconds(1);

  /** How long an endpoint may be unreachable before its acks go through another one. */
  static final Duration REROUTE_AFTER = WAIT_SLICE;

  private final Outbox outbox;
  private final Connector connector;
  private final AtomicBoolean silenced;
  private final AtomicBoolean stopped;
  private final UnaryOperator<Outbox> fallback;
  private final String endpoint;
  private boolean rerouting;

  /**
   * @param fallback given this endpoint's outbox, the outbox of another endpoint whose stream is
   *     subscribed now, or null
   */
  AckSender(
      String endpoint,
      Outbox outbox,
      Connector connector,
      AtomicBoolean silenced,
      AtomicBoolean stopped,
      UnaryOperator<Outbox> fallback) {
    this.endpoint = endpoint;
    this.fallback = fallback;
    this.outbox = outbox;
    this.connector = connector;
    this.silenced = silenced;
    this.stopped = stopped;
  }

  @Override
  public void run() {
    try {
      while (!silenced.get() && !stopped.get()) {
        List<Completion> batch = outbox.takeBatch(MAX_BATCH);
        while (!send(batch)) {
          if (silenced.get() || stopped.get()) {
            log.debug("dropping {} unsent acks/nacks: receiver stopped", batch.size());
            return;
          }
          Outbox other = fallback.apply(outbox);
          if (other != null) {
            reroute(batch, other);
            break;
          }
        }
      }
    } catch (InterruptedException e) {
      // close() or abort() ended the receiver: exit quietly.
    }
  }

  private boolean send(List<Completion> batch) throws InterruptedException {
    StreamSession session = connector.awaitSubscribed(REROUTE_AFTER);
    if (session == null) {
      return false;
    }
    // Whatever piled up while we waited for the stream goes out in the same messages.
    outbox.drainInto(batch, MAX_BATCH);
    boolean sent = session.sendCompletions(batch);
    if (sent && rerouting) {
      rerouting = false;
      log.info("manager {} is reachable again: its acks/nacks go to it again", endpoint);
    }
    return sent;
  }

  /**
   * Moves the batch, and whatever else waits here, to another endpoint's outbox: that endpoint now
   * owes the answers (added there before they leave here, so that close() never sees both empty).
   */
  private void reroute(List<Completion> batch, Outbox other) {
    outbox.drainInto(batch, Integer.MAX_VALUE);
    for (Completion c : batch) {
      other.add(c);
    }
    outbox.answered(batch.size());
    if (!rerouting) {
      rerouting = true;
      log.info(
          "manager {} unreachable for {} ms: sending its acks/nacks through another manager ({}"
              + " now; every manager applies them for its shards through the same CAS)",
          endpoint,
          REROUTE_AFTER.toMillis(),
          batch.size());
    } else {
      log.debug("manager {} still unreachable: {} acks/nacks rerouted", endpoint, batch.size());
    }
  }
}
