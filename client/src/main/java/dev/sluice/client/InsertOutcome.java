package dev.sluice.client;

/**
 * What {@link EventProducer#insertUnique} did: inserted a new event ({@code duplicate} false), or
 * found the event that holds the key ({@code duplicate} true, nothing inserted). Either way {@code
 * id} is the event's id on the shard the statement ran on.
 *
 * @param id the new event's id, or the existing event's
 * @param duplicate true when a row held the key and nothing was inserted
 */
public record InsertOutcome(long id, boolean duplicate) {}
