package dev.sluice.core.outlet;

/**
 * What became of an event group's children, delivered with its completion event (README, "Event
 * groups"): counted once, when the group completed.
 *
 * @param key the group's key
 * @param acked children acked
 * @param dead children dead
 * @param cancelled children cancelled
 */
public record GroupOutcome(String key, long acked, long dead, long cancelled) {}
