package dev.sluice.db.store;

import java.util.Map;
import java.util.Set;

/**
 * What {@link EventStore#fireAsPolled} did. An id in none of these was not fired because its row is
 * gone or no longer pending at the polled epoch (acked, cancelled, fired elsewhere).
 *
 * @param deadlineNs the ack deadline written to the fired rows' {@code time_next}
 * @param fired the fired rows, by id, with their columns as they are now (what to send)
 * @param locked rows another transaction holds locked: skipped, still pending, to be tried again
 * @param changed rows changed since the poll (rescheduled): not fired, to be read again
 * @param dead rows made dead because they cannot be fired (epoch at its column's maximum, a column
 *     the driver cannot read), with the reason recorded
 */
public record FireResult(
    long deadlineNs,
    Map<Long, EventRow> fired,
    Set<Long> locked,
    Set<Long> changed,
    Set<Long> dead) {}
