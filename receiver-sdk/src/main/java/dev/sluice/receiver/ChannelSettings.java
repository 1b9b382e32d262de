package dev.sluice.receiver;

import io.grpc.ManagedChannelBuilder;
import java.util.concurrent.TimeUnit;

/**
 * What the receiver sets on the channels it makes itself (a caller's own channel is used as given,
 * so it should set the same).
 *
 * <ul>
 *   <li>The largest message it accepts: 4 MiB, gRPC's default, set explicitly because the manager
 *       sizes its event messages to it (at most 4 MiB each, whatever the number of events; an event
 *       is at most the queue's max_event_bytes, itself below 4 MiB). The two must agree: a smaller
 *       limit here would break the stream on a large batch.
 *   <li>Keepalive: a ping after 10 s without reads (gRPC's floor), the connection closed if it is
 *       not answered within 5 s, also while no stream is open: a manager host that vanished (no FIN
 *       or RST) is left within about 15 s and the receiver reconnects, instead of waiting on a
 *       silent connection. The manager permits pings every 5 s.
 * </ul>
 */
final class ChannelSettings {
  static final int MAX_INBOUND_MESSAGE_BYTES = 4 * 1024 * 1024;
  static final long KEEPALIVE_TIME_SECONDS = 10;
  static final long KEEPALIVE_TIMEOUT_SECONDS = 5;

  private ChannelSettings() {}

  static ManagedChannelBuilder<?> apply(ManagedChannelBuilder<?> b) {
    return b.maxInboundMessageSize(MAX_INBOUND_MESSAGE_BYTES)
        .keepAliveTime(KEEPALIVE_TIME_SECONDS, TimeUnit.SECONDS)
        .keepAliveTimeout(KEEPALIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS)
        .keepAliveWithoutCalls(true);
  }
}
