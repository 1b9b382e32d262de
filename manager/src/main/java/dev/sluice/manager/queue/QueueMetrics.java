package dev.sluice.manager.queue;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

/** The counters of one queue on one shard, named as Prometheus users expect ({@code sluice_*}). */
public final class QueueMetrics {
  final Counter dispatched;
  final Counter acked;
  final Counter nacked;
  final Counter retried;
  final Counter dead;
  final Counter timeouts;
  final Counter released;
  final Counter purged;
  final Counter dbErrors;
  final Counter staleAcks;
  final Counter polledRows;
  final Counter casMisses;

  public QueueMetrics(MeterRegistry r, String shard, String queue) {
    Tags t = Tags.of("shard", shard, "queue", queue);
    dispatched = r.counter("sluice_events_dispatched", t);
    acked = r.counter("sluice_events_acked", t);
    nacked = r.counter("sluice_events_nacked", t);
    retried = r.counter("sluice_events_retried", t);
    dead = r.counter("sluice_events_dead", t);
    timeouts = r.counter("sluice_events_ack_timeouts", t);
    released = r.counter("sluice_events_released", t);
    purged = r.counter("sluice_events_purged", t);
    dbErrors = r.counter("sluice_db_errors", t);
    staleAcks = r.counter("sluice_acks_stale", t);
    polledRows = r.counter("sluice_poll_rows", t);
    casMisses = r.counter("sluice_fire_cas_misses", t);
  }
}
