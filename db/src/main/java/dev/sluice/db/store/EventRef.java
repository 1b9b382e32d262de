package dev.sluice.db.store;

/** One attempt of one event: the (id, epoch) pair every state change compares and sets. */
public record EventRef(long id, long epoch) {}
