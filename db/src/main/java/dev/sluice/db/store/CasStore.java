package dev.sluice.db.store;

/**
 * What every JDBC port of one queue table shares: the table's compare-and-set statements ({@link
 * EventCas}), and through them the queue's name and the server's clock.
 */
abstract class CasStore implements QueueStore {
  final EventCas c;

  CasStore(EventCas cas) {
    this.c = cas;
  }

  @Override
  public final String queue() {
    return c.q.name();
  }

  @Override
  public final long serverTimeNs() {
    return c.serverTimeNs();
  }
}
