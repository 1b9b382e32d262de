package dev.sluice.receiver;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One endpoint's sender thread loop: takes whatever completions piled up in that endpoint's outbox,
 * waits for a subscribed stream to the same endpoint and writes them as one Acks and one Nacks
 * message. Acks never cross to another endpoint: only the manager that sent an event can apply its
 * ack. While the endpoint is down they wait here; if the stream turned out to be gone, the same
 * batch goes out on the endpoint's next stream, whichever of its streams the events came from: the
 * manager decides whether an (id, epoch) still applies. One thread per endpoint, so a manager that
 * is down never holds up the acks of the others.
 */
final class AckSender implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(AckSender.class);

  /** Caps one message well under gRPC's default 4 MiB limit, even with long nack reasons. */
  static final int MAX_BATCH = 1000;

  private static final Duration WAIT_SLICE = Duration.ofSeconds(1);

  private final Outbox outbox;
  private final Connector connector;
  private final AtomicBoolean silenced;
  private final AtomicBoolean stopped;

  AckSender(Outbox outbox, Connector connector, AtomicBoolean silenced, AtomicBoolean stopped) {
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
        }
      }
    } catch (InterruptedException e) {
      // close() or abort() ended the receiver: exit quietly.
    }
  }

  private boolean send(List<Completion> batch) throws InterruptedException {
    StreamSession session = connector.awaitSubscribed(WAIT_SLICE);
    if (session == null) {
      return false;
    }
    // Whatever piled up while we waited for the stream goes out in the same messages.
    outbox.drainInto(batch, MAX_BATCH);
    return session.sendCompletions(batch);
  }
}
