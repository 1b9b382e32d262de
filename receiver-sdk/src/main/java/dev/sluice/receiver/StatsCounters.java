package dev.sluice.receiver;

import dev.sluice.proto.v1.AckStatus;
import java.util.concurrent.atomic.AtomicLong;

/** The live counters behind {@link ReceiverStats}; updated from any thread. */
final class StatsCounters {
  final AtomicLong received = new AtomicLong();
  final AtomicLong acked = new AtomicLong();
  final AtomicLong nacked = new AtomicLong();
  final AtomicLong ackOk = new AtomicLong();
  final AtomicLong ackStale = new AtomicLong();
  final AtomicLong ackUnknown = new AtomicLong();
  final AtomicLong reconnects = new AtomicLong();
  final AtomicLong shardChanges = new AtomicLong();

  void completed(Completion completion) {
    (completion.ack() ? acked : nacked).incrementAndGet();
  }

  void result(AckStatus status) {
    switch (status) {
      case ACK_STATUS_OK -> ackOk.incrementAndGet();
      case ACK_STATUS_STALE -> ackStale.incrementAndGet();
      case ACK_STATUS_UNKNOWN -> ackUnknown.incrementAndGet();
      default -> {
        // UNSPECIFIED or a status newer than this SDK: answered, but not counted in any bucket.
      }
    }
  }

  ReceiverStats snapshot(int inFlight, int streamsConnected) {
    return new ReceiverStats(
        received.get(),
        acked.get(),
        nacked.get(),
        ackOk.get(),
        ackStale.get(),
        ackUnknown.get(),
        reconnects.get(),
        shardChanges.get(),
        inFlight,
        streamsConnected);
  }
}
