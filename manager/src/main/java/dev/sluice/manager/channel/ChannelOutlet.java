package dev.sluice.manager.channel;

import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.Nack;
import dev.sluice.core.outlet.Outlet;
import dev.sluice.core.outlet.OutletOutcomes;
import dev.sluice.db.store.EventRef;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A broker channel as the outlet of one queue on one shard: each delivered event is published, and
 * becomes {@code acked} only once the broker confirmed it.
 *
 * <h2>Outcomes</h2>
 *
 * <ul>
 *   <li>Confirmed: acked.
 *   <li>Refused (too large, unroutable, not allowed, a topic that does not exist, too few in-sync
 *       replicas, a full queue that rejects publishes): nacked with the broker's reason — back to
 *       pending after the queue's backoff, dead after max_attempts with that reason recorded.
 *   <li>The broker is down (unreachable, nothing confirmed in time): released without spending the
 *       event's life, and the channel stops taking events — the queue waits, visibly ({@link
 *       #down}, the status page, {@code sluice_channel_up}) — except one at a time, which probes
 *       the broker; the first confirm opens it again.
 *   <li>A row the configuration does not allow (its target column names a destination not in {@code
 *       allowed_targets}, say): nacked with the reason, without a publish.
 * </ul>
 *
 * <h2>Threads</h2>
 *
 * {@link #deliver} and the credit methods run on the queue's dispatcher thread (one shard: this
 * outlet is attached to one queue manager). Publish outcomes arrive on the publisher's threads and
 * go back through {@link OutletOutcomes}, which queues them for the dispatcher; the counters here
 * are atomics: the credits the core holds, and the publishes not yet answered, each at most
 * max_in_flight.
 */
final class ChannelOutlet implements Outlet {
  private static final Logger log = LoggerFactory.getLogger(ChannelOutlet.class);
  private static final AtomicLong IDS = new AtomicLong(1L << 40);

  private final ChannelBinding binding;
  private final ChannelMessages messages;
  private final ChannelPublisher publisher;
  private final OutletOutcomes outcomes;
  private final ChannelStats stats;
  private final String queue;
  private final String shard;
  private final int maxInFlight;
  private final long streamId = IDS.incrementAndGet();
  private final AtomicInteger inFlight = new AtomicInteger();

  /**
   * Publishes handed to the publisher whose future has not completed. Usually what {@link
   * #inFlight} counts; but the core gives a credit back when an event's ack deadline passes, and a
   * publish can still be pending then: the credits free are those of neither, so the broker never
   * has more than max_in_flight unconfirmed publishes of this outlet.
   */
  private final AtomicInteger publishing = new AtomicInteger();

  private volatile boolean closed;

  ChannelOutlet(
      ChannelBinding binding,
      ChannelPublisher publisher,
      OutletOutcomes outcomes,
      ChannelStats stats,
      String queue,
      String shard) {
    this.binding = binding;
    this.messages = new ChannelMessages(binding);
    this.publisher = publisher;
    this.outcomes = outcomes;
    this.stats = stats;
    this.queue = queue;
    this.shard = shard;
    this.maxInFlight = binding.channel().maxInFlight();
  }

  @Override
  public String id() {
    return "channel " + binding.channel().name();
  }

  @Override
  public long streamId() {
    return streamId;
  }

  @Override
  public int maxInFlight() {
    return maxInFlight;
  }

  /** While the broker is down: one publish at a time (the probe), else none. */
  private int limit() {
    return stats.down() ? 1 : maxInFlight;
  }

  @Override
  public int free() {
    return closed ? 0 : Math.max(0, limit() - Math.max(inFlight.get(), publishing.get()));
  }

  @Override
  public boolean tryReserve(String workClass) {
    while (true) {
      int n = inFlight.get();
      if (closed || Math.max(n, publishing.get()) >= limit()) {
        return false;
      }
      if (inFlight.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  @Override
  public void unreserve(String workClass) {
    inFlight.decrementAndGet();
  }

  @Override
  public boolean closed() {
    return closed;
  }

  @Override
  public void close(String why) {
    closed = true;
  }

  /** Publishes each event; never blocks (the publisher queues the network work). */
  @Override
  public void deliver(String shardName, List<Delivery> batch) {
    for (Delivery d : batch) {
      EventRef ref = new EventRef(d.id(), d.epoch());
      OutboundMessage m;
      try {
        m = messages.toMessage(d);
      } catch (ChannelMessageException | IllegalArgumentException bad) {
        stats.refused(bad.getMessage());
        log.warn("{}: not published: {}", d.describe(), bad.getMessage());
        outcomes.nacked(this, List.of(new Nack(ref, 0, bad.getMessage())));
        continue;
      }
      publishing.incrementAndGet();
      publisher
          .publish(m)
          .whenComplete(
              (ok, err) -> {
                publishing.decrementAndGet();
                if (err == null) {
                  stats.published();
                  outcomes.acked(this, List.of(ref));
                  return;
                }
                Throwable cause = err instanceof CompletionException ? err.getCause() : err;
                String reason = cause == null ? String.valueOf(err) : cause.getMessage();
                if (cause instanceof PublishFailure f && f.brokerDown()) {
                  stats.brokerDown(reason);
                  outcomes.released(this, List.of(ref), "broker down: " + reason);
                } else {
                  stats.refused(reason);
                  log.debug("{}: publish failed: {}", d.describe(), reason);
                  outcomes.nacked(this, List.of(new Nack(ref, 0, reason)));
                }
              });
    }
  }

  @Override
  public String toString() {
    return id() + " for queue " + queue + " on shard " + shard;
  }
}
