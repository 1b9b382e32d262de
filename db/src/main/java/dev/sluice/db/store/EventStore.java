package dev.sluice.db.store;

/**
 * Every port of one queue table at once: what a queue manager is given for its table (it hands each
 * part only the port that part uses), and what tools and tests use. Callers hold the narrow port
 * they need: {@link DispatchStore} (poll, fire, ack, release, orphans, dead rows), {@link
 * OrderingStore} (key holds and turns), {@link OperatorStore} (show, cancel, dead events, halted
 * keys) or {@link MaintenanceStore} (purge, counts).
 */
public interface EventStore extends DispatchStore, OrderingStore, OperatorStore, MaintenanceStore {}
