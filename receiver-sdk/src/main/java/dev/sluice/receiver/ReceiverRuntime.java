package dev.sluice.receiver;

import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * What every endpoint of one receiver shares: its id, the connect and gRPC callback threads, the
 * counters and the flags set by close() and abort().
 *
 * @param receiverId for logs
 * @param connectThread opens every endpoint's streams (opening never blocks, so one is enough)
 * @param callbackThread runs every stream's inbound callbacks
 * @param stats the receiver's counters
 * @param silenced set by abort(): nothing may be written from then on
 * @param closing true once close() or abort() began
 * @param streamsChanged called (outside any endpoint lock) when a stream got subscribed or ended
 * @param notices tells the observers of answers and streams' ends
 * @param extender sends deadline extensions and matches their answers
 */
record ReceiverRuntime(
    String receiverId,
    ScheduledExecutorService connectThread,
    Executor callbackThread,
    StatsCounters stats,
    AtomicBoolean silenced,
    BooleanSupplier closing,
    Runnable streamsChanged,
    ObserverNotices notices,
    Extender extender) {}
