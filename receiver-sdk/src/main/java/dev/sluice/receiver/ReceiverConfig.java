package dev.sluice.receiver;

import io.grpc.ManagedChannel;
import java.time.Duration;

/** Validated settings of one receiver, as built by {@link SluiceReceiverBuilder}. */
record ReceiverConfig(
    String target,
    ManagedChannel channel,
    String queue,
    String receiverId,
    int concurrency,
    int maxInFlight,
    EventHandler handler,
    Duration reconnectMin,
    Duration reconnectMax,
    Duration shutdownTimeout) {}
