package dev.sluice.core.outlet;

import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;

/**
 * What the database made of an outlet's ack or nack.
 *
 * @param ack whether it was an ack (else a nack or release)
 * @param outcome whether the compare-and-set applied, or why not
 */
public record Settled(EventRef ref, boolean ack, CasOutcome outcome) {}
