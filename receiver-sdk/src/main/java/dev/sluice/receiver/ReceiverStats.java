package dev.sluice.receiver;

/**
 * A point-in-time snapshot of a receiver's counters.
 *
 * @param received events delivered to this receiver (across all its streams)
 * @param acked handlings that ended in an ack (handler returned normally)
 * @param nacked handlings that ended in a nack (handler threw, or the event was refused at
 *     shutdown)
 * @param ackOk AckResults with status OK
 * @param ackStale AckResults with status STALE (the attempt no longer applied)
 * @param ackUnknown AckResults with status UNKNOWN (no such event)
 * @param reconnects streams opened to replace a stream that ended (summed over the endpoints)
 * @param shardChanges ShardChange notices received: a manager started or stopped dispatching a
 *     shard of the queue on one of this receiver's streams
 * @param inFlight events received whose handling has not finished yet
 * @param streamsConnected endpoints whose stream is subscribed right now (of the targets given)
 */
public record ReceiverStats(
    long received,
    long acked,
    long nacked,
    long ackOk,
    long ackStale,
    long ackUnknown,
    long reconnects,
    long shardChanges,
    int inFlight,
    int streamsConnected) {}
