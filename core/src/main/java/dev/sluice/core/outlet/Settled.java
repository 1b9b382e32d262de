package dev.sluice.core.outlet;

import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;

/**
 * What the database made of an outlet's ack or nack.
 *
 * @param outcome whether the compare-and-set applied, or why not
 * @param result what the event became when it applied; null when it did not
 */
public record Settled(EventRef ref, CasOutcome outcome, Result result) {
  public enum Result {
    ACKED,
    RETRY,
    DEAD
  }
}
