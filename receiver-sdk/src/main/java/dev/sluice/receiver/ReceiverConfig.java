package dev.sluice.receiver;

import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.List;

/**
 * Validated settings of one receiver, as built by {@link SluiceReceiverBuilder}. Exactly one of
 * {@code targets} (non-empty, distinct) and {@code channel} is set; {@code keyRange} is checked;
 * {@code handlerThreads} is null for the SDK's own (platform) handler threads. {@code handler} has
 * the {@code observers} around it already; they are here for what they see beside the handling.
 */
record ReceiverConfig(
    List<String> targets,
    ManagedChannel channel,
    String queue,
    String receiverId,
    int concurrency,
    int maxInFlight,
    String keyRange,
    EventHandler handler,
    Duration reconnectMin,
    Duration reconnectMax,
    Duration shutdownTimeout,
    ChannelSecurity security,
    java.util.concurrent.ThreadFactory handlerThreads,
    List<ReceiverObserver> observers,
    boolean autoExtend,
    double autoExtendAt) {}
